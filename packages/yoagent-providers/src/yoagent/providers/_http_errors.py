"""The one place that turns what went wrong on the wire into a :class:`ProviderError`.

HTTP statuses and error bodies, in-stream error events, transport failures (httpx's
errors: :func:`httpx_errors` is where any of them becomes a ``ProviderError``) and bodies
that end early all pass through here, so the rules hold everywhere: rate limits are
checked before overflow phrases (``yoagent.core.provider.classify``), an auth failure names the
variable the key came from, no text that leaves this module contains the key, and a
server's HTML page is summarised (its title), never shown raw.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import httpx

from yoagent.core import ErrorKind, ProviderError
from yoagent.core.provider import classify, parse_retry_after
from yoagent.core.support import Scrubber, display_url, html_summary

from ._json import parse_json
from ._logging import logger

_MAX_MESSAGE = 500
_SHOWN_STATUSES = frozenset({404, 405})
"""Statuses named in the message: a path the server does not have (a protocol it does
not speak, a wrong base URL) says nothing by its body alone."""


@dataclass(frozen=True, slots=True)
class KeySource:
    """Where a request's API key came from, for messages, and the secrets to scrub."""

    origin: str
    """Environment variable (``ANTHROPIC_API_KEY``), ``ModelConfig.api_key``, or ``""``."""
    hint: str
    """The variable a user should set when no key was sent."""
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def scrub(self, text: str) -> str:
        """``text`` with these secrets, and anything shaped like an API key, replaced
        (a gateway may echo a credential other than the one sent)."""
        return Scrubber(self.secrets).scrub(text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"


def _shortened(error: ProviderError) -> ProviderError:
    """``error`` with its message cut to a readable length (after it was classified whole)."""
    message = _short(error.message)
    if message == error.message:
        return error
    return ProviderError(error.kind, message, status=error.status, retry_after=error.retry_after)


def _error_fields(payload: object) -> tuple[str, tuple[object, ...]]:
    """The message and the structured ``type``/``code``/``status`` values of an error body."""
    if isinstance(payload, list) and payload:
        payload = cast(list[object], payload)[0]
    if not isinstance(payload, dict):
        return "", ()
    body = cast(dict[str, Any], payload)
    inner: object = body.get("error")
    error = cast(dict[str, Any], inner) if isinstance(inner, dict) else body
    codes: list[object] = []
    for name in ("type", "code", "status"):
        value = error.get(name)
        if isinstance(value, str | int) and value != "error":
            codes.append(value)
    message: object = error.get("message") or error.get("detail") or body.get("message")
    if isinstance(inner, str) and not message:
        message = inner
    return (message if isinstance(message, str) else ""), tuple(codes)


def _with_auth_hint(error: ProviderError, key: KeySource) -> ProviderError:
    if error.kind is not ErrorKind.AUTH:
        return error
    status = f" ({error.status})" if error.status is not None else ""
    if key.origin:
        text = f"the server refused the key from {key.origin}{status}: {error.message}"
    else:
        text = f"the server refused the request{status}: no API key was sent; set {key.hint}"
        text += f" ({error.message})"
    return ProviderError(ErrorKind.AUTH, text, status=error.status)


def from_http_status(
    status: int, headers: Mapping[str, str], body: bytes, key: KeySource
) -> ProviderError:
    """The error for a non-2xx response, from its status, headers and body."""
    raw = body.decode("utf-8", errors="replace")
    try:
        parsed = parse_json(raw)
    except ValueError:
        parsed = None
    message, codes = _error_fields(parsed)
    page = html_summary(raw, headers.get("content-type", "")) if not message else None
    # Scrubbed before it is cut (a cut key escapes the scrub) and classified whole (an
    # overflow phrase may come late); shortened last.
    text = key.scrub(page or message or raw)
    if page is not None or status in _SHOWN_STATUSES:
        text = f"HTTP {status}: {text}" if text.strip() else f"HTTP {status}"
    error = classify(
        status=status, codes=codes, message=text, retry_after=parse_retry_after(headers)
    )
    error = _with_auth_hint(_shortened(error), key)
    logger.debug("HTTP %s from provider: %s", status, error.message)
    return error


def from_stream_error(payload: object, key: KeySource) -> ProviderError:
    """The error for an error event inside a stream (Anthropic ``error``, ``{"error": ...}``)."""
    message, codes = _error_fields(payload)
    text = key.scrub(message or "the server sent an error event")
    error = _shortened(classify(codes=codes, message=text))
    logger.debug("error event in stream: %s", error.message)
    return error


def url_problem(url: httpx.URL | str) -> str | None:
    """Why no request can go to ``url``, or ``None``.

    Checked before sending: an out-of-range port otherwise fails deep in the socket layer
    (an ``OverflowError`` in an ``ExceptionGroup`` under asyncio, a retried connection
    error under trio).
    """
    if isinstance(url, str):
        return _str_url_problem(url)
    return _parsed_url_problem(url)


@lru_cache(maxsize=256)
def _str_url_problem(url: str) -> str | None:
    # Cached: a provider sends every request of a run to the same URL, and parsing it
    # (``httpx.URL``, ``ipaddress``) was ≈ 20 µs of each turn.
    return _parsed_url_problem(url)


def _parsed_url_problem(url: httpx.URL | str) -> str | None:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return str(exc)
    if parsed.scheme not in ("http", "https"):
        return "the URL must start with http:// or https://"
    if not parsed.host:
        return "the URL has no host"
    if parsed.port is not None and not 0 < parsed.port < 65536:
        return f"port {parsed.port} is out of range (1-65535)"
    return None


def bad_url(detail: str, key: KeySource) -> ProviderError:
    """An OTHER error for a URL no request can go to: a configuration mistake, never retried."""
    shown = _short(key.scrub(detail))
    return ProviderError(ErrorKind.OTHER, f"cannot send to the configured base_url: {shown}")


def from_transport(
    exc: Exception, key: KeySource, url: httpx.URL | str | None = None
) -> ProviderError:
    """A NETWORK error for a failed connection, a timeout or a broken body (OTHER for a bad URL).

    With ``url`` the message names the request first, ``POST https://host/path: could not
    connect: detail``, the URL shown by :func:`~yoagent.core.support.display_url` (no
    credentials, no query, no key-like path segment).
    """
    if isinstance(exc, httpx.UnsupportedProtocol):
        return bad_url(str(exc), key)
    if isinstance(exc, httpx.ConnectTimeout):
        what = "connecting timed out"
    elif isinstance(exc, httpx.ReadTimeout):
        what = "the stream stalled (no data within the read timeout)"
    elif isinstance(exc, httpx.PoolTimeout):
        # Only a caller's own client has a connection cap (the shared ones have none).
        what = (
            "no connection of the HTTP client's pool was free within its pool timeout "
            "(all its httpx.Limits.max_connections were in use)"
        )
    elif isinstance(exc, httpx.TimeoutException):
        what = "the request timed out"
    elif isinstance(exc, httpx.ConnectError):
        what = "could not connect"
    elif isinstance(exc, httpx.RemoteProtocolError):
        what = "the connection broke mid-response"
    else:
        what = f"transport error ({type(exc).__name__})"
    if url is not None:
        what = f"POST {display_url(str(url))}: {what}"
    detail = _short(key.scrub(str(exc)))
    text = f"{what}: {detail}" if detail else what
    logger.debug("network failure: %s", text)
    return ProviderError(ErrorKind.NETWORK, text)


@contextmanager
def httpx_errors(
    key: KeySource,
    invalid_url: Callable[[str], ProviderError] | None = None,
    *,
    url: httpx.URL | str | None = None,
) -> Generator[None]:
    """Inside the block, httpx's errors become :class:`ProviderError`, never chained to them.

    A transport failure or a timeout is :func:`from_transport`'s NETWORK error (naming
    ``url``, the request's, shown safely); a URL httpx refuses is ``invalid_url(its
    message)``, :func:`bad_url` by default. Texts are scrubbed of ``key``'s secrets.
    """
    try:
        yield
    except httpx.HTTPError as exc:
        raise from_transport(exc, key, url) from None
    except httpx.InvalidURL as exc:
        detail = str(exc)
        raise (bad_url(detail, key) if invalid_url is None else invalid_url(detail)) from None


def ended_early(what: str) -> ProviderError:
    """A NETWORK error for a stream whose body ended before the reply was complete."""
    return ProviderError(ErrorKind.NETWORK, f"the stream ended early: {what}")


def malformed(what: str) -> ProviderError:
    """An API error for a stream event that could not be understood."""
    return ProviderError(ErrorKind.API, f"malformed stream: {what}")
