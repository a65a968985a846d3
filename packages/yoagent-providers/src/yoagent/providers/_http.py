"""The HTTP side of a provider: the request body, the client and the read loop.

Which key a request sends is ``_keys``'s; what a header may hold is ``_headers``'s.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Any, Protocol, Self, TypedDict

import anyio
import httpx
import sniffio

from yoagent.core import AssistantMessage, ErrorKind, ModelConfig, ProviderError
from yoagent.core.support import merge_headers, utf8_safe_json

from ._body import ACCEPT_ENCODING, DEFAULT_LIMITS, StreamLimits, bounded_body, read_prefix
from ._headers import check_headers
from ._http_errors import (
    KeySource,
    bad_url,
    from_http_status,
    from_stream_error,
    httpx_errors,
    malformed,
    url_problem,
)
from ._json import as_dict, parse_json
from ._pool import DEFAULT_TIMEOUT, shared_client
from ._sse import SseEvent, SseReader

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpOptions",
    "HttpProvider",
    "StreamLimits",
    "Transport",
    "encode_body",
]

_MAX_ERROR_BODY = 64 * 1024
_MAX_DRAIN = 64 * 1024
_DRAIN_SECONDS = 0.5


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The request body as compact UTF-8 JSON (:func:`json_text`, then :func:`utf8`)."""
    return utf8(json_text(body))


def json_text(value: object) -> str:
    """``value`` as compact JSON text, non-ASCII kept as it is (the request's encoding).

    A value nested too deeply for the encoder is an OTHER error, never a ``RecursionError``.
    """
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        raise nested_too_deeply() from None


def nested_too_deeply() -> ProviderError:
    """The OTHER error for a request holding a value too deeply nested to encode."""
    return ProviderError(
        ErrorKind.OTHER, "the request cannot be encoded: a value in it is nested too deeply"
    )


def utf8(text: str) -> bytes:
    """``text`` as UTF-8.

    Text that UTF-8 cannot hold (a lone surrogate, e.g. a file name with undecodable
    bytes already in the history) is sent readable instead of failing every request, by
    the floor's surrogate policy (:func:`yoagent.core.support.utf8_safe_json`).
    """
    try:
        return text.encode()
    except UnicodeEncodeError:
        return utf8_safe_json(text).encode()


class Transport:
    """Sends a request and reads its streamed body, on the shared client or the caller's own.

    Without ``client``, each request uses :func:`~yoagent.providers._pool.shared_client`
    for its URL (one connection pool per event loop and server); with one, that client
    is used as is and never closed here.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
        limits: StreamLimits = DEFAULT_LIMITS,
    ) -> None:
        self._client = client
        self.limits = limits
        if isinstance(timeout, httpx.Timeout):
            self._timeout: httpx.Timeout | None = timeout
        elif timeout is not None:
            self._timeout = httpx.Timeout(timeout)
        else:
            # A client passed in keeps its own timeouts unless told otherwise.
            self._timeout = DEFAULT_TIMEOUT if client is None else None

    def client_for(self, url: httpx.URL | str) -> httpx.AsyncClient:
        """The client a request to ``url`` goes through (call inside the event loop)."""
        return self._client if self._client is not None else shared_client(str(url))

    async def aclose(self) -> None:
        """Nothing to close: shared clients outlive a provider, a caller's client is theirs."""

    @asynccontextmanager
    async def open(
        self, url: httpx.URL | str, headers: Mapping[str, str], body: bytes, key: KeySource
    ) -> AsyncGenerator[AsyncIterator[bytes]]:
        """POST ``body`` and give the decompressed response body, within :attr:`limits`.

        A non-2xx status, a JSON document where a stream was expected, a transport
        failure or a timeout is raised as a :class:`ProviderError`; leaving the block
        (cancellation included) closes the response.
        """
        check_headers(headers)
        problem = url_problem(url)
        if problem is not None:
            raise bad_url(problem, key)
        sent = merge_headers({"accept-encoding": ACCEPT_ENCODING}, headers)
        timeout = self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT
        with httpx_errors(key, url=url):
            client = self.client_for(url)
            async with client.stream(
                "POST", url, headers=sent, content=body, timeout=timeout
            ) as response:
                if not 200 <= response.status_code < 300:
                    raw = await _read_capped(response)
                    raise from_http_status(response.status_code, response.headers, raw, key)
                if response.headers.get("content-type", "").startswith("application/json"):
                    # Some gateways answer an error as JSON with a 200 status.
                    raise _json_reply_error(await _read_capped(response), key)
                encoding = response.headers.get("content-encoding", "")
                # Closed here, not by the garbage collector, when the reader stops early.
                async with aclosing(
                    bounded_body(response.aiter_raw(), encoding, self.limits)
                ) as decoded:
                    yield decoded

    async def post(
        self,
        url: httpx.URL | str,
        headers: Mapping[str, str],
        body: bytes,
        key: KeySource,
        feed: Callable[[bytes], bool],
    ) -> None:
        """POST ``body`` and hand each piece of the reply to ``feed`` until it returns True.

        ``feed`` gets the decompressed body within :attr:`limits`, in pieces of any size.
        The body may end at any point: whether the reply was complete is for the protocol
        to say (its terminal event). Errors as in :meth:`open`.
        """
        async with self.open(url, headers, body, key) as chunks:
            async for chunk in chunks:
                if feed(chunk):
                    await _drain(chunks)
                    return

    async def post_sse(
        self,
        url: httpx.URL | str,
        headers: Mapping[str, str],
        body: bytes,
        key: KeySource,
        on_event: Callable[[SseEvent], bool],
    ) -> None:
        """POST ``body`` and hand each SSE event to ``on_event`` until it returns True.

        Each event is at most ``limits.max_event_bytes``, and comes within
        ``limits.max_idle_seconds`` of the previous one (or of the request); otherwise as
        :meth:`post`.
        """
        reader = SseReader(self.limits)
        idle = self.limits.max_idle_seconds
        clock = event_loop_clock()
        last_event = clock()

        def feed(chunk: bytes) -> bool:
            nonlocal last_event
            events = reader.feed(chunk)
            now = clock()
            if events:
                last_event = now
            elif idle is not None and now - last_event > idle:
                raise ProviderError(
                    ErrorKind.NETWORK,
                    f"the stream sent no complete event for {idle:g} s (keep-alive "
                    "comments do not count; StreamLimits.max_idle_seconds)",
                )
            for event in events:  # noqa: SIM110  # not any(<generator>): this runs per chunk
                if on_event(event):
                    return True
            return False

        await self.post(url, headers, body, key, feed)


def event_loop_clock() -> Callable[[], float]:
    """The running event loop's clock (what ``anyio.current_time()`` reads), looked up once.

    ``anyio.current_time()`` finds the backend anew on every call (a ``sniffio`` lookup
    and ``asyncio.current_task()``); a stream reads the clock once per network chunk,
    ≈ 40 times per turn, so the request looks it up once (see ``benchmarks/RESULTS.md``).
    """
    if sniffio.current_async_library() == "asyncio":
        import asyncio  # already loaded (it is running): not imported with the provider

        return asyncio.get_running_loop().time
    return anyio.current_time


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
        except (httpx.HTTPError, ProviderError):
            return


async def _read_capped(response: httpx.Response) -> bytes:
    encoding = response.headers.get("content-encoding", "")
    return await read_prefix(response.aiter_raw(), encoding, _MAX_ERROR_BODY)


def _json_reply_error(raw: bytes, key: KeySource) -> ProviderError:
    try:
        payload = parse_json(raw)
    except ValueError:
        payload = None
    if "error" in as_dict(payload):
        return from_stream_error(payload, key)
    return malformed("expected an event stream, got a JSON document")


class SseReply(Protocol):
    """An SSE protocol's stream reader: takes events until its terminal one, then the reply."""

    def on_event(self, event: SseEvent) -> bool:
        """Handle one event; True once the reply is complete."""
        ...

    def finish(self) -> AssistantMessage:
        """The reply, or a ProviderError (``NETWORK`` when the stream was cut)."""
        ...


class StreamReply(Protocol):
    """A binary protocol's stream reader: takes body bytes until complete, then the reply."""

    def feed(self, chunk: bytes) -> bool:
        """Take the next piece of the body; True once the reply is complete."""
        ...

    def finish(self) -> AssistantMessage:
        """The reply, or a ProviderError (``NETWORK`` when the stream was cut)."""
        ...


class HttpOptions(TypedDict, total=False):
    """The HTTP base's keyword arguments, for a provider that adds its own to them."""

    http_client: httpx.AsyncClient | None
    client: httpx.AsyncClient | None
    timeout: httpx.Timeout | float | None
    limits: StreamLimits


class HttpProvider:
    """What every HTTP provider shares: the config it was built for and its :class:`Transport`.

    Without ``http_client`` a provider uses the process's shared connection pool for its
    server (nothing is opened until the first request); pass one to use your own (proxy,
    certificates, transport), ``timeout`` to change when a stalled stream gives up,
    ``limits`` to change how large a streamed reply may get.
    """

    def __init__(
        self,
        config: ModelConfig | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
        limits: StreamLimits = DEFAULT_LIMITS,
    ) -> None:
        self.config = config
        self._transport = Transport(http_client or client, timeout, limits)

    async def _read_sse(
        self,
        url: str,
        headers: Mapping[str, str],
        body: Mapping[str, Any] | bytes,
        key: KeySource,
        reader: SseReply,
    ) -> AssistantMessage:
        """POST ``body`` (JSON, or already encoded), feed each event to ``reader``, return
        its finished reply."""
        content = body if isinstance(body, bytes) else encode_body(body)
        await self._transport.post_sse(url, headers, content, key, reader.on_event)
        return reader.finish()

    async def _read_stream(
        self,
        url: httpx.URL | str,
        headers: Mapping[str, str],
        body: bytes,
        key: KeySource,
        reader: StreamReply,
    ) -> AssistantMessage:
        """POST ``body`` (already encoded), feed the reply to ``reader``, return its reply."""
        await self._transport.post(url, headers, body, key, reader.feed)
        return reader.finish()

    async def aclose(self) -> None:
        """Release what this provider holds (nothing: clients are shared or the caller's)."""
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
