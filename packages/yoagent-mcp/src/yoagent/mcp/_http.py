"""The Streamable HTTP transport: the SDK's client, caller headers checked, results made lenient.

The SDK's transport runs on our own httpx2 client (``_http_client``): redirects follow the
client's policy and each POST's end is written down for the error it may cause. The
session's read stream is wrapped so a ``tools/call`` result is made lenient
(``_lenient``) before the session validates it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self

import anyio

from ._errors import McpError
from ._exchange import Redirects
from ._lenient import lenient_tool_result

if TYPE_CHECKING:
    from mcp.client._transport import ReadStream, WriteStream
    from mcp.shared.message import SessionMessage

RESERVED_HEADERS: Final = frozenset(
    {
        "accept",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "content-length",
        "transfer-encoding",
        "connection",
        "host",
    }
)
"""Headers the transport sets itself; a caller may not set them."""

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_VISIBLE = re.compile(r"^[\t\x20-\x7e]*$")

DEFAULT_HTTP_TIMEOUT: Final = 30.0
SSE_READ_TIMEOUT: Final = 300.0


def checked_headers(headers: Mapping[str, str], origin: str) -> dict[str, str]:
    """``headers`` as sent, or :class:`McpError` naming the bad header (never its value)."""
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.match(name):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise McpError(f"MCP server {origin}: {name!r} is not a valid header name")
        if name.lower() in RESERVED_HEADERS:
            raise McpError(
                f"MCP server {origin}: the {name} header is set by the transport and cannot be set"
            )
        if not isinstance(value, str) or not _VISIBLE.match(value):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise McpError(
                f"MCP server {origin}: the value of the {name} header is not visible ASCII"
            )
        checked[name] = value
    return checked


class _LenientReader:
    """The SDK's read stream, with ``tools/call`` results made lenient on the way through;
    ``ended`` is set when the stream ends (the SDK's transport has stopped)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], ended: anyio.Event) -> None:
        self._inner = inner
        self._ended = ended

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise
        return _lenient_item(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        from anyio import EndOfStream

        try:
            return await self.receive()
        except EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def last_context(self) -> Any:
        """The sender's context, which the SDK's dispatcher reads when a stream offers it."""
        return getattr(self._inner, "last_context", None)


def _lenient_item(item: SessionMessage | Exception) -> SessionMessage | Exception:
    from mcp_types import JSONRPCResponse

    if isinstance(item, Exception):
        return item
    message = item.message
    if isinstance(message, JSONRPCResponse) and "content" in message.result:
        message.result = lenient_tool_result(message.result)
    return item


@asynccontextmanager
async def http_streams(
    url: str,
    headers: Mapping[str, str],
    http_timeout: float,
    redirects: Redirects,
    ended: anyio.Event,
) -> AsyncGenerator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """The session's read and write streams for the server at ``url``; ``ended`` is set when
    the SDK's transport stops (its read stream ends), after which the SDK drops a
    notification without a word."""
    import httpx2

    from mcp.client.streamable_http import streamable_http_client

    from ._http_client import ExchangeClient

    client = ExchangeClient(
        redirects=redirects,
        headers=dict(headers),
        timeout=httpx2.Timeout(http_timeout, read=SSE_READ_TIMEOUT),
    )
    async with client, streamable_http_client(url, http_client=client) as (read, write):
        yield _LenientReader(read, ended), write
