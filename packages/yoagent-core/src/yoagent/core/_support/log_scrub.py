"""The log scrub guard: a library's log records scrubbed while a connection or call lives.

HTTP libraries log what a package cannot scrub before it is written: httpx logs every
request's URL at INFO (a query-string key included), httpcore logs response headers at
DEBUG (a redirect's ``Location`` may echo a key). A logging filter sees only the records
of the logger it sits on, not its children's, and such libraries make their loggers
late (httpx imports httpcore when the first client is built, after a call started
guarding). So there are two layers:

- a record factory (``logging.setLogRecordFactory``) wrapped around the one in place,
  which scrubs a guarded logger's record as it is made, whenever that logger was
  created. A record is made only for an enabled level, so with logging off this never
  runs; otherwise it costs one name test per record.
- a filter on each guarded logger that exists when a guard starts (the parents
  included), which stays in effect if a program later replaces the record factory
  without calling the one it replaced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Final

from .scrub import Scrubber

RecordFactory = Callable[..., logging.LogRecord]


class LogScrubGuard:
    """Scrubs its loggers' records until :meth:`close` (or the end of a ``with`` block)."""

    __slots__ = ("_closed", "loggers", "scrubber")

    def __init__(self, scrubber: Scrubber, loggers: tuple[str, ...]) -> None:
        self.scrubber = scrubber
        self.loggers = loggers
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else "active"
        return f"<LogScrubGuard {', '.join(self.loggers)} ({state})>"

    def covers(self, name: str) -> bool:
        """True for a record of one of the guarded loggers, or of a logger below one."""
        return any(name == root or name.startswith(f"{root}.") for root in self.loggers)

    def close(self) -> None:
        """Stop scrubbing (idempotent)."""
        if not self._closed:
            self._closed = True
            _registry.remove(self)

    def __enter__(self) -> LogScrubGuard:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def scrub_logs(scrubber: Scrubber, loggers: Iterable[str]) -> LogScrubGuard:
    """Scrub ``scrubber``'s secrets from the records of ``loggers`` and the loggers below
    them, until the returned guard is closed (use it as a context manager, or call
    :meth:`~LogScrubGuard.close` when the connection that knew the secrets ends).

    Guards are independent: each scrubs only its own loggers, with its own scrubber, and
    closing one leaves the others in force. A scrubber that knows no value installs
    nothing (key shapes alone never rewrite a library's logs).
    """
    guard = LogScrubGuard(scrubber, tuple(loggers))
    if scrubber:
        _registry.add(guard)
    else:
        guard.close()
    return guard


class _Registry(logging.Filter):
    """The active guards; as a filter (and from the record factory) it scrubs records."""

    def __init__(self) -> None:
        super().__init__("yoagent.core.support.scrub")
        self._lock = threading.Lock()
        self._guards: tuple[LogScrubGuard, ...] = ()
        self._roots: tuple[str, ...] = ()  # every guarded logger name, for a quick test
        self._filtered: set[str] = set()
        self._loggers_seen = -1  # how many loggers existed at the last look
        self._factory: RecordFactory | None = None  # the record factory installed here

    def add(self, guard: LogScrubGuard) -> None:
        with self._lock:
            self._guards = (*self._guards, guard)
            self._roots = tuple({*self._roots, *guard.loggers})
            current = logging.getLogRecordFactory()
            # Another factory in place of ours (ours reset, then another library's set,
            # as ray.init does) must be wrapped too: a logger made later is scrubbed
            # only by it. A factory that still calls ours scrubs twice, which is harmless.
            if current is not self._factory:
                self._factory = self._scrubbing(current)
                logging.setLogRecordFactory(self._factory)
            existing = logging.Logger.manager.loggerDict
            if len(existing) != self._loggers_seen or not self._filtered.issuperset(guard.loggers):
                for name in [*guard.loggers, *self._roots, *existing]:
                    if name not in self._filtered and self._guarded(name, self._roots):
                        logging.getLogger(name).addFilter(self)
                        self._filtered.add(name)
                self._loggers_seen = len(existing)

    def remove(self, guard: LogScrubGuard) -> None:
        with self._lock:
            self._guards = tuple(active for active in self._guards if active is not guard)
            self._roots = tuple({root for active in self._guards for root in active.loggers})

    @staticmethod
    def _guarded(name: str, roots: tuple[str, ...]) -> bool:
        return any(name == root or name.startswith(f"{root}.") for root in roots)

    def _scrubbing(self, previous: RecordFactory) -> RecordFactory:
        def make_record(name: str, *args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(name, *args, **kwargs)
            # The cheapest test first: most records are of other loggers.
            roots = self._roots
            if roots and name.startswith(roots):
                self.scrub_record(record)
            return record

        return make_record

    def filter(self, record: logging.LogRecord) -> bool:
        if self._guards:
            self.scrub_record(record)
        return True

    def scrub_record(self, record: logging.LogRecord) -> None:
        """Replace the record's message (and formatted traceback) with scrubbed text."""
        guards = [guard for guard in self._guards if guard.covers(record.name)]
        if not guards:
            return

        def scrub(text: str) -> str:
            for guard in guards:
                text = guard.scrubber.scrub(text)
            return text

        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the handler's to report
            return
        scrubbed = scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_info is not None:
            formatted = logging.Formatter().formatException(record.exc_info)
            record.exc_text = scrub(formatted)
            record.exc_info = None  # handlers must not format the raw exception again
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text)


_registry: Final = _Registry()
