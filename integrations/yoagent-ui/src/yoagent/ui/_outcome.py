"""How a run ended, read from its events: the one place the endpoints decide it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from yoagent.core import (
    AGENT_STOPPED_PREFIX,
    CANCELLED_MARKER,
    AgentMessage,
    AssistantMessage,
    ErrorKind,
    PendingApproval,
    StopReason,
    Usage,
    UserMessage,
)

OutcomeKind = Literal["completed", "stopped", "rejected", "failed", "cancelled", "paused"]


@dataclass(slots=True, kw_only=True, frozen=True)
class Outcome:
    """How a run ended: ``kind``, a text for people (the error, the stop marker, the
    rejection), the failure's ``error_kind``, the ``pending`` calls of a pause, and the
    tokens every reply of the run used."""

    kind: OutcomeKind
    text: str = ""
    error_kind: ErrorKind | None = None
    pending: PendingApproval | None = None
    usage: Usage


def outcome_of(
    messages: Sequence[AgentMessage],
    *,
    paused: PendingApproval | None,
    rejected: str | None,
) -> Outcome:
    """The outcome of a run that added ``messages`` (its ``AgentEnd.messages``), given the
    ``RunPaused`` and ``InputRejected`` events it emitted."""
    # TODO(issue 26): read AgentEnd.outcome
    usage = Usage()
    for message in messages:
        if isinstance(message, AssistantMessage):
            usage = usage + message.usage
    if rejected is not None:
        return Outcome(kind="rejected", text=rejected, usage=usage)
    if paused is not None:
        return Outcome(kind="paused", pending=paused, usage=usage)
    last = messages[-1] if messages else None
    if isinstance(last, UserMessage) and last.text.startswith(AGENT_STOPPED_PREFIX):
        kind: OutcomeKind = "cancelled" if last.text == CANCELLED_MARKER else "stopped"
        return Outcome(kind=kind, text=last.text, usage=usage)
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            if message.stop_reason is StopReason.ERROR:
                return Outcome(
                    kind="failed",
                    text=message.error_message or "the run failed",
                    error_kind=message.error_kind or ErrorKind.OTHER,
                    usage=usage,
                )
            if message.stop_reason is StopReason.ABORTED:
                return Outcome(kind="cancelled", text=CANCELLED_MARKER, usage=usage)
            break
    return Outcome(kind="completed", usage=usage)
