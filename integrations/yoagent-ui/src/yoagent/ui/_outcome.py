"""How a run ended, read from its events: the one place the endpoints decide it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from yoagent.core import (
    AgentMessage,
    AssistantMessage,
    ErrorKind,
    PendingApproval,
    RunEnd,
    RunOutcome,
    Usage,
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


def outcome_of(ended: RunOutcome | None, messages: Sequence[AgentMessage]) -> Outcome:
    """The outcome of a run that ended as ``ended`` (its ``AgentEnd.outcome``, or
    ``Agent.last_outcome``) after adding ``messages``: the tokens its replies used, and
    a text for people (the failure, the stop's or the rejection's reason)."""
    usage = Usage()
    for message in messages:
        if isinstance(message, AssistantMessage):
            usage = usage + message.usage
    if ended is None:  # the run raised before it could end: a failure
        return Outcome(
            kind="failed", text="the run failed", error_kind=ErrorKind.OTHER, usage=usage
        )
    kind: OutcomeKind = ended.end.value
    text = ended.reason or ("the run failed" if ended.end is RunEnd.FAILED else ended.end.value)
    return Outcome(
        kind=kind,
        text=text,
        error_kind=(ended.error_kind or ErrorKind.OTHER) if ended.end is RunEnd.FAILED else None,
        pending=ended.pending,
        usage=usage,
    )
