"""What a failed or cancelled turn leaves behind in the conversation.

- A turn that fails (the model call errs) or is cancelled (Ctrl+C) **before the model
  produced anything** — no text, no thinking, no tool call — leaves nothing: its prompt
  and the error are taken out of the history (and are not saved), so the next prompt is
  never merged with the failed one. ``/retry`` (or ↑ at the prompt) sends it again.
- A turn that fails or is cancelled **after** the model produced something keeps what it
  produced (and the tool results, and core's "[Agent stopped: cancelled]" marker): the
  model sees on the next prompt what was already done. ``/retry`` sends the same prompt
  again as a new turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from yoagent.core import AgentMessage, AssistantMessage, StopReason

_FAILED = (StopReason.ERROR, StopReason.ABORTED)


@dataclass(slots=True, frozen=True)
class Settled:
    """The history after a turn, whether the turn failed, and whether it was dropped."""

    messages: list[AgentMessage]
    failed: bool
    dropped: bool


def _produced(message: AgentMessage) -> bool:
    return isinstance(message, AssistantMessage) and bool(message.content)


def settle(messages: Sequence[AgentMessage], start: int) -> Settled:
    """Apply the rule above to the turn that began at ``messages[start]``."""
    turn = messages[start:]
    replies = [m for m in turn if isinstance(m, AssistantMessage)]
    if not replies or replies[-1].stop_reason not in _FAILED:
        return Settled(list(messages), failed=False, dropped=False)
    if any(_produced(reply) for reply in replies):
        return Settled(list(messages), failed=True, dropped=False)
    return Settled(list(messages[:start]), failed=True, dropped=True)
