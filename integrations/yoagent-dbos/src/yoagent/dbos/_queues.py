"""Run queues: what a durable agent declares, and the runtime registers with DBOS at launch."""

from __future__ import annotations

from dataclasses import dataclass

_declared: dict[str, RunQueue] = {}


@dataclass(slots=True, frozen=True)
class RunQueue:
    """A DBOS queue for durable runs: at most ``worker_concurrency`` of its runs on one
    worker and ``concurrency`` on all workers together (either may be ``None``), and at
    most ``limit`` started per ``period`` seconds when ``limit`` is set."""

    name: str
    concurrency: int | None = None
    worker_concurrency: int | None = None
    limit: int | None = None
    period: float = 1.0
    polling_interval: float = 0.1

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a RunQueue needs a name")
        for field in ("concurrency", "worker_concurrency", "limit"):
            value = getattr(self, field)
            if value is not None and value < 1:
                raise ValueError(f"RunQueue.{field} must be >= 1, got {value}")
        if not (self.period > 0 and self.polling_interval > 0):
            raise ValueError("RunQueue.period and polling_interval must be > 0 seconds")


def declare(queue: RunQueue) -> None:
    """Have the runtime register ``queue`` at launch (the same name twice must be the same
    queue)."""
    known = _declared.setdefault(queue.name, queue)
    if known != queue:
        raise ValueError(f"two different run queues are named {queue.name!r}: {known} and {queue}")


def is_declared(queue: RunQueue) -> bool:
    return _declared.get(queue.name) == queue


def declared() -> list[RunQueue]:
    """The queues declared so far, one per name."""
    return list(_declared.values())
