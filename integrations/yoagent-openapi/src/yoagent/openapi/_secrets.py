"""Keeping the caller's credentials out of everything the model or a log can read.

A :class:`Secrets` holds every credential value an adapter sends (tokens, keys,
passwords, extra header values) in each form it may come back in: as given,
percent-encoded (a key in a query string) and, for basic auth, base64-encoded. Every
text an OpenAPI tool returns or raises goes through :meth:`Secrets.scrub`, so a server
that echoes a key (``invalid key sk-...``) shows ``[redacted]`` instead; and while a
request is in flight the ``httpx``/``httpcore`` loggers scrub their records too (httpx
logs every request's full URL at INFO, query-string keys included).
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from typing import Final
from urllib.parse import quote, quote_plus

REDACTED: Final = "[redacted]"


class Secrets:
    """Credential values, and the scrubber that removes them from text."""

    __slots__ = ("_values",)

    def __init__(self, values: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for value in values:
            if value:
                forms.update({value, quote(value, safe=""), quote_plus(value)})
        # Longest first: a value is replaced before any shorter value inside it.
        self._values = tuple(sorted(forms, key=len, reverse=True))

    @classmethod
    def of(cls, *groups: Iterable[str]) -> Secrets:
        """The secrets of several sources together."""
        return cls(value for group in groups for value in group)

    def __bool__(self) -> bool:
        return bool(self._values)

    def scrub(self, text: str) -> str:
        """``text`` with every credential value replaced by ``[redacted]``."""
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text


def basic_forms(username: str, password: str) -> tuple[str, ...]:
    """The values basic auth sends: the password and the base64 of ``user:password``."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return (password, token)


class _ScrubRecords(logging.Filter):
    """Scrubs the active requests' secrets from the records of the loggers it sits on."""

    def __init__(self) -> None:
        super().__init__("yoagent.openapi.scrub")
        self._lock = threading.Lock()
        self._active: dict[int, tuple[Secrets, int]] = {}

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

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            active = [secrets for secrets, _ in self._active.values()]
        if not active:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the handler's to report
            return True
        scrubbed = message
        for secrets in active:
            scrubbed = secrets.scrub(scrubbed)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_info is not None:
            text = logging.Formatter().formatException(record.exc_info)
            for secrets in active:
                text = secrets.scrub(text)
            record.exc_text, record.exc_info = text, None
        return True


_filter = _ScrubRecords()
_GUARDED: Final = ("httpx", "httpcore")
_installed: set[str] = set()
_install_lock = threading.Lock()
_loggers_seen = -1  # how many loggers existed at the last look


def _install() -> None:
    """Put the filter on every httpx/httpcore logger that exists now (some are made late)."""
    global _loggers_seen
    existing = logging.Logger.manager.loggerDict
    if len(existing) == _loggers_seen:  # no logger was made since the last look
        return
    with _install_lock:
        for name in [*_GUARDED, *existing]:
            if name not in _installed and any(
                name == p or name.startswith(p + ".") for p in _GUARDED
            ):
                logging.getLogger(name).addFilter(_filter)
                _installed.add(name)
        _loggers_seen = len(existing)


@contextmanager
def guarded_logs(secrets: Secrets) -> Generator[None]:
    """Scrub ``secrets`` from httpx's and httpcore's log records inside the block.

    A logging filter sees only records logged on its own logger, so it is put on every
    logger of those libraries, looked for again each time (httpcore makes some late).
    """
    if not secrets:
        yield
        return
    _install()
    _filter.register(secrets)
    try:
        yield
    finally:
        _filter.unregister(secrets)
