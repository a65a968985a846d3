"""Keys in a server URL: naming a server by its origin, and scrubbing the rest from text.

A URL such as ``https://user:pw@host/mcp/sk-abc123456?token=xyz98765`` carries secrets in
its userinfo, path and query. Errors and logs name the server by ``scheme://host[:port]``
only; any text that may echo the URL (a server's error message, an HTTP library's
exception, a log record of the SDK or of httpx2) goes through :meth:`UrlSecrets.scrub`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import SplitResult, unquote, urlsplit

REDACTED: Final = "[redacted]"
_MIN_SECRET: Final = 8  # shorter pieces (`mcp`, `v1`, `api`) are names, not keys


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: no userinfo, path, query or fragment."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def _pieces(parts: SplitResult) -> set[str]:
    found: set[str] = set()
    for value in (parts.username, parts.password):
        if value:
            found.add(value)
    found.update(segment for segment in parts.path.split("/") if segment)
    for pair in parts.query.split("&"):
        if not pair:
            continue
        found.add(pair)
        found.update(piece for piece in pair.split("=", 1) if piece)
    if parts.fragment:
        found.add(parts.fragment)
    return found


class UrlSecrets:
    """The parts of one URL that may be secret, and a scrubber that removes them from text.

    Every userinfo part, path segment, query pair, key and value of 8+ characters is a
    secret, as written and percent-decoded; so is the whole path-and-query around one.
    A key-free path such as ``/mcp`` stays readable.
    """

    __slots__ = ("_secrets",)

    def __init__(self, url: str) -> None:
        secrets: set[str] = set()
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            parts = None
        if parts is not None:
            raw = _pieces(parts)
            candidates = raw | {unquote(piece) for piece in raw}
            secrets = {piece for piece in candidates if len(piece) >= _MIN_SECRET}
            if secrets:
                tail = parts.path + (f"?{parts.query}" if parts.query else "")
                for whole in (tail, unquote(tail), url.strip()):
                    if len(whole) >= _MIN_SECRET and any(piece in whole for piece in secrets):
                        secrets.add(whole)
        # Longest first, so a whole path is replaced before the segments inside it.
        self._secrets = tuple(sorted(secrets, key=len, reverse=True))

    @property
    def empty(self) -> bool:
        """True when the URL holds nothing that looks like a key."""
        return not self._secrets

    def scrub(self, text: str) -> str:
        """``text`` with every secret piece of the URL replaced by ``[redacted]``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def excerpt(self, text: str, limit: int = 200) -> str:
        """A scrubbed excerpt of a server's body for an error message (at most ``limit`` chars)."""
        text = self.scrub(text.strip())
        return text if len(text) <= limit else text[:limit] + "…"


class _ScrubLogs(logging.Filter):
    """Scrubs every registered URL's secrets from a record (as a filter, or when it is made)."""

    def __init__(self) -> None:
        super().__init__("yoagent.mcp.scrub")
        self._lock = threading.Lock()
        self._active: dict[int, UrlSecrets] = {}

    @property
    def active(self) -> bool:
        """True while a connection with secrets in its URL lives."""
        return bool(self._active)

    def register(self, secrets: UrlSecrets) -> None:
        with self._lock:
            self._active[id(secrets)] = secrets

    def unregister(self, secrets: UrlSecrets) -> None:
        with self._lock:
            self._active.pop(id(secrets), None)

    def scrub(self, text: str) -> str:
        with self._lock:
            active = list(self._active.values())
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


# The loggers the SDK's client side and its HTTP stack write to; "client" is the
# name the SDK's session module logs under.
_PREFIXES: Final = ("mcp", "mcp_types", "httpx2", "httpcore2")
_BELOW: Final = tuple(f"{prefix}." for prefix in _PREFIXES)
_EXACT: Final = ("client",)
_ROOTS: Final = (*_PREFIXES, *_EXACT)

RecordFactory = Callable[..., logging.LogRecord]

_filter = _ScrubLogs()
_install_lock = threading.Lock()
_filtered: set[str] = set()
_factory: RecordFactory | None = None  # the record factory installed here


def guarded_name(name: str) -> bool:
    """True for the loggers whose records are scrubbed: the SDK's, httpx2's, httpcore2's."""
    return name in _EXACT or name in _PREFIXES or name.startswith(_BELOW)


def _scrubbing(previous: RecordFactory) -> RecordFactory:
    def make_record(name: str, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(name, *args, **kwargs)
        # The cheapest test first: most records are of other loggers.
        if name.startswith(_ROOTS) and _filter.active and guarded_name(name):
            _filter.scrub_record(record)
        return record

    return make_record


def guard_logs(secrets: UrlSecrets) -> None:
    """Scrub ``secrets`` from the SDK's and httpx2's log records until :func:`unguard_logs`.

    A logging filter sees only the records of the logger it sits on, not its children's,
    and httpx2 imports httpcore2 (whose loggers log response headers, a redirect's
    ``Location`` included) only when the first client is built, after this runs. So the
    record factory is wrapped (once; again if it was reset to the default) to scrub a
    guarded logger's record as it is made, whenever that logger was created; a record is
    made only for an enabled level, so with logging off this never runs. A filter also
    goes on every guarded logger that exists now, the parents included, which stays in
    effect if a program replaces the record factory without calling the one it replaced.
    """
    global _factory
    if secrets.empty:
        return
    with _install_lock:
        current = logging.getLogRecordFactory()
        if _factory is None or current is logging.LogRecord:
            _factory = _scrubbing(current)
            logging.setLogRecordFactory(_factory)
        names = [*_EXACT, *_PREFIXES, *logging.Logger.manager.loggerDict]
        for name in names:
            if name not in _filtered and guarded_name(name):
                logging.getLogger(name).addFilter(_filter)
                _filtered.add(name)
    _filter.register(secrets)


def unguard_logs(secrets: UrlSecrets) -> None:
    """Stop scrubbing ``secrets`` (the connection that used them has ended)."""
    _filter.unregister(secrets)
