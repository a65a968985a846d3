"""How a run ended, as data: on ``AgentEnd``, on ``Agent.last_outcome``, and what an
extension's ``finish`` learns. Nobody needs to read the marker text written for the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .approval import PendingApproval
from .errors import ErrorKind
from .messages import AgentMessage, StopReason, last_assistant


class RunEnd(StrEnum):
    """How a run ended."""

    COMPLETED = "completed"
    """The model stopped on its own (its last reply's ``stop_reason`` says how)."""
    STOPPED = "stopped"
    """A limit, a budget, a loop or an extension stopped it (``cause`` says which)."""
    REJECTED = "rejected"
    """An input filter or ``on_input`` refused the prompt (``reason``)."""
    CANCELLED = "cancelled"
    FAILED = "failed"
    """The model call failed (``error_kind``), or a required extension failed the run
    (``extension``), or the run ended with an exception (``reason``)."""
    PAUSED = "paused"
    """A hook deferred tool calls: the run waits for a resume (``pending``)."""


class StopCause(StrEnum):
    """What stopped a run (``RunEnd.STOPPED``)."""

    TURN_LIMIT = "turn_limit"
    """``ExecutionLimits.max_turns``."""
    TOKEN_LIMIT = "token_limit"
    """``ExecutionLimits.max_total_tokens``."""
    TIME_LIMIT = "time_limit"
    """``ExecutionLimits.max_duration`` (before a request, or cutting a turn short)."""
    BUDGET = "budget"
    """A spending limit (``Budget``, or an extension stopping with this cause)."""
    LOOP = "loop"
    """The model repeated the same tool calls after it was told they would not run."""
    EXTENSION = "extension"
    """An extension's ``before_model`` answered ``StopRun`` (``extension`` names it)."""


@dataclass(slots=True, kw_only=True, frozen=True)
class RunOutcome:
    """How a run ended: ``end``, and what goes with it.

    ``messages`` (the messages the run added) are filled for an extension's ``finish``;
    on ``AgentEnd.outcome`` and ``Agent.last_outcome`` they are left empty (they are the
    event's ``messages`` and what the run returned), so an event carries them once.
    """

    end: RunEnd
    cause: StopCause | None = None
    """What stopped the run, when it was ``STOPPED``."""
    reason: str | None = None
    """Why, in words: the limit or budget reached, the rejection, the failure."""
    extension: str | None = None
    """The extension that failed or stopped the run, when one did."""
    error_kind: ErrorKind | None = None
    """The failure's kind, when the run ``FAILED`` on a model call (``OTHER`` for an
    extension's failure)."""
    stop_reason: StopReason | None = None
    """The stop reason of the run's last reply, if it made one (taken from ``messages``
    when not given)."""
    messages: Sequence[AgentMessage] = field(default_factory=tuple[AgentMessage, ...])
    """The messages the run added (in ``finish``)."""
    pending: PendingApproval | None = None
    """What a paused run waits on."""

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))
        if self.stop_reason is None:
            reply = last_assistant(self.messages)
            if reply is not None:
                object.__setattr__(self, "stop_reason", reply.stop_reason)
