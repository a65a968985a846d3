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

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from yoagent.core import ModelConfig

from ._appender import Appender
from ._delegations import RunTree
from ._errors import GaspError
from ._mapping import goal_entries, pricer
from ._run_writer import RunWriter
from .envelope import Actor, new_id, now_ms
from .graph import Graph
from .lease import DEFAULT_TTL, Lease, LeaseError
from .recording import EventSink, Recording
from .repository import AgentRepo
from .summary import Summarizer, summarize


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


class RecorderBusyError(GaspError, RuntimeError):
    """A recording is still open on this recorder (one run at a time)."""


class GoalNotFoundError(GaspError, ValueError):
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

    def recording(
        self,
        task: str,
        *,
        forward: EventSink | None = None,
        wait: float | None = None,
        model: ModelConfig | None = None,
    ) -> Recording:
        """Start recording one run: pass the returned :class:`Recording` as the run's event
        sink. ``task`` is stored verbatim in ``run.started``; ``forward`` (your UI) gets
        every event before it is recorded, whatever happens to the recording. With the
        run's ``model``, each reply's cost (as the loop prices it) is recorded too.

        A closed recording still finishing its run (its commit) is waited for, at most
        ``wait`` seconds when given: :class:`RecorderBusyError` after that.
        """
        writer = self._writer
        if writer is not None and not writer.done:
            if not writer.closing:
                raise RecorderBusyError("a recording is still open; close it before the next run")
            writer.join(wait)  # a dropped recording still finishing its run
            if not writer.done:
                raise RecorderBusyError(
                    f"the previous run's commit is still running after {wait:g} s"
                )
        mapper = RunTree(
            self.actor,
            self.goal_id,
            task,
            self.summarizer,
            price=None if model is None else pricer(model),
        )
        goal_id = self.goal_id

        def commit(run_id: str, outcome: str) -> str | None:
            return self.repo.commit_run(run_id, goal_id, outcome)

        writer = RunWriter(self._appender, mapper, commit)
        self._writer = writer
        return Recording(writer, forward)
