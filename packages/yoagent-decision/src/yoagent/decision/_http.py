"""The HTTP side shared by the decision backends: keys, one POST, status mapping, retries.

Each call opens its own client (the floor's :func:`yoagent.core.support.http_client`, with
the project's per-operation timeouts: the model's own timeout bounds the whole call) unless
the backend was given one, so a model can be used from any event loop. The floor shares one
TLS context per process: building it is what makes a new client slow (measured: 75 ms for a
client with its own context, 1 ms with the shared one), so a fresh client per call costs
about a millisecond.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import httpx

from yoagent.core import RetryConfig
from yoagent.core.provider import parse_retry_after
from yoagent.core.support import REDACTED, Scrubber, display_url, html_summary, http_client

from ._errors import DecisionError, DecisionErrorKind

logger = logging.getLogger("yoagent.decision")

MAX_ERROR_BODY = 2_000
"""Bytes of a response body kept in an error."""
MAX_ERROR_READ = 64 * 1024
"""Bytes of an error response read (its excerpt and any error codes are at the start)."""
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The largest answer read; a decision response is a few kilobytes."""
CLOUDFLARE_DAILY_LIMIT = 3036
"""Workers AI: the account's daily free allocation is used up (a 429 no retry fixes)."""

T = TypeVar("T")

# --- keys ----------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class NoKey:
    """Send no key (a local server)."""


@dataclass(slots=True, frozen=True)
class FixedKey:
    """Send this key (never shown)."""

    value: str

    def __repr__(self) -> str:
        return f"FixedKey({REDACTED})"


@dataclass(slots=True, frozen=True)
class EnvKey:
    """Read the key at call time from the first of ``variables`` that is set and not blank."""

    variables: tuple[str, ...]


KeySource = NoKey | FixedKey | EnvKey


def describe_key(source: KeySource) -> str:
    """Where the key comes from, for a repr: never its value."""
    match source:
        case NoKey():
            return "none"
        case FixedKey():
            return REDACTED
        case EnvKey(variables=variables):
            return " or ".join(f"${name}" for name in variables)


_SENDABLE = re.compile(r"[\t\x20-\x7e]*")
"""What an HTTP header value can hold: visible ASCII, space and tab."""


def resolve_key(source: KeySource) -> tuple[str | None, str | None]:
    """``(key, variable it came from)``, trimmed; ``MISSING_API_KEY`` when there is none,
    ``INVALID`` when it holds what a header cannot carry (never showing it)."""
    key, variable = _find_key(source)
    if key is not None and _SENDABLE.fullmatch(key) is None:
        origin = f"${variable}" if variable else "with_api_key"
        raise DecisionError.invalid(
            f"the key from {origin} cannot be sent: it holds a line break, a control "
            "character or a non-ASCII character; check its value"
        )
    return key, variable


def _find_key(source: KeySource) -> tuple[str | None, str | None]:
    match source:
        case NoKey():
            return None, None
        case FixedKey(value=value):
            if not value.strip():
                raise DecisionError.missing_api_key(
                    "a non-empty key (the one given to with_api_key is empty)"
                )
            return value.strip(), None
        case EnvKey(variables=variables):
            for name in variables:
                value = os.environ.get(name, "").strip()
                if value:
                    return value, name
            names = " or ".join(variables)
            if any(name in os.environ for name in variables):
                names += " (set, but empty)"
            raise DecisionError.missing_api_key(names)


# --- one POST ------------------------------------------------------------------------------


def excerpt(text: str, limit: int) -> str:
    """At most ``limit`` bytes of ``text`` (on a character boundary), with ``…`` when cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit].decode(errors="ignore") + "…"


def encode_json(body: object) -> bytes:
    """A request body as compact UTF-8 JSON."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def post_json(
    url: str,
    body: bytes,
    *,
    key: str | None,
    client: httpx.AsyncClient | None = None,
) -> Any:
    """POST ``body`` and return the parsed JSON of a 2xx answer.

    Errors: a malformed URL is ``INVALID`` (never retried); a connection failure is
    ``TRANSPORT``; a non-2xx is mapped by :func:`status_error`; a 2xx whose body cannot be
    read or is not JSON is ``BAD_RESPONSE`` — not retried, since the server already billed
    it (:func:`httpx_errors`). The key is scrubbed from every error text.
    """
    headers = {"content-type": "application/json", "accept": "application/json"}
    if key is not None:
        headers["authorization"] = f"Bearer {key}"
    # A server may echo the URL in its error body, or the key.
    scrubber = Scrubber(urls=[url], headers=headers)
    with httpx_errors(url, scrubber):
        if client is not None:
            return await _exchange(client, url, body, headers, scrubber)
        async with http_client() as own:
            return await _exchange(own, url, body, headers, scrubber)


@contextmanager
def httpx_errors(url: str, scrubber: Scrubber, *, answered: bool = False) -> Generator[None]:
    """Inside the block, httpx's errors become :class:`DecisionError`, never chained to
    them: the package's one translation point.

    A URL httpx cannot send to is ``INVALID``; a connection failure or a timeout is
    ``TRANSPORT``, unless the server ``answered`` with a 2xx (it billed the call: a body
    that then breaks off is ``BAD_RESPONSE``, which is not retried); any other (a body
    that cannot be decoded) is ``BAD_RESPONSE``. The key and the secret parts of ``url``
    are scrubbed from the text (``scrubber``).
    """
    try:
        yield
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as error:
        shown = scrubber.scrub(display_url(url))
        detail = scrubber.scrub(str(error))
        raise DecisionError.invalid(
            f"the request could not be sent to {shown!r}: {detail}"
        ) from None
    except httpx.TransportError as error:
        if answered:
            raise DecisionError.bad_response(
                f"could not read the response body: {type(error).__name__}"
            ) from None
        detail = scrubber.scrub(str(error)) or type(error).__name__
        raise DecisionError.transport(f"{type(error).__name__}: {detail}") from None
    except httpx.HTTPError as error:
        detail = scrubber.scrub(str(error)) or type(error).__name__
        raise DecisionError.bad_response(f"{type(error).__name__}: {detail}") from None


async def _read(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


async def _exchange(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    scrubber: Scrubber,
) -> Any:
    async with client.stream("POST", url, content=body, headers=headers) as response:
        ok = 200 <= response.status_code < 300
        with httpx_errors(url, scrubber, answered=ok):
            raw, cut = await _read(response, MAX_RESPONSE_BYTES if ok else MAX_ERROR_READ)
    if ok and cut:
        raise DecisionError.bad_response(
            f"the response is over {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB"
        )
    text = raw.decode(errors="replace")
    if not ok:
        raise status_error(response.status_code, response.headers, scrubber.scrub(text))
    try:
        return json.loads(text)
    except ValueError as error:
        shown = html_summary(text, response.headers.get("content-type", ""))
        raise DecisionError.bad_response(
            f"response is not JSON ({error}): {shown or excerpt(scrubber.scrub(text), 200)}"
        ) from None


def cloudflare_codes(body: object) -> list[int]:
    """The ``code`` of each entry of a Cloudflare body's ``errors``."""
    if not isinstance(body, dict):
        return []
    errors = body.get("errors")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(errors, list):
        return []
    return [
        entry["code"]
        for entry in errors  # pyright: ignore[reportUnknownVariableType]
        if isinstance(entry, dict) and isinstance(entry.get("code"), int)  # pyright: ignore[reportUnknownMemberType]
    ]


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def status_error(status: int, headers: Mapping[str, str], text: str) -> DecisionError:
    """The error for a non-2xx answer (a web page summarised by its title)."""
    body = html_summary(text, headers.get("content-type", "")) or excerpt(text, MAX_ERROR_BODY)
    if status == 429 and CLOUDFLARE_DAILY_LIMIT in cloudflare_codes(_json_or_none(text)):
        return DecisionError.http(status, body)  # no retry helps before the daily reset
    if status in (429, 529):
        return DecisionError.rate_limited(status, parse_retry_after(headers), body)
    if status == 422:
        return DecisionError.invalid(f"server rejected the request (422): {body}")
    return DecisionError.http(status, body)


def name_key_variable(error: DecisionError, variable: str | None, fallback: str) -> DecisionError:
    """A 401/403 that says which variable the refused key came from (``fallback`` when the
    key was given in code)."""
    if error.kind is not DecisionErrorKind.HTTP or error.status not in (401, 403):
        return error
    origin = f"key from ${variable}" if variable else fallback
    return DecisionError.http(error.status or 0, f"{error.body} ({origin})".lstrip())


# --- retries -------------------------------------------------------------------------------


async def with_retries(retry: RetryConfig, send: Callable[[], Awaitable[T]]) -> T:
    """Run ``send`` until it succeeds, fails for good, or the retries are spent.

    Rate limits, overload and transport failures are retried with ``retry``'s backoff; a
    server's retry-after wins, capped at ``retry.max_delay``. A retry that would start
    after the caller's time limit (the enclosing cancel scope's deadline) is not waited
    for: the last error is raised as it is, so a refused connection is reported as one,
    never as the timeout the wait would have become.
    """
    attempt = 0
    while True:
        try:
            return await send()
        except DecisionError as error:
            if not error.retryable or attempt >= retry.max_retries:
                raise
            if error.retry_after is not None:
                delay = min(max(error.retry_after, 0.0), retry.max_delay)
            else:
                delay = retry.delay(attempt)
            if anyio.current_time() + delay >= anyio.current_effective_deadline():
                raise _out_of_time(error, attempt + 1) from None
            attempt += 1
            logger.warning(
                "decision model error (attempt %d/%d), retrying in %.1fs: %s",
                attempt,
                retry.max_retries,
                delay,
                error,
            )
            await anyio.sleep(delay)


def _out_of_time(error: DecisionError, tries: int) -> DecisionError:
    """``error``, saying that it was retried until no time was left for another try."""
    if error.kind is DecisionErrorKind.TRANSPORT:
        note = f"retried until the time limit: {tries} attempt{'s' if tries > 1 else ''}"
        return DecisionError.transport(f"{error.detail} ({note})")
    return error  # a rate limit's text already says to wait
