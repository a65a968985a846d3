"""A writer's hold on the log: the lease, the appends, and its view of what the log says.

Everything a recorder decides from the log — which runs a dead writer left open, whether
a goal exists, the graph it hands out — is read under the lease: :meth:`Appender.sync`
takes (or renews) the lease, then folds whatever other writers appended since this one
last looked, so no decision rests on a copy another writer has since made stale. A
partial last line found there was left by a writer that died mid-append (nobody else
can be writing: the lease is held); it is cut, unless git has committed it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

from ._json import as_object
from ._mapping import INTERRUPTED, Entry, OpenRun, finish_entries
from .envelope import Actor, Event
from .fold import LOG_PATH, Fold, read_log
from .graph import Graph
from .lease import Lease
from .repository import AgentRepo, RepositoryError

logger = logging.getLogger("yoagent.gasp")


def write_all(descriptor: int, data: bytes) -> None:
    """Write all of ``data`` (``os.write`` may take only part of it)."""
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


class Appender:
    """The one way lines reach the log: under the lease, after catching up with the log,
    written whole, fsynced, and folded into :attr:`graph`."""

    def __init__(self, repo: AgentRepo, lease: Lease) -> None:
        self.repo = repo
        self.lease = lease
        self.graph = Graph()
        """The log folded, as of this writer's last look (guarded by :attr:`lock`)."""
        self.lock = threading.Lock()
        self.repairs: list[str] = []
        """What this writer repaired (a torn tail cut, a stale run closed), one each."""
        self._running: dict[str, OpenRun] = {}
        self._seen = 0
        """Bytes of the log folded so far."""
        self._lines = 0
        self._descriptor: int | None = None

    @property
    def open_runs(self) -> list[OpenRun]:
        """Runs started in the log and never finished, in log order, as of the last
        :meth:`sync` (or of this writer's own appends since)."""
        return list(self._running.values())

    def close_stale_runs(self, actor: Actor, ts: int) -> list[Entry]:
        """The entries closing, as ``interrupted``, every run the log holds open — call it
        right after :meth:`sync`: under the lease, no live writer has a run open."""
        entries: list[Entry] = []
        for run in self.open_runs:
            repair = f"closed the run {run.run_id}, which a writer left open, as interrupted"
            logger.warning("%s", repair)
            self.repairs.append(repair)
            entries += finish_entries(actor, run, INTERRUPTED, ts)
        return entries

    def sync(self) -> None:
        """Take or renew the lease, then fold what the log gained since the last look."""
        self.lease.acquire()
        path = self.repo.log_path
        try:
            with path.open("rb") as handle:
                handle.seek(self._seen)
                tail = handle.read()
                size = handle.seek(0, os.SEEK_END)
        except FileNotFoundError:
            tail, size = b"", 0
        if size < self._seen:
            raise RepositoryError(
                f"{LOG_PATH} shrank from {self._seen} to {size} bytes while this writer "
                "was away; the log is append-only"
            )
        whole = tail.rfind(b"\n") + 1
        if whole < len(tail):
            self._cut(self._seen + whole, len(tail) - whole)
        if whole:
            self._fold(tail[:whole])

    def _cut(self, keep: int, torn: int) -> None:
        self.repo.cut_log(keep)
        repair = (
            f"cut a partial last line ({torn} bytes after byte {keep}) from {LOG_PATH}: a "
            "writer died mid-append, and what it was writing is lost"
        )
        logger.warning("%s", repair)
        self.repairs.append(repair)

    def _fold(self, chunk: bytes) -> None:
        with self.lock:
            fold = read_log(chunk, Fold(graph=self.graph), first_line=self._lines + 1)
        for line in fold.diagnostics():
            logger.warning("%s: %s", self.repo.log_path, line)
        self._track(fold.events)
        self._seen += len(chunk)
        self._lines += chunk.count(b"\n")

    def _track(self, events: Iterable[Event]) -> None:
        for event in events:
            payload = as_object(event.payload)
            run_id = payload.get("run_id") if payload is not None else None
            if not isinstance(run_id, str):
                continue
            if event.kind == "run.started":
                self._running[run_id] = OpenRun(run_id, event.id)
            elif event.kind == "run.finished":
                self._running.pop(run_id, None)

    def write(self, entries: list[Entry]) -> None:
        """Append ``entries`` in one write and one fsync, then fold them."""
        if not entries:
            return
        self.sync()
        if self._descriptor is None:
            self._descriptor = self.repo.open_log()
        data = "".join(entry.event.to_line() for entry in entries).encode("utf-8")
        write_all(self._descriptor, data)
        os.fsync(self._descriptor)
        with self.lock:
            for entry in entries:
                if entry.ops is not None:
                    self.graph.apply(entry.ops)
        self._track(entry.event for entry in entries)
        self._seen += len(data)
        self._lines += len(entries)

    def close(self) -> None:
        """Close the log's descriptor."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def release(self) -> None:
        """Close the descriptor and give the lease up."""
        self.close()
        self.lease.release()
