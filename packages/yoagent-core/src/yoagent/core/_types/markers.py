"""The texts the loop and compaction write into a history on their own, and how to tell them.

One home for them: the loop writes the stop markers, compaction the summaries and its
marker, and both (and tool middleware, and the CLI) must recognise every one of them as
not the user's words.
"""

from __future__ import annotations

from .messages import AgentMessage, UserMessage

AGENT_STOPPED_PREFIX = "[Agent stopped: "
"""Every marker the loop appends when it stops a run on its own starts with this."""
CANCELLED_MARKER = "[Agent stopped: cancelled]"
LOOP_ABORT_PREFIX = "[Agent stopped: loop detected"
SUMMARY_PREFIX = "[Summary of earlier conversation]"
"""Level 2's summary message starts with this (a loop-injected user message)."""
COMPACTION_MARKER = "[Context compacted: "
"""Level 3's marker message starts with this (a loop-injected user message)."""
LOOP_NUDGE_PREFIX = "[Loop detected: "
"""The loop's note to a model repeating the same tool calls, before it stops the run."""
EXTENSION_MESSAGE_PREFIX = "[Extension message: "
"""An extension's ``on_stop`` continuation: ``[Extension message: <name>] <text>``."""
EXTENSION_FAILED_PREFIX = "[Extension failed: "
"""The error of a run a required extension failed: ``[Extension failed: <name>] <why>``."""


def stopped_marker(reason: str) -> str:
    """The marker the loop appends when it stops a run on its own: ``[Agent stopped: <reason>]``
    (the model reads it; code reads ``RunOutcome`` instead)."""
    return f"{AGENT_STOPPED_PREFIX}{reason}]"


_INJECTED = (
    AGENT_STOPPED_PREFIX,
    SUMMARY_PREFIX,
    COMPACTION_MARKER,
    LOOP_NUDGE_PREFIX,
    EXTENSION_MESSAGE_PREFIX,
)


def is_loop_injected(message: AgentMessage) -> bool:
    """True for a user message the loop, compaction or an extension wrote (a stop marker, a
    summary, a compaction marker, a loop nudge, an extension's message), not the user."""
    return isinstance(message, UserMessage) and message.text.startswith(_INJECTED)


def is_compaction_message(message: AgentMessage) -> bool:
    """True for a summary or marker message written by compaction."""
    return isinstance(message, UserMessage) and message.text.startswith(
        (SUMMARY_PREFIX, COMPACTION_MARKER)
    )
