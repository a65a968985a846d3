"""yoagent.dbos: durable agent runs on DBOS — SQLite on one machine, PostgreSQL beyond it.

Wrap an :class:`~yoagent.core.Agent` in a :class:`DurableAgent`, launch a
:class:`DurableRuntime`, and each run becomes a DBOS workflow whose model requests and
tool calls are checkpointed steps: a run survives crashes, restarts and approvals that
wait for days.
"""

from ._agent import DurableAgent
from ._approval import Decisions
from ._errors import (
    CheckpointError,
    DatabaseError,
    DbosError,
    RunNotFoundError,
    RunNotWaitingError,
    UnsupportedLoopError,
)
from ._events import DurableEvent
from ._limits import ProviderLimit, SharedBudget
from ._queues import RunQueue
from ._run import DurableRun, RunResult, RunStatus, get_run
from ._runtime import DATABASE_URL_VARIABLE, DEFAULT_DATABASE_URL, DurableRuntime
from ._steps import idempotency_key

__all__ = [
    "DATABASE_URL_VARIABLE",
    "DEFAULT_DATABASE_URL",
    "CheckpointError",
    "DatabaseError",
    "DbosError",
    "Decisions",
    "DurableAgent",
    "DurableEvent",
    "DurableRun",
    "DurableRuntime",
    "ProviderLimit",
    "RunNotFoundError",
    "RunNotWaitingError",
    "RunQueue",
    "RunResult",
    "RunStatus",
    "SharedBudget",
    "UnsupportedLoopError",
    "get_run",
    "idempotency_key",
]
