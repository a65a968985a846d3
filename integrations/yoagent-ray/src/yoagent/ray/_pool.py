"""A pool of agent worker actors, kept alive across batches.

Starting a worker means starting a Python process on a node and importing yoagent
there, seconds each; a pool pays that once for any number of batches. A :class:`Batch`
without a pool starts its own and stops it when it ends.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import yoagent.ray._ray_api as ray

from ._worker import AgentWorker

_RemoteWorker = ray.remote_class(AgentWorker, max_restarts=-1, max_task_retries=0)


class WorkerPool:
    """``workers`` async actors (default: one per CPU of the cluster), each running up to
    ``slots`` agents at once and started with ``worker_options`` (Ray actor options,
    default ``{"num_cpus": 1}``; the placement default spreads them over the nodes).
    The actors start on first use; :meth:`close` (or leaving ``with``) stops them.
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        slots: int = 8,
        worker_options: Mapping[str, Any] | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        self._count = workers
        self.slots = slots
        self._options: dict[str, Any] = {
            "scheduling_strategy": "SPREAD",
            **(worker_options or {"num_cpus": 1}),
        }
        self._actors: list[Any] = []
        self._closed = False

    @classmethod
    def for_batch(
        cls, concurrency: int, tasks: int, workers: int | None, options: Mapping[str, Any] | None
    ) -> WorkerPool:
        """A pool sized for one batch: no more workers than runs in flight or tasks."""
        count = max(1, min(workers or ray.cluster_cpus(), concurrency, max(tasks, 1)))
        return cls(count, slots=math.ceil(concurrency / count), worker_options=options)

    @property
    def actors(self) -> list[Any]:
        """The worker actor handles, started on first access."""
        if self._closed:
            raise RuntimeError("this worker pool is closed")
        if not self._actors:
            count = self._count or ray.cluster_cpus()
            options = {"max_concurrency": self.slots, **self._options}
            self._actors = [_RemoteWorker.options(**options).remote() for _ in range(count)]
        return self._actors

    @property
    def capacity(self) -> int:
        """Runs the pool can hold at once."""
        return len(self.actors) * self.slots

    def restart(self, index: int) -> None:
        """Kill worker ``index`` (its runs fail as lost) and let Ray start it again."""
        ray.kill(self._actors[index], restart=True)

    def pids(self) -> list[int]:
        """The workers' process ids."""
        return [ray.get(actor.pid.remote(), timeout=120) for actor in self.actors]

    def close(self) -> None:
        """Stop the workers (runs still on them are killed: cancel batches first)."""
        for actor in self._actors:
            ray.kill(actor)
        self._actors = []
        self._closed = True

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
