"""McpTransport, how an :class:`~yoagent.mcp.McpClient` reaches its server; the stdio and
Streamable HTTP ones built in."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio

from yoagent.core.support import Scrubber, scrub_logs

from ._errors import McpError
from ._exchange import Redirects
from ._http import http_streams
from ._process import ServerProcess
from ._stdio import StdioState, stdio_streams

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams


class McpTransport(Protocol):
    """How an :class:`~yoagent.mcp.McpClient` reaches its server.

    :meth:`McpClient.stdio <yoagent.mcp.McpClient.stdio>` and :meth:`McpClient.http
    <yoagent.mcp.McpClient.http>` build the two that come with the package; a transport
    of your own (a WebSocket, a server in this process, one of the SDK's own clients such
    as ``mcp.client.stdio.stdio_client``) goes to ``McpClient(transport)``. Subclass this
    protocol to inherit the default :meth:`redact`, or define all three members.
    """

    name: str
    """How errors and log lines name the server; it must hold no secret."""

    def open(self) -> AbstractAsyncContextManager[TransportStreams]:
        """Connect: an async context manager whose value is the read and write streams of
        the SDK's ``SessionMessage``\\ s that an ``mcp.ClientSession`` takes (what the
        SDK's own transports yield, ``mcp.client.Transport``); leaving it disconnects.

        Called once per client, in the client's own task. A server that goes away ends
        the read stream (or sends an ``Exception`` on it); what fails inside the context
        manager ends the connection, and the client's calls then fail with
        :class:`~yoagent.mcp.McpError`.
        """
        ...

    def redact(self, text: str) -> str:
        """``text`` with this connection's secrets replaced; applied to every error text
        and tool result the client builds (the default keeps it as it is)."""
        return text


class StdioTransport:
    """A command run as a child process, spoken to over its stdin and stdout."""

    def __init__(
        self, launch: Callable[[], ServerProcess], *, name: str, command: str, close_grace: float
    ) -> None:
        self.launch = launch
        """Starts the server's process (``ServerProcess`` with its options bound)."""
        self.name = name
        self.command = command
        self.close_grace = close_grace
        self.state: StdioState | None = None

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[tuple[Any, Any]]:
        try:
            process = self.launch()
        except OSError as error:
            reason = error.strerror or str(error)
            raise McpError(
                f"MCP server {self.name}: cannot start {self.command!r}: {reason}"
            ) from None
        self.state = StdioState(process)
        async with stdio_streams(process, self.state, close_grace=self.close_grace) as streams:
            yield streams

    def redact(self, text: str) -> str:
        return text


SDK_LOGGERS: Final = ("mcp", "mcp_types", "httpx2", "httpcore2", "client")
"""The loggers of the SDK's client side and its HTTP stack, scrubbed of a connection's
secrets while it lives ("client" is the name the SDK's session module logs under)."""


class HttpTransport:
    """A Streamable HTTP endpoint, on the SDK's transport and an httpx2 client of ours."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        timeout: float,
        name: str,
        redirects: Redirects,
    ) -> None:
        self.url = url.strip()
        # A URL such as https://host/mcp/sk-abc...?token=... carries keys in its path
        # and query, and headers carry credentials: none may reach an error, a result
        # or a log line.
        self.scrubber = Scrubber(urls=[self.url], headers=headers)
        self.name = name
        self.headers = dict(headers)
        self.timeout = timeout
        self.redirects: Redirects = redirects
        self.connection_ended = anyio.Event()
        """Set when the SDK's transport has stopped: a notification is then never sent."""

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[tuple[Any, Any]]:
        import mcp.client.streamable_http  # pyright: ignore[reportUnusedImport]  # noqa: F401
        # (imported first so that its loggers exist when scrub_logs looks for them)

        with scrub_logs(self.scrubber, SDK_LOGGERS):
            async with http_streams(
                self.url, self.headers, self.timeout, self.redirects, self.connection_ended
            ) as streams:
                yield streams

    def redact(self, text: str) -> str:
        return self.scrubber.scrub(text)
