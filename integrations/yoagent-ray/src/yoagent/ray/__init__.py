"""yoagent.ray: many independent agent runs on a Ray cluster.

A :class:`Batch` runs :class:`AgentTask` objects, each through an agent a picklable
factory builds on a worker, with bounded concurrency, a cluster-wide request limit per
provider (:class:`ProviderLimit`, one shared actor), a per-run timeout and retries of
retryable failures; results stream back as tasks finish and add up in a
:class:`BatchReport`.
"""

from ._batch import Batch, ProgressCallback, run_batch
from ._limiter import LimitedProvider, LimiterStats, ProviderLimit, RateLimiterActor, rate_limiter
from ._pool import WorkerPool
from ._results import AgentFactory, AgentTask, BatchReport, ErrorKinds, TaskError, TaskResult

__all__ = [
    "AgentFactory",
    "AgentTask",
    "Batch",
    "BatchReport",
    "ErrorKinds",
    "LimitedProvider",
    "LimiterStats",
    "ProgressCallback",
    "ProviderLimit",
    "RateLimiterActor",
    "TaskError",
    "TaskResult",
    "WorkerPool",
    "rate_limiter",
    "run_batch",
]
