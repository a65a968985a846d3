"""DurableRun: a handle on one durable run, from any process with a launched runtime, and
what a finished run produced."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast

from dbos import DBOS, WorkflowHandleAsync
from yoagent.core import AgentMessage, ErrorKind, PendingApproval, RunFailedError, SessionStats

from ._approval import PENDING_EVENT, Decisions, Waiting, check_fit, deliver, read_announcement
from ._codec import load_messages, load_stats
from ._context import require_asyncio
from ._errors import RunNotFoundError, RunNotWaitingError
from ._events import DurableEvent, read_events
from ._runtime import current_runtime


class RunStatus(StrEnum):
    """Where a durable run stands."""

    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"
    """Paused for approval: send decisions with :meth:`DurableRun.resume`."""
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(slots=True, kw_only=True)
class RunResult:
    """What a finished durable run produced."""

    messages: list[AgentMessage]
    """The messages the run added (every segment, approvals included)."""
    history: list[AgentMessage]
    """The whole history at the end: the starting history and ``messages``."""
    stats: SessionStats = field(default_factory=SessionStats)
    pending: PendingApproval | None = None
    """Set when the run stopped waiting for approval (its timeout, with
    ``on_approval_timeout=None``): the history can still be resumed with
    ``Agent.resume``."""


async def get_run(run_id: str) -> DurableRun:
    """The handle of an existing run, from any process with a launched runtime (no
    durable agent needed): :class:`RunNotFoundError` when no run has this id."""
    require_asyncio("get_run")
    if await DBOS.get_workflow_status_async(run_id) is None:
        raise RunNotFoundError(run_id)
    return DurableRun(run_id)


@dataclass(slots=True, frozen=True)
class DurableRun:
    """A handle on one durable run, usable from any process with a launched runtime."""

    run_id: str
    _handle: WorkflowHandleAsync[Any] | None = field(default=None, compare=False, repr=False)
    """The workflow's own task when this process started it (its end is awaited, not
    polled for)."""

    async def result(self) -> RunResult:
        """Wait for the run's end; raises ``RunFailedError`` when it failed (like
        ``Agent.prompt``)."""
        require_asyncio("DurableRun.result")
        handle: WorkflowHandleAsync[Any] | None = self._handle
        if handle is None:
            handle = await DBOS.retrieve_workflow_async(self.run_id)
        polling = current_runtime().polling_interval
        data = cast("dict[str, Any]", await handle.get_result(polling_interval_sec=polling))
        messages = load_messages(data["messages"])
        failure = data["failure"]
        if failure is not None:
            raise RunFailedError(ErrorKind(failure["kind"]), failure["message"], messages)
        pending = data["pending"]
        return RunResult(
            messages=messages,
            history=load_messages(data["history"]),
            stats=load_stats(data["stats"]),
            pending=PendingApproval.from_json(pending) if pending is not None else None,
        )

    def events(
        self, *, offset: int = 0, max_wait: float | None = None
    ) -> AsyncIterator[DurableEvent]:
        """The run's events from ``offset`` on (every one but token deltas, tool progress and
        sub-agent events, which are live only), as they come, until the run ends; from any
        process, as often as needed. Reconnect after the last seen ``offset`` + 1."""
        require_asyncio("DurableRun.events")
        return read_events(self.run_id, offset=offset, max_wait=max_wait)

    async def status(self) -> RunStatus:
        """Where the run stands now."""
        require_asyncio("DurableRun.status")
        state = await self._state()
        if state is RunStatus.RUNNING and await self._waiting() is not None:
            return RunStatus.WAITING
        return state

    async def pending(self) -> PendingApproval | None:
        """The calls the run waits on for approval, or ``None`` when it does not wait."""
        require_asyncio("DurableRun.pending")
        waiting = await self._waiting()
        return waiting.pending if waiting is not None else None

    async def resume(self, decisions: Decisions) -> None:
        """Answer the approval the run waits for, like ``Agent.resume``: ``Allow()`` /
        ``Deny(reason)`` for every held call, or a mapping of held call ids to ``Allow``,
        ``Deny`` or ``Modify``.

        Raises :class:`RunNotFoundError` (no such run), :class:`RunNotWaitingError` (it
        runs, it finished, or this wait was answered already) or ``ResumeError`` (the
        decisions do not fit the held calls) — nothing is sent then.
        """
        require_asyncio("DurableRun.resume")
        state = await self._state()
        if state in (RunStatus.FINISHED, RunStatus.FAILED, RunStatus.CANCELLED):
            raise RunNotWaitingError(self.run_id, f"it has {state.value}")
        waiting = await self._waiting()
        if waiting is None:
            raise RunNotWaitingError(self.run_id, "it is running, not paused for approval")
        check_fit(waiting.pending, decisions)
        await deliver(
            self.run_id, waiting.round, decisions, polling=current_runtime().polling_interval
        )

    async def _state(self) -> RunStatus:
        status = await DBOS.get_workflow_status_async(self.run_id)
        if status is None:
            raise RunNotFoundError(self.run_id)
        return _status(status.status)

    async def _waiting(self) -> Waiting | None:
        value = await DBOS.get_event_async(self.run_id, PENDING_EVENT, timeout_seconds=0)
        return read_announcement(value)


def _status(value: str) -> RunStatus:
    return {
        "ENQUEUED": RunStatus.QUEUED,
        "DELAYED": RunStatus.QUEUED,
        "PENDING": RunStatus.RUNNING,
        "SUCCESS": RunStatus.FINISHED,
        "ERROR": RunStatus.FAILED,
        "CANCELLED": RunStatus.CANCELLED,
        "MAX_RECOVERY_ATTEMPTS_EXCEEDED": RunStatus.FAILED,
    }.get(value, RunStatus.RUNNING)
