"""The errors yoagent-dbos raises on purpose, under one base, :class:`DbosError`."""

from __future__ import annotations

from yoagent.core import YoagentError


class DbosError(YoagentError):
    """The base of every error this package raises on purpose."""


class RunNotFoundError(DbosError, LookupError):
    """No durable run has this id (in the database the runtime is connected to)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no durable run has the id {run_id!r}")
        self.run_id = run_id


class RunNotWaitingError(DbosError):
    """The run is not waiting for approval: it is running, finished, or its current wait
    was answered already (an approval is taken once)."""

    def __init__(self, run_id: str, why: str) -> None:
        super().__init__(f"run {run_id!r} is not waiting for approval: {why}")
        self.run_id = run_id


class CheckpointError(DbosError):
    """A value that must be checkpointed (a tool's result, a reply) cannot be serialized."""


class DatabaseError(DbosError):
    """The system database cannot be used: unreachable, refused, or written by a newer
    schema than this version knows."""


class UnsupportedLoopError(DbosError, RuntimeError):
    """A durable run was started under an event loop DBOS does not run on (trio)."""
