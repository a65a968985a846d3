"""Scrubbing the secrets of the requests in flight from httpx's and httpcore's log records.

httpx logs every request's URL at INFO (a query-string key included); httpcore logs each
response's headers at DEBUG (a redirect's ``Location`` may echo the key). A logging
filter sees only the records of the logger it sits on, not those of its children, and
httpcore makes its loggers late: httpx imports it when the first client is built, after
a call has started guarding. So there are two layers:

- a record factory (``logging.setLogRecordFactory``) wrapped around the one in place,
  which scrubs a record of a logger named ``httpx``/``httpcore`` or below as it is made,
  whenever that logger was created. A record is made only for a level that is enabled,
  so with logging off it never runs; otherwise it costs one name test per record
  (``benchmarks/log_scrub.py``).
- a filter on each such logger that exists when a call starts (the parents included),
  which stays in effect if a program later replaces the record factory without calling
  the one it replaced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Any, Final

from ._secrets import Secrets

_GUARDED: Final = ("httpx", "httpcore")
_BELOW: Final = tuple(f"{name}." for name in _GUARDED)

RecordFactory = Callable[..., logging.LogRecord]


def guarded_name(name: str) -> bool:
    """True for the loggers whose records are scrubbed: ``httpx``, ``httpcore`` and below."""
    return name in _GUARDED or name.startswith(_BELOW)


class _ScrubRecords(logging.Filter):
    """Scrubs the active requests' secrets from a record (as a filter, or when it is made)."""

    def __init__(self) -> None:
        super().__init__("yoagent.openapi.scrub")
        self._lock = threading.Lock()
        self._active: dict[int, tuple[Secrets, int]] = {}

    @property
    def active(self) -> bool:
        """True while a call with secrets is in flight."""
        return bool(self._active)

    def register(self, secrets: Secrets) -> None:
        with self._lock:
            _, count = self._active.get(id(secrets), (secrets, 0))
            self._active[id(secrets)] = (secrets, count + 1)

    def unregister(self, secrets: Secrets) -> None:
        with self._lock:
            held = self._active.get(id(secrets))
            if held is None:
                return
            if held[1] <= 1:
                del self._active[id(secrets)]
            else:
                self._active[id(secrets)] = (secrets, held[1] - 1)

    def scrub(self, text: str) -> str:
        with self._lock:
            active = [secrets for secrets, _ in self._active.values()]
        for secrets in active:
            text = secrets.scrub(text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self._active:
            self.scrub_record(record)
        return True

    def scrub_record(self, record: logging.LogRecord) -> None:
        """Replace the record's message (and formatted traceback) with scrubbed text."""
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the handler's to report
            return
        scrubbed = self.scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_info is not None:
            formatted = logging.Formatter().formatException(record.exc_info)
            record.exc_text = self.scrub(formatted)
            record.exc_info = None  # handlers must not format the raw exception again
        elif record.exc_text:
            record.exc_text = self.scrub(record.exc_text)


_filter = _ScrubRecords()
_lock = threading.Lock()
_filtered: set[str] = set()
_loggers_seen = -1  # how many loggers existed at the last look
_factory: RecordFactory | None = None  # the record factory installed here


def _scrubbing(previous: RecordFactory) -> RecordFactory:
    def make_record(name: str, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(name, *args, **kwargs)
        # The cheapest test first: most records are of other loggers.
        if name.startswith(_GUARDED) and _filter.active and guarded_name(name):
            _filter.scrub_record(record)
        return record

    return make_record


def _install() -> None:
    """Wrap the record factory (once; again if it was reset to the default) and put the
    filter on every guarded logger that exists now."""
    global _factory, _loggers_seen
    with _lock:
        current = logging.getLogRecordFactory()
        if _factory is None or current is logging.LogRecord:
            _factory = _scrubbing(current)
            logging.setLogRecordFactory(_factory)
        existing = logging.Logger.manager.loggerDict
        if len(existing) == _loggers_seen:  # no logger was made since the last look
            return
        for name in [*_GUARDED, *existing]:
            if name not in _filtered and guarded_name(name):
                logging.getLogger(name).addFilter(_filter)
                _filtered.add(name)
        _loggers_seen = len(existing)


@contextmanager
def guarded_logs(secrets: Secrets) -> Generator[None]:
    """Scrub ``secrets`` from httpx's and httpcore's log records inside the block."""
    if not secrets:
        yield
        return
    _install()
    _filter.register(secrets)
    try:
        yield
    finally:
        _filter.unregister(secrets)
