"""The Ray actor that runs agents: builds each task's agent from the factory, runs it
under the batch's timeout, and turns every outcome into a :class:`TaskResult`.

An async actor, so one worker process runs many IO-bound agents at once, and so
``ray.cancel`` of a running task arrives as asyncio cancellation: the agent's run is
cancelled like any anyio task, and its tools stop their processes on the way out.
"""

from __future__ import annotations

import os
import time
from typing import Any

import anyio

from yoagent.core import Agent, RunFailedError, SessionStats

from ._limiter import LimitedProvider
from ._results import AgentFactory, AgentTask, ErrorKinds, TaskError, TaskResult


class AgentWorker:
    """The actor's code (the batch starts it through Ray)."""

    async def run(
        self,
        factory: AgentFactory,
        task: AgentTask,
        *,
        holder: str,
        attempt: int,
        timeout: float | None,  # noqa: ASYNC109 (it crosses to Ray as data)
        limiter: Any | None,
    ) -> TaskResult:
        """Run ``task`` once; failures of the run come back in the result, never raised."""
        started = time.monotonic()
        agent: Agent | None = None
        error: TaskError | None = None
        try:
            with anyio.move_on_after(timeout) as deadline:
                try:
                    agent = factory(task)
                    if limiter is not None:
                        agent.provider = LimitedProvider(
                            agent.provider, limiter, agent.model.provider, holder
                        )
                    await agent.prompt(task.prompt)
                except RunFailedError as failure:
                    kind = failure.kind
                    error = TaskError(kind.value, failure.message, kind.retryable)
                except Exception as failure:  # the user's factory or tools: report it
                    error = TaskError(ErrorKinds.EXCEPTION, f"{type(failure).__name__}: {failure}")
            if deadline.cancel_called:
                error = TaskError(ErrorKinds.TIMEOUT, f"the run took longer than {timeout}s")
        finally:
            if agent is not None:
                with anyio.CancelScope(shield=True):  # even when Ray cancels the run
                    await agent.aclose()
        return TaskResult(
            task_id=task.id,
            messages=list(agent.messages) if agent is not None else [],
            stats=agent.stats if agent is not None else SessionStats(),
            error=error,
            attempts=attempt,
            wall_seconds=time.monotonic() - started,
        )

    def pid(self) -> int:
        """The worker's process id (for tests and diagnostics)."""
        return os.getpid()
