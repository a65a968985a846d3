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

_INJECTED = (AGENT_STOPPED_PREFIX, SUMMARY_PREFIX, COMPACTION_MARKER)


def is_loop_injected(message: AgentMessage) -> bool:
    """True for a user message the loop or compaction wrote (a stop marker, a summary, a
    compaction marker), not the user."""
    return isinstance(message, UserMessage) and message.text.startswith(_INJECTED)
