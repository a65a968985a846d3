"""How one run ends, recorded where it happens: the driver's stops, cancels and failures
each say so here, and ``AgentEnd`` carries the result (see ``RunOutcome``)."""

from __future__ import annotations

from dataclasses import replace

from yoagent.core._types.markers import CANCELLED_MARKER, stopped_marker
from yoagent.core._types.messages import last_assistant
from yoagent.core._types.outcome import RunEnd, RunOutcome, StopCause

from .state import RunState


class Ending:
    """One run's ending, as recorded so far (``None`` until something ends the run)."""

    __slots__ = ("outcome", "state")

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.outcome: RunOutcome | None = None

    def record(self, outcome: RunOutcome) -> None:
        """The run ends so: the latest ending wins, except over a failure. The stop reason
        of the run's last reply is filled in when ``outcome`` has none."""
        if self.outcome is not None and self.outcome.end is RunEnd.FAILED:
            return
        if outcome.stop_reason is None:
            reply = last_assistant(self.state.new_messages)
            if reply is not None:
                outcome = replace(outcome, stop_reason=reply.stop_reason)
        self.outcome = outcome

    def final(self) -> RunOutcome:
        """How the run ended: as recorded, else it completed."""
        if self.outcome is None:
            reply = last_assistant(self.state.new_messages)
            stop_reason = reply.stop_reason if reply is not None else None
            self.outcome = RunOutcome(end=RunEnd.COMPLETED, stop_reason=stop_reason)
        return self.outcome

    def stop(self, cause: StopCause, reason: str, *, extension: str | None = None) -> None:
        """The run stops: ``[Agent stopped: <reason>]`` for the model, ``cause`` for code."""
        self.state.append_marker(stopped_marker(reason))
        self.record(RunOutcome(end=RunEnd.STOPPED, cause=cause, reason=reason, extension=extension))

    def by_token(self, *, mark: bool) -> None:
        """The run's cancel token ended it: the wall-time limit (always marked), or a
        cancel (marked when ``mark``: the model had replied, so the history says it stopped)."""
        state = self.state
        limit = state.tracker.limits.max_duration
        if state.timed_out and limit is not None:
            self.stop(StopCause.TIME_LIMIT, f"time limit reached ({limit:.0f}s)")
            return
        if mark:
            state.append_marker(CANCELLED_MARKER)
        self.record(RunOutcome(end=RunEnd.CANCELLED))
