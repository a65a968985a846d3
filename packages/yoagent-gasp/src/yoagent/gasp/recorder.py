"""The recorder: an agent's event stream, appended to a GASP repository as it happens.

The loop is not changed: a :class:`Recording` is an ordinary event sink (``on_event=``).
Each event is forwarded first, then queued for a writer thread that maps it, appends the
lines and fsyncs them (one write and one fsync for everything queued meanwhile: group
commit), and commits once the run ends. The loop's thread only enqueues, so a slow disk
never slows the run; a recording failure stops the recording, never the run, and is
logged at once and kept on :attr:`Recording.error`.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final

import anyio

from yoagent.core import AgentEvent

from ._mapping import INTERRUPTED, Entry, OpenRun, RunMapper, finish_entries, goal_entries
from .envelope import Actor, new_id, now_ms
from .fold import Fold, fold_log
from .graph import Graph
from .lease import DEFAULT_TTL, Lease, LeaseError
from .repository import AgentRepo, RepositoryError
from .summary import Summarizer, summarize

logger = logging.getLogger("yoagent.gasp")

EventSink = Callable[[AgentEvent], None]


@dataclass(frozen=True, slots=True)
class NewGoal:
    """Create a goal with this title when the recorder opens."""

    title: str


@dataclass(frozen=True, slots=True)
class ExistingGoal:
    """Record under a goal the repository's graph already holds."""

    goal_id: str


GoalRef = NewGoal | ExistingGoal
"""Which goal a recorder's runs serve."""


class RecordingError(RuntimeError):
    """Recording a run failed (the run itself went on); the cause is chained."""


class RecorderBusyError(RuntimeError):
    """A recording is still open on this recorder (one run at a time)."""


class GoalNotFoundError(ValueError):
    """An :class:`ExistingGoal` that is not a goal of this repository."""


def default_worker_id() -> str:
    """``<host>-<pid>-<random>``: unique per writer, as the lease requires."""
    return f"{socket.gethostname()}-{os.getpid()}-{new_id('w')[2:10]}"


def open_runs(fold: Fold) -> list[OpenRun]:
    """Runs started in the log and never finished, in log order."""
    running: dict[str, OpenRun] = {}
    for event in fold.events:
        payload = event.payload
        run_id = payload.get("run_id") if isinstance(payload, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(run_id, str):
            continue
        if event.kind == "run.started":
            running[run_id] = OpenRun(run_id, event.id)
        elif event.kind == "run.finished":
            running.pop(run_id, None)
    return list(running.values())


class _Appender:
    """The one way lines reach the log: lease checked, written whole, fsynced, folded."""

    def __init__(self, repo: AgentRepo, lease: Lease, graph: Graph) -> None:
        self.repo = repo
        self.lease = lease
        self.graph = graph
        self.lock = threading.Lock()
        """Guards :attr:`graph` (the writer thread folds into it while users read it)."""
        self._descriptor: int | None = None

    def write(self, entries: list[Entry]) -> None:
        if not entries:
            return
        self.lease.acquire()
        if self._descriptor is None:
            self._descriptor = self.repo.open_log()
        data = "".join(entry.event.to_line() for entry in entries).encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._descriptor, view)
            view = view[written:]
        os.fsync(self._descriptor)
        with self.lock:
            for entry in entries:
                if entry.ops is not None:
                    self.graph.apply(entry.ops)

    def close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def release(self) -> None:
        self.close()
        self.lease.release()


class Recorder:
    """Records an agent's runs into one GASP repository, for one goal, as one writer.

    Build it with :meth:`init` (a new repository) or :meth:`open`; then wrap each run in
    :meth:`recording`. Runs are recorded one at a time.
    """

    def __init__(
        self,
        repo: AgentRepo,
        *,
        agent_id: str,
        worker_id: str,
        goal: GoalRef,
        lease_ttl: float,
        summarizer: Summarizer,
    ) -> None:
        self.repo = repo
        self.actor = Actor("agent", agent_id)
        self.worker_id = worker_id
        self.summarizer: Summarizer = summarizer
        """Applied to every task, argument and output text before it is logged; replace it
        to redact secrets (the log is meant to be cloned and shared)."""
        if repo.tail_is_torn():
            raise RepositoryError(
                f"{repo.log_path} ends in a partial line (a crash mid-append?); truncate that "
                "last line, then open again"
            )
        folded = fold_log(repo.log_path)
        for line in folded.diagnostics():
            logger.warning("%s: %s", repo.log_path, line)
        self._appender = _Appender(repo, Lease(repo.root, worker_id, lease_ttl), folded.graph)
        self._open_runs = open_runs(folded)
        self._active: Recording | None = None
        self.goal_id = self._resolve_goal(goal, folded.graph)

    def _resolve_goal(self, goal: GoalRef, graph: Graph) -> str:
        if isinstance(goal, ExistingGoal):
            node = graph.node(goal.goal_id)
            if node is None or node.kind != "goal":
                raise GoalNotFoundError(f"goal {goal.goal_id} is not in this repository's graph")
        ts = now_ms()
        entries: list[Entry] = []
        for run in self._open_runs:
            logger.warning("closing the stale open run %s as interrupted", run.run_id)
            entries += finish_entries(self.actor, run, INTERRUPTED, ts)
        goal_id = goal.goal_id if isinstance(goal, ExistingGoal) else new_id("goal")
        if isinstance(goal, NewGoal):
            entries += goal_entries(self.actor, goal_id, goal.title, ts)
        try:
            self._appender.lease.acquire()
            self._appender.write(entries)
            self._open_runs = []
            self.repo.commit_scaffolding()
        except LeaseError as error:
            stale = " found an open run and could not close it;" if self._open_runs else ""
            raise type(error)(
                f"{error}.{stale} another worker is live on this repository; GASP "
                "repositories are single-writer"
            ) from None
        finally:
            self._appender.release()
        return goal_id

    @classmethod
    def init(
        cls,
        root: str | Path,
        agent_id: str,
        goal: GoalRef,
        *,
        identity: str | None = None,
        worker_id: str | None = None,
        lease_ttl: float = DEFAULT_TTL,
        summarizer: Summarizer = summarize,
    ) -> Recorder:
        """Create an agent repository at ``root`` (see :meth:`AgentRepo.init`), log the
        goal, commit the scaffolding, and return a recorder on it."""
        repo = AgentRepo.init(root, agent_id, identity=identity)
        return cls(
            repo,
            agent_id=agent_id,
            worker_id=worker_id or default_worker_id(),
            goal=goal,
            lease_ttl=lease_ttl,
            summarizer=summarizer,
        )

    @classmethod
    def open(
        cls,
        root: str | Path,
        goal: GoalRef,
        *,
        agent_id: str | None = None,
        worker_id: str | None = None,
        lease_ttl: float = DEFAULT_TTL,
        summarizer: Summarizer = summarize,
    ) -> Recorder:
        """Open a recorder on an existing agent repository.

        Runs a crashed writer left open are closed as ``interrupted`` first; that needs the
        lease, so this fails with :class:`~yoagent.gasp.LeaseHeldError` while another
        worker is live. ``agent_id`` defaults to the one ``AGENT.md`` declares.
        """
        repo = AgentRepo.open(root)
        declared = repo.manifest().agent_id
        if agent_id is not None and agent_id != declared:
            raise ValueError(f"AGENT.md declares agent {declared!r}, not {agent_id!r}")
        return cls(
            repo,
            agent_id=declared,
            worker_id=worker_id or default_worker_id(),
            goal=goal,
            lease_ttl=lease_ttl,
            summarizer=summarizer,
        )

    def graph(self) -> Graph:
        """A copy of the graph as recorded so far."""
        with self._appender.lock:
            return Graph.from_json(self._appender.graph.to_json())

    def recording(self, task: str, *, forward: EventSink | None = None) -> Recording:
        """Start recording one run: pass the returned :class:`Recording` as the run's event
        sink. ``task`` is stored verbatim in ``run.started``; ``forward`` (your UI) gets
        every event before it is recorded, whatever happens to the recording."""
        if self._active is not None and not self._active.closed:
            raise RecorderBusyError("a recording is still open; close it before the next run")
        self._active = Recording(self, task, forward)
        return self._active


_CLOSE: Final = object()


class Recording:
    """One run being recorded: an event sink, and the handle on the recording's outcome.

    Call it with each event (``on_event=recording``), then :meth:`close` it (or use it as a
    ``with`` / ``async with`` block). A run whose ``AgentEnd`` never came (a dropped
    stream) is finished on close with the outcome derived so far.
    """

    def __init__(self, recorder: Recorder, task: str, forward: EventSink | None) -> None:
        self._recorder = recorder
        self._forward = forward
        self._mapper = RunMapper(recorder.actor, recorder.goal_id, task, recorder.summarizer)
        self._queue: queue.SimpleQueue[tuple[object, int]] = queue.SimpleQueue()
        self._closing = False
        self._lock = threading.Lock()
        self.error: BaseException | None = None
        """Why recording stopped, if it failed (it was logged when it happened)."""
        self.commit: str | None = None
        """The sha of the run's closing commit, once made."""
        self._thread = threading.Thread(target=self._work, name="yoagent-gasp-writer", daemon=True)
        self._thread.start()

    # --- the sink ------------------------------------------------------------------------

    def __call__(self, event: AgentEvent) -> None:
        """Forward ``event``, then queue it for recording. Never raises."""
        forward = self._forward
        if forward is not None:
            try:
                forward(event)
            except Exception:
                self._forward = None
                logger.exception("the forwarded event consumer raised; it gets no more events")
        if not self._closing:
            self._queue.put((event, now_ms()))

    # --- the handle ----------------------------------------------------------------------

    @property
    def run_id(self) -> str | None:
        """The recorded run's id (``None`` until ``AgentStart`` arrives)."""
        run = self._mapper.run
        return None if run is None else run.run_id

    @property
    def outcome(self) -> str:
        """The run's outcome as derived so far."""
        return self._mapper.outcome

    @property
    def closed(self) -> bool:
        """True once :meth:`close` finished."""
        return self._closing and not self._thread.is_alive()

    def close(self) -> str | None:
        """Finish the recording (the run, if it never ended, as dropped), wait for the
        writer and the commit, and return the run id (``None`` if no run started).

        Never raises for a recording failure: check :attr:`error`, or use :meth:`result`.
        """
        with self._lock:
            if not self._closing:
                self._closing = True
                self._queue.put((_CLOSE, now_ms()))
        self._thread.join()
        return self.run_id

    def result(self) -> str | None:
        """:meth:`close`, raising :class:`RecordingError` if recording failed."""
        run_id = self.close()
        if self.error is not None:
            raise RecordingError(f"recording the run failed: {self.error}") from self.error
        return run_id

    async def aclose(self) -> str | None:
        """:meth:`close` without blocking the event loop (shielded from cancellation, so
        the run is always closed in the log)."""
        with anyio.CancelScope(shield=True):
            return await anyio.to_thread.run_sync(self.close)

    async def finish(self) -> str | None:
        """:meth:`aclose`, raising :class:`RecordingError` if recording failed."""
        await self.aclose()
        return self.result()

    def __enter__(self) -> Recording:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Recording:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- the writer thread ---------------------------------------------------------------

    def _work(self) -> None:
        recorder = self._recorder
        appender = recorder._appender  # pyright: ignore[reportPrivateUsage]
        closing = False
        quiet = appender.lease.ttl_ms / 4000  # renew well before a quiet run's lease ends
        while not closing:
            try:
                batch = [self._queue.get(timeout=quiet)]
            except queue.Empty:
                self._keep_lease()
                continue
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            entries: list[Entry] = []
            for item, ts in batch:
                if item is _CLOSE:
                    closing = True
                    break
                if self.error is None:
                    try:
                        entries += self._map(item, ts)  # pyright: ignore[reportArgumentType]
                    except Exception as error:
                        self._fail(error)
            if closing and self.error is None:
                try:
                    entries += self._mapper.finish(now_ms())
                except Exception as error:
                    self._fail(error)
            if self.error is None:
                try:
                    self._write(entries)
                except Exception as error:
                    self._fail(error)
        if self.error is not None:
            try:
                appender.release()
            except Exception:
                logger.exception("could not release the lease after a recording failure")

    def _keep_lease(self) -> None:
        """A long tool call sends no events: renew the lease of an open run anyway."""
        mapper = self._mapper
        if self.error is None and mapper.run is not None and not mapper.finished:
            try:
                self._recorder._appender.lease.acquire()  # pyright: ignore[reportPrivateUsage]
            except Exception as error:
                self._fail(error)

    def _map(self, event: AgentEvent, ts: int) -> list[Entry]:
        mapper = self._mapper
        started = mapper.started
        entries = mapper.take(event, ts)
        if not started and mapper.started:
            # Runs a failed recording left open are closed before this one starts.
            recorder = self._recorder
            stale: list[Entry] = []
            for run in recorder._open_runs:  # pyright: ignore[reportPrivateUsage]
                stale += finish_entries(recorder.actor, run, INTERRUPTED, ts)
            entries = stale + entries
        return entries

    def _write(self, entries: list[Entry]) -> None:
        recorder = self._recorder
        appender = recorder._appender  # pyright: ignore[reportPrivateUsage]
        mapper = self._mapper
        if not entries:
            return
        appender.write(entries)
        recorder._open_runs = []  # pyright: ignore[reportPrivateUsage]
        if mapper.run is not None and not mapper.finished:
            recorder._open_runs = [mapper.run]  # pyright: ignore[reportPrivateUsage]
            return
        if mapper.run is not None and mapper.finished and self.commit is None:
            self.commit = recorder.repo.commit_run(
                mapper.run.run_id, recorder.goal_id, mapper.outcome
            )
            appender.release()

    def _fail(self, error: BaseException) -> None:
        self.error = error
        logger.error(
            "GASP recording of run %s failed; recording stops, the run goes on: %s",
            self.run_id,
            error,
            exc_info=error,
        )
