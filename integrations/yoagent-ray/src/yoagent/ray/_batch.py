"""Run a batch of independent agent runs on a Ray cluster, streaming results as they come.

The driver keeps at most ``concurrency`` runs in flight over a pool of async worker
actors, retries attempts that failed for a reason a retry can fix (a rate limit or
network failure the run's own retries did not outlast, a worker that died), enforces a
per-run timeout, and on cancellation cancels every running agent and waits for them to
close (their tools stop their processes) before the workers are torn down.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ray.exceptions import GetTimeoutError, RayActorError, RayError, TaskCancelledError

import yoagent.ray._ray_api as ray
from yoagent.core import SessionStats

from ._limiter import ProviderLimit, rate_limiter
from ._pool import WorkerPool
from ._results import AgentFactory, AgentTask, BatchReport, ErrorKinds, TaskError, TaskResult

ProgressCallback = Callable[[BatchReport], None]


@dataclass(slots=True, frozen=True)
class _Queued:
    task: AgentTask
    attempt: int = 1
    not_before: float = 0.0
    avoid: int | None = None
    """The worker the last attempt was lost on (it may still be restarting)."""


def retry_delay(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1`` of a task: 0.5, 1, 2, ... up to 10."""
    return min(0.5 * 2 ** (attempt - 1), 10.0)


@dataclass(slots=True)
class _Running:
    task: AgentTask
    attempt: int
    worker: int
    holder: str
    started: float
    cancel_sent: bool = False
    timed_out: bool = False


class Batch:
    """A batch of agent runs; iterate it to run them and get each :class:`TaskResult` as
    its task finishes (in finishing order, one result per task, retries included).

    ``factory`` builds each task's agent on a worker (see :data:`AgentFactory`).
    ``concurrency`` bounds the runs in flight, spread over the actors of ``pool`` (a
    :class:`WorkerPool` kept across batches), else over ``workers`` actors started for
    this batch (default: one per CPU of the cluster, each started with
    ``worker_options``, default ``{"num_cpus": 1}``) and stopped when it ends.
    ``timeout`` (seconds) cancels a run that outlives it; ``max_retries`` re-runs a task
    whose attempt failed retryably (never one that raised or timed out). ``limits`` caps the
    requests per provider across the cluster (or pass a shared ``limiter`` from
    :func:`rate_limiter`). ``progress`` is called with the report after each result
    (``True``: a progress line on stderr).

    Leaving the iteration early (``break``, an exception, :meth:`cancel` from another
    thread) cancels the running agents and waits up to ``cancel_grace`` seconds for them
    to close before the workers are stopped. Ray must be initialised (``ray.init()``).
    """

    def __init__(
        self,
        tasks: Iterable[AgentTask],
        factory: AgentFactory,
        *,
        concurrency: int = 8,
        pool: WorkerPool | None = None,
        workers: int | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        limits: Mapping[str, ProviderLimit] | None = None,
        limiter: Any | None = None,
        progress: ProgressCallback | bool = False,
        worker_options: Mapping[str, Any] | None = None,
        cancel_grace: float = 10.0,
    ) -> None:
        self.tasks = list(tasks)
        _check_tasks(self.tasks)
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if pool is not None and (workers is not None or worker_options is not None):
            raise ValueError("workers and worker_options size a batch's own pool, not a given one")
        if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must not be negative, got {max_retries}")
        if limits and limiter is not None:
            raise ValueError("pass limits or a shared limiter, not both")
        _check_picklable(factory)
        self._factory = factory
        self._concurrency = concurrency
        self._pool = pool
        self._workers = workers
        self._timeout = timeout
        self._max_retries = max_retries
        self._limits = dict(limits or {})
        self._limiter = limiter
        self._progress = _stderr_progress if progress is True else progress or None
        self._worker_options = worker_options
        self._cancel_grace = cancel_grace
        self._cancelled = threading.Event()
        self._started = False
        self._id = uuid.uuid4().hex[:12]
        self.report = BatchReport(total=len(self.tasks))
        """The aggregate so far; complete once the iteration has ended."""

    def __iter__(self) -> Iterator[TaskResult]:
        if self._started:
            raise RuntimeError("a batch runs once; build a new Batch to run it again")
        self._started = True
        return self._run()

    def cancel(self) -> None:
        """Stop the batch (safe from any thread): running agents are cancelled, queued
        tasks never start, and the iteration ends."""
        self._cancelled.set()

    @property
    def limiter(self) -> Any | None:
        """The rate limiter actor in use (``None`` without limits); ask it
        ``ray.get(batch.limiter.stats.remote())`` for what it saw while it runs."""
        return self._limiter

    def _run(self) -> Iterator[TaskResult]:
        if not ray.is_initialized():
            raise RuntimeError("Ray is not running here: call ray.init() before the batch")
        started = time.monotonic()
        own_limiter = self._limiter is None and bool(self._limits)
        pool = self._pool
        pending = deque(_Queued(task) for task in self.tasks)
        retrying: list[_Queued] = []
        running: dict[Any, _Running] = {}
        # What retried attempts spent, per task: paid for, so counted with the final result.
        earlier_spend: dict[str, SessionStats] = {}
        finished = False
        try:
            if own_limiter:
                self._limiter = rate_limiter(self._limits)
            if pool is None:
                pool = WorkerPool.for_batch(
                    self._concurrency, len(self.tasks), self._workers, self._worker_options
                )
            workers = pool.actors
            in_flight = min(self._concurrency, pool.capacity)
            load = [0] * len(workers)
            factory = ray.put(self._factory)
            while pending or retrying or running:
                if self._cancelled.is_set():
                    break
                now = time.monotonic()
                pending.extendleft(item for item in retrying if item.not_before <= now)
                retrying = [item for item in retrying if item.not_before > now]
                while pending and len(running) < in_flight:
                    queued = pending.popleft()
                    task, attempt = queued.task, queued.attempt
                    index = _pick(load, queued.avoid)
                    holder = f"{self._id}/{task.id}/{attempt}"
                    ref = workers[index].run.remote(
                        factory,
                        task,
                        holder=holder,
                        attempt=attempt,
                        timeout=self._timeout,
                        limiter=self._limiter,
                    )
                    running[ref] = _Running(task, attempt, index, holder, time.monotonic())
                    load[index] += 1
                results: list[TaskResult] = []
                for ref in _ready(list(running)):
                    run = running.pop(ref)
                    load[run.worker] -= 1
                    self._release(run)
                    result = _collect(ref, run)
                    error = result.error
                    if error and error.retryable and run.attempt <= self._max_retries:
                        earlier_spend.setdefault(run.task.id, SessionStats()).merge(result.stats)
                        lost = error.kind == ErrorKinds.WORKER_LOST
                        again = time.monotonic() + retry_delay(run.attempt)
                        avoid = run.worker if lost else None
                        retrying.append(_Queued(run.task, run.attempt + 1, again, avoid))
                        continue
                    earlier = earlier_spend.pop(run.task.id, None)
                    if earlier is not None:
                        result.stats.merge(earlier)
                    self.report.add(result)
                    self.report.wall_seconds = time.monotonic() - started
                    results.append(result)
                    if self._progress is not None:
                        self._progress(self.report)
                yield from results
                self._enforce_timeouts(running, pool)
            finished = not (pending or retrying or running)
        finally:
            if not finished:
                self._stop(running)
                self.report.cancelled = len(running) + len(pending) + len(retrying)
            self.report.wall_seconds = time.monotonic() - started
            if self._pool is None and pool is not None:
                pool.close()
            if own_limiter and self._limiter is not None:
                ray.kill(self._limiter)

    def _release(self, run: _Running) -> None:
        if self._limiter is not None:
            self._limiter.release_holder.remote(run.holder)

    def _enforce_timeouts(self, running: dict[Any, _Running], pool: WorkerPool) -> None:
        """The backstop for a run whose worker cannot honour its own timeout (a tool
        blocking the worker's event loop): cancel it, then restart its worker."""
        if self._timeout is None:
            return
        now = time.monotonic()
        for ref, run in running.items():
            overdue = now - run.started - self._timeout
            if overdue > self._cancel_grace and not run.cancel_sent:
                run.cancel_sent = run.timed_out = True
                ray.cancel(ref)
            elif overdue > 2 * self._cancel_grace and run.timed_out:
                run.timed_out = False  # kill once; the worker restarts, its runs fail over
                pool.restart(run.worker)

    def _stop(self, running: dict[Any, _Running]) -> None:
        """Cancel the running agents and wait (bounded) for them to close."""
        refs = list(running)
        for ref in refs:
            ray.cancel(ref)
        if refs:
            ray.wait(refs, num_returns=len(refs), timeout=self._cancel_grace)
        for run in running.values():
            self._release(run)


def run_batch(
    tasks: Iterable[AgentTask], factory: AgentFactory, **options: Any
) -> tuple[list[TaskResult], BatchReport]:
    """Run every task (see :class:`Batch` for ``options``); the results in finishing
    order, and the report."""
    batch = Batch(tasks, factory, **options)
    results = list(batch)
    return results, batch.report


def _pick(load: list[int], avoid: int | None) -> int:
    """The least-loaded worker, other than ``avoid`` when there is another."""
    choices = [i for i in range(len(load)) if i != avoid] or list(range(len(load)))
    return min(choices, key=load.__getitem__)


def _ready(refs: list[Any]) -> list[Any]:
    """The refs that are done, waiting a little for the first."""
    if not refs:  # only retries are waiting for their time
        time.sleep(0.05)
        return []
    first, rest = ray.wait(refs, num_returns=1, timeout=0.2)
    if not first:
        return []
    more, _ = ray.wait(rest, num_returns=len(rest), timeout=0) if rest else ([], [])
    return [*first, *more]


def _collect(ref: Any, run: _Running) -> TaskResult:
    """The attempt's result; a failure of Ray itself as a failed result."""
    try:
        result: TaskResult = ray.get(ref, timeout=60)
        return result
    except (TaskCancelledError, RayActorError) as failure:
        if run.timed_out or run.cancel_sent:
            error = TaskError(ErrorKinds.TIMEOUT, "the run outlived its timeout and was stopped")
        else:
            error = TaskError(ErrorKinds.WORKER_LOST, _first_line(failure), retryable=True)
    except GetTimeoutError:
        error = TaskError(ErrorKinds.WORKER_LOST, "the worker's result never arrived", True)
    except RayError as failure:  # e.g. the factory could not be unpickled on the worker
        error = TaskError(ErrorKinds.EXCEPTION, _first_line(failure))
    return TaskResult(task_id=run.task.id, error=error, attempts=run.attempt)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _check_tasks(tasks: list[AgentTask]) -> None:
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        if not isinstance(task, AgentTask):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"tasks[{index}] must be an AgentTask, got {type(task).__name__}")
        if task.id in seen:
            raise ValueError(f"task id {task.id!r} appears twice; ids must be unique")
        seen.add(task.id)


def _check_picklable(factory: AgentFactory) -> None:
    """Fail here, with the reason, rather than on every worker."""
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    try:
        ray.dumps(factory)
    except Exception as failure:
        raise TypeError(
            f"the factory cannot be sent to Ray workers ({type(failure).__name__}: {failure}); "
            "build live objects (clients, tools, agents) inside it, from picklable data"
        ) from failure


def _stderr_progress(report: BatchReport) -> None:
    width = 30
    filled = width * report.finished // max(report.total, 1)
    bar = "#" * filled + "." * (width - filled)
    end = "\n" if report.finished >= report.total else ""
    sys.stderr.write(
        f"\r[{bar}] {report.finished}/{report.total} "
        f"ok {report.succeeded} failed {report.failed} {report.wall_seconds:.0f}s{end}"
    )
    sys.stderr.flush()
