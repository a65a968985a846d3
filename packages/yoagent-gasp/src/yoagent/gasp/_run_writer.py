"""A recording's writer thread: it maps the queued agent events to log entries, appends
them (everything queued meanwhile in one write and one fsync), and commits once the run
ends. The loop's thread only enqueues."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Final

from yoagent.core import AgentEvent, RunOutcome

from ._appender import Appender
from ._mapping import Entry, RunMapper
from .envelope import now_ms

logger = logging.getLogger("yoagent.gasp")

_CLOSE: Final = object()


class RunWriter:
    """One run's writer thread and its state: maps the queued events, appends them, and
    commits once the run ends (``commit(run_id, outcome)``). It never references the
    :class:`~yoagent.gasp.Recording` that feeds it."""

    def __init__(
        self, appender: Appender, mapper: RunMapper, commit: Callable[[str, str], str | None]
    ) -> None:
        self.appender = appender
        self.mapper = mapper
        self._commit = commit
        self.queue: queue.SimpleQueue[tuple[object, int]] = queue.SimpleQueue()
        self.closing = False
        self.error: BaseException | None = None
        self.commit: str | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._work, name="yoagent-gasp-writer", daemon=True)
        self._thread.start()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def put(self, event: AgentEvent | RunOutcome) -> None:
        """Queue an event, or how the run ended (for the run's end, when it comes)."""
        if not self.closing:
            self.queue.put((event, now_ms()))

    def close(self) -> None:
        """Queue the end of the recording (once)."""
        with self._lock:
            if not self.closing:
                self.closing = True
                self.queue.put((_CLOSE, now_ms()))

    def close_dropped(self) -> None:
        """The recording was garbage-collected: close it, and say so if it was open."""
        if not self.closing:
            logger.warning(
                "a GASP recording was garbage-collected without close(); closing its run "
                "(call close() or use it as a with block)"
            )
            self.close()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _work(self) -> None:
        appender = self.appender
        closing = False
        quiet = appender.lease.ttl_ms / 4000  # renew well before a quiet run's lease ends
        while not closing:
            try:
                batch = [self.queue.get(timeout=quiet)]
            except queue.Empty:
                self._keep_lease()
                continue
            while True:
                try:
                    batch.append(self.queue.get_nowait())
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
                    entries += self.mapper.finish(now_ms())
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
        mapper = self.mapper
        if self.error is None and mapper.run is not None and not mapper.finished:
            try:
                self.appender.lease.acquire()
            except Exception as error:
                self._fail(error)

    def _map(self, event: AgentEvent | RunOutcome, ts: int) -> list[Entry]:
        mapper = self.mapper
        if isinstance(event, RunOutcome):
            mapper.note_end(event)
            return []
        started = mapper.started
        entries = mapper.take(event, ts)
        if not started and mapper.started:
            # The run starts: read the log as it is now, under the lease, and close the runs
            # dead writers (or a failed recording) left open before this one.
            self.appender.sync()
            entries = self.appender.close_stale_runs(mapper.actor, ts) + entries
        return entries

    def _write(self, entries: list[Entry]) -> None:
        if not entries:
            return
        self.appender.write(entries)
        mapper = self.mapper
        if mapper.run is not None and mapper.finished and self.commit is None:
            self.commit = self._commit(mapper.run.run_id, mapper.outcome)
            self.appender.release()

    def _fail(self, error: BaseException) -> None:
        self.error = error
        run = self.mapper.run
        logger.error(
            "GASP recording of run %s failed; recording stops, the run goes on: %s",
            None if run is None else run.run_id,
            error,
            exc_info=error,
        )
