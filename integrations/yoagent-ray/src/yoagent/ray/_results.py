"""What a batch is made of and what it gives back: tasks, per-task results, the report.

Everything here crosses process boundaries (driver ↔ Ray workers), so it is plain,
picklable data: dataclasses of strings, numbers, messages and :class:`SessionStats`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from yoagent.core import Agent, AgentMessage, SessionStats


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentTask:
    """One independent agent run: ``id`` names it in results (unique within a batch),
    ``prompt`` is what the agent is asked, ``data`` is anything picklable the factory
    needs to build this run's agent (a repository path, a model name, ...)."""

    id: str
    prompt: str
    data: Any = None


AgentFactory = Callable[[AgentTask], Agent]
"""Builds the agent for one task, on the worker. It must be picklable (a module-level
function or a :func:`functools.partial` of one): it is shipped to the workers, while the
agent it builds (with its live HTTP client and tools) never crosses the wire."""


class ErrorKinds:
    """The ``kind`` values of :class:`TaskError` besides a provider's
    :class:`~yoagent.core.ErrorKind` values (``rate_limited``, ``network``, ``auth``, ...)."""

    TIMEOUT = "timeout"
    """The run outlived the batch's ``timeout``; it was cancelled. Not retried."""
    EXCEPTION = "exception"
    """The factory or the run raised. Not retried."""
    WORKER_LOST = "worker_lost"
    """The Ray worker running it died (a killed process, a lost node). Retried."""


@dataclass(frozen=True, slots=True)
class TaskError:
    """Why a task failed: ``kind`` (a provider :class:`~yoagent.core.ErrorKind` value or
    one of :class:`ErrorKinds`), a message, and whether a retry may help."""

    kind: str
    message: str
    retryable: bool = False

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskResult:
    """One task's outcome: the messages its agent ended with, what it spent (``stats``:
    every attempt's spend, retried ones included), how long it took (``wall_seconds``, of
    the last attempt) and ``attempts`` made. ``error`` is
    ``None`` when it succeeded; a failed run still carries what it had done."""

    task_id: str
    messages: list[AgentMessage] = field(default_factory=list[AgentMessage])
    stats: SessionStats = field(default_factory=SessionStats)
    error: TaskError | None = None
    attempts: int = 1
    wall_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the run succeeded."""
        return self.error is None


@dataclass(slots=True)
class BatchReport:
    """The batch so far: counts, the spend of every finished task added up, per-task
    errors, and the wall time from start to the last result."""

    total: int = 0
    """How many tasks the batch holds."""
    succeeded: int = 0
    failed: int = 0
    cancelled: int = 0
    """Tasks that never finished because the batch was cancelled."""
    retries: int = 0
    """Attempts made beyond each task's first."""
    stats: SessionStats = field(default_factory=SessionStats)
    errors: dict[str, TaskError] = field(default_factory=dict[str, TaskError])
    wall_seconds: float = 0.0

    @property
    def finished(self) -> int:
        """Tasks with a result (succeeded or failed)."""
        return self.succeeded + self.failed

    def add(self, result: TaskResult) -> None:
        """Count one task's result in."""
        if result.error is None:
            self.succeeded += 1
        else:
            self.failed += 1
            self.errors[result.task_id] = result.error
        self.retries += result.attempts - 1
        self.stats.merge(result.stats)

    def summary(self) -> str:
        """One line for a terminal: counts, tokens, cost and wall time."""
        usage = self.stats.total_usage()
        cost = self.stats.total_cost_usd()
        spent = "unpriced" if cost is None else f"${cost:.4f}"
        return (
            f"{self.finished}/{self.total} finished: {self.succeeded} ok, {self.failed} failed"
            + (f", {self.cancelled} cancelled" if self.cancelled else "")
            + f"; {usage.input} in / {usage.output} out tokens, {spent}"
            + f"; {self.wall_seconds:.1f}s"
        )
