"""The HTTP side of a provider: one client per provider, keys, and the SSE read loop."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Self, cast

import anyio
import httpx

from yoagent.core import ErrorKind, ModelConfig, ProviderError
from yoagent.core.provider import key_variables_for, resolve_api_key

from ._http_errors import (
    KeySource,
    bad_url,
    from_http_status,
    from_stream_error,
    from_transport,
    malformed,
)
from ._sse import SseDecoder, SseEvent

DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=30.0)
"""Read is the longest silence allowed between two chunks of a stream: a stalled stream ends
with a NETWORK error after it. Reasoning models can think for minutes before their first
token, hence the generous default."""

_MAX_ERROR_BODY = 64 * 1024
_MAX_DRAIN = 64 * 1024
_DRAIN_SECONDS = 0.5


_SENSITIVE_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")
# What HTTP/1.1 lets a header hold: visible ASCII, space and tab; names are tokens.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_UNSENDABLE = "a line break, a control character or a non-ASCII character"


def resolve_key(config: ModelConfig) -> tuple[str, KeySource]:
    """The key to send for ``config`` and where it came from (never logged or shown)."""
    variables = key_variables_for(config.provider)
    hint = variables[0]
    # Credentials the user put in headers are scrubbed from messages like the key.
    extra = tuple(
        value.removeprefix("Bearer ").strip()
        for name, value in config.headers.items()
        if name.lower() in _SENSITIVE_HEADERS
    )
    if config.api_key:
        key = config.api_key.strip()
        origin = next(
            (name for name in variables if os.environ.get(name, "").strip() == key),
            "ModelConfig.api_key",
        )
    else:
        found = resolve_api_key(config.provider)
        if found is None:
            # Local servers (Ollama, LM Studio, vLLM) need none; a remote one answers 401,
            # which names `hint`.
            return "", KeySource(origin="", hint=hint, secrets=extra)
        origin, key = found
    if not _HEADER_VALUE.fullmatch(key):
        raise ProviderError(
            ErrorKind.AUTH,
            f"the key from {origin} cannot be sent: it holds {_UNSENDABLE}; check its value",
        )
    return key, KeySource(origin=origin, hint=hint, secrets=(key, *extra))


def check_headers(headers: Mapping[str, str]) -> None:
    """Refuse, before sending, a header HTTP cannot carry; the error names it, never its value.

    A credential header is an AUTH error, any other an OTHER error: retrying cannot help.
    """
    for name, value in headers.items():
        if _HEADER_NAME.fullmatch(name) is None:
            raise ProviderError(ErrorKind.OTHER, f"{name!r} is not a valid HTTP header name")
        if _HEADER_VALUE.fullmatch(value) is None:
            kind = ErrorKind.AUTH if name.lower() in _SENSITIVE_HEADERS else ErrorKind.OTHER
            raise ProviderError(
                kind, f"the {name} header cannot be sent: its value holds {_UNSENDABLE}"
            )


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The request body as compact UTF-8 JSON."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


class Transport:
    """One ``httpx.AsyncClient`` (connections reused across turns) and the SSE read loop."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
    ) -> None:
        self._owned = client is None
        if isinstance(timeout, httpx.Timeout):
            self._timeout: httpx.Timeout | None = timeout
        elif timeout is not None:
            self._timeout = httpx.Timeout(timeout)
        else:
            # A client passed in keeps its own timeouts unless told otherwise.
            self._timeout = DEFAULT_TIMEOUT if client is None else None
        self.client = client if client is not None else httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)

    async def aclose(self) -> None:
        """Close the client if this transport created it."""
        if self._owned:
            await self.client.aclose()

    async def post_sse(
        self,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
        key: KeySource,
        on_event: Callable[[SseEvent], bool],
    ) -> bool:
        """POST ``body`` and hand each SSE event to ``on_event`` until it returns True.

        Returns True when the body ended inside an event (cut mid-event), False otherwise.
        A non-2xx status, a transport failure or a timeout is raised as a ProviderError;
        cancellation closes the response.
        """
        check_headers(headers)
        try:
            timeout = self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT
            async with self.client.stream(
                "POST", url, headers=headers, content=body, timeout=timeout
            ) as response:
                if not 200 <= response.status_code < 300:
                    raw = await _read_capped(response)
                    raise from_http_status(response.status_code, response.headers, raw, key)
                content_type = response.headers.get("content-type", "")
                if content_type.startswith("application/json"):
                    # Some gateways answer an error as JSON with a 200 status.
                    raw = await _read_capped(response)
                    raise _json_reply_error(raw, key)
                decoder = SseDecoder()
                chunks = response.aiter_bytes()
                async for chunk in chunks:
                    for event in decoder.feed(chunk):
                        if on_event(event):
                            await _drain(chunks)
                            return False
                return decoder.close()
        except httpx.HTTPError as exc:
            raise from_transport(exc, key) from None
        except httpx.InvalidURL as exc:
            raise bad_url(exc, key) from None


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what little follows the final event, so the connection can be reused.

    The reply is already complete: a server that stalls, keeps talking or breaks the
    connection now costs the connection (it is closed instead of reused), never the reply.
    """
    size = 0
    with anyio.move_on_after(_DRAIN_SECONDS):
        try:
            async for chunk in chunks:
                size += len(chunk)
                if size > _MAX_DRAIN:
                    return
        except httpx.HTTPError:
            return


async def _read_capped(response: httpx.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= _MAX_ERROR_BODY:
            break
    return b"".join(parts)[:_MAX_ERROR_BODY]


def _json_reply_error(raw: bytes, key: KeySource) -> ProviderError:
    try:
        payload: object = json.loads(raw)
    except ValueError:
        payload = None
    if isinstance(payload, dict) and "error" in payload:
        return from_stream_error(cast(object, payload), key)
    return malformed("expected an event stream, got a JSON document")


class HttpProvider:
    """What every HTTP provider shares: the config it was built for and its :class:`Transport`.

    One ``httpx.AsyncClient`` per instance is reused across turns; pass ``client`` to share
    one, ``timeout`` to change when a stalled stream gives up.
    """

    def __init__(
        self,
        config: ModelConfig | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
    ) -> None:
        self.config = config
        self._transport = Transport(client, timeout)

    async def aclose(self) -> None:
        """Close the HTTP client this provider created."""
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
