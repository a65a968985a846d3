"""The recorder: an agent's event stream, appended to a GASP repository as it happens.

The loop is not changed: a :class:`Recording` is an ordinary event sink (``on_event=``).
Each event is forwarded first, then queued for a writer thread that maps it, appends the
lines and fsyncs them (one write and one fsync for everything queued meanwhile: group
commit), and commits once the run ends. The loop's thread only enqueues, so a slow disk
never slows the run; a recording failure stops the recording, never the run, and is
logged at once and kept on :attr:`Recording.error`.

What the recorder decides from the log (runs a dead writer left open, the goal, the graph
it hands out) it reads under the lease, when it opens and again as each run starts: the
lease is released between runs, and another writer may have appended meanwhile. A
:class:`Recording` dropped without :meth:`~Recording.close` is closed when it is
garbage-collected (its writer thread holds no reference to it), so it cannot keep the
lease renewed for ever.
"""

from __future__ import annotations

import logging
import os
import socket
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import anyio

from yoagent.core import AgentEvent

from ._appender import Appender
from ._mapping import RunMapper, goal_entries
from ._run_writer import RunWriter
from .envelope import Actor, new_id, now_ms
from .graph import Graph
from .lease import DEFAULT_TTL, Lease, LeaseError
from .repository import AgentRepo
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
        self._appender = Appender(repo, Lease(repo.root, worker_id, lease_ttl))
        self._writer: RunWriter | None = None
        self.goal_id = self._open(goal)

    def _open(self, goal: GoalRef) -> str:
        """Under the lease: read the log, close the runs dead writers left open, log the
        goal, commit the scaffolding."""
        appender = self._appender
        try:
            appender.sync()
            if isinstance(goal, ExistingGoal):
                with appender.lock:
                    node = appender.graph.node(goal.goal_id)
                if node is None or node.kind != "goal":
                    raise GoalNotFoundError(
                        f"goal {goal.goal_id} is not in this repository's graph"
                    )
            ts = now_ms()
            entries = appender.close_stale_runs(self.actor, ts)
            goal_id = goal.goal_id if isinstance(goal, ExistingGoal) else new_id("goal")
            if isinstance(goal, NewGoal):
                entries += goal_entries(self.actor, goal_id, goal.title, ts)
            appender.write(entries)
            self.repo.commit_scaffolding()
        except LeaseError as error:
            raise type(error)(
                f"{error}. Opening needs the lease (to close runs a dead writer left open "
                "and log the goal); another worker is live on this repository, and GASP "
                "repositories are single-writer"
            ) from None
        finally:
            appender.release()
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
        """A copy of the graph as this recorder last read the log (it reads it again as
        each of its runs starts) and its own runs since."""
        with self._appender.lock:
            return Graph.from_json(self._appender.graph.to_json())

    @property
    def repairs(self) -> list[str]:
        """What this recorder repaired in the log — a partial last line cut, a run a dead
        writer left open closed as interrupted — one line each (each also logged)."""
        return list(self._appender.repairs)

    def recording(self, task: str, *, forward: EventSink | None = None) -> Recording:
        """Start recording one run: pass the returned :class:`Recording` as the run's event
        sink. ``task`` is stored verbatim in ``run.started``; ``forward`` (your UI) gets
        every event before it is recorded, whatever happens to the recording."""
        writer = self._writer
        if writer is not None and not writer.done:
            if not writer.closing:
                raise RecorderBusyError("a recording is still open; close it before the next run")
            writer.join()  # a dropped recording still finishing its run
        mapper = RunMapper(self.actor, self.goal_id, task, self.summarizer)
        goal_id = self.goal_id

        def commit(run_id: str, outcome: str) -> str | None:
            return self.repo.commit_run(run_id, goal_id, outcome)

        writer = RunWriter(self._appender, mapper, commit)
        self._writer = writer
        return Recording(writer, forward)


class Recording:
    """One run being recorded: an event sink, and the handle on the recording's outcome.

    Call it with each event (``on_event=recording``), then :meth:`close` it (or use it as a
    ``with`` / ``async with`` block). A run whose ``AgentEnd`` never came (a dropped
    stream) is finished on close with the outcome derived so far — and so is the run of a
    recording dropped without being closed, once it is garbage-collected.
    """

    def __init__(self, writer: RunWriter, forward: EventSink | None) -> None:
        self._writer = writer
        self._forward = forward
        # The writer thread holds no reference to this handle: when the handle is garbage,
        # the run is closed instead of holding the lease for ever.
        finalizer = weakref.finalize(self, writer.close_dropped)
        finalizer.atexit = False

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
        self._writer.put(event)

    # --- the handle ----------------------------------------------------------------------

    @property
    def run_id(self) -> str | None:
        """The recorded run's id (``None`` until ``AgentStart`` arrives)."""
        run = self._writer.mapper.run
        return None if run is None else run.run_id

    @property
    def outcome(self) -> str:
        """The run's outcome as derived so far."""
        return self._writer.mapper.outcome

    @property
    def error(self) -> BaseException | None:
        """Why recording stopped, if it failed (it was logged when it happened)."""
        return self._writer.error

    @property
    def commit(self) -> str | None:
        """The sha of the run's closing commit, once made."""
        return self._writer.commit

    @property
    def closed(self) -> bool:
        """True once :meth:`close` finished."""
        return self._writer.closing and self._writer.done

    def close(self) -> str | None:
        """Finish the recording (the run, if it never ended, as dropped), wait for the
        writer and the commit, and return the run id (``None`` if no run started).

        Never raises for a recording failure: check :attr:`error`, or use :meth:`result`.
        """
        self._writer.close()
        self._writer.join()
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
