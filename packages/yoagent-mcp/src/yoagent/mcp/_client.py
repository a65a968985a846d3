"""McpClient: one connection to an MCP server, stdio or Streamable HTTP, on the SDK's session.

The SDK's ``ClientSession`` speaks the protocol (version negotiation, JSON-RPC ids,
server requests such as ``ping``). It lives in a task of the client's own, so that a
transport that fails (an HTTP error, a server that dies) ends that task, never the
caller's: the caller sees an :class:`McpError` from the call that needed the server.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar, cast

import anyio
import anyio.abc

from yoagent.core.support import display_url

from ._errors import McpError
from ._exchange import REDIRECT_POLICIES, Exchange, Redirects, watching
from ._http import DEFAULT_HTTP_TIMEOUT, checked_headers
from ._log import logger
from ._process import ServerProcess
from ._stdio import StdioState
from ._transport import HttpTransport, McpTransport, StdioTransport

if TYPE_CHECKING:
    from mcp_types import CallToolResult, InitializeResult, LoggingMessageNotificationParams, Tool
    from pydantic import BaseModel

    from mcp import ClientSession
    from mcp.client.session import IncomingMessage
    from mcp.shared.exceptions import MCPError

STDIO_CALL_TIMEOUT: Final = 300.0
"""Default bound on a stdio server's answer to one request (seconds)."""

HANDSHAKE_TIMEOUT: Final = 60.0
"""Default bound on the ``initialize`` handshake (seconds)."""

CLOSE_GRACE: Final = 1.0
"""How long a stdio server has to exit after its input closes, before it is killed."""

INHERITED_ENV: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR")
"""The variables a stdio server inherits unless ``inherit_env=True``: never the host's keys."""

_MAX_PAGES: Final = 100

ResultT = TypeVar("ResultT", bound="BaseModel")


def _leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: what actually went wrong."""
    found: BaseException = error
    while isinstance(found, BaseExceptionGroup):
        inner = cast(tuple[BaseException, ...], found.exceptions)  # pyright: ignore[reportUnknownMemberType]
        if not inner:
            break
        found = inner[0]
    return cast(BaseException, found)


def _stdio_name(command: str, args: Sequence[str]) -> str:
    """The command's name and its first positional argument's (a script), never options."""
    words = [Path(command).name]
    script = next((arg for arg in args if not arg.startswith("-")), None)
    if script is not None and not any(space in script for space in " \t\n"):
        words.append(Path(script).name)
    return " ".join(words)


class McpClient:
    """A connection to one MCP server; use it as ``async with``.

    Build it with :meth:`stdio` (a command run as a child process) or :meth:`http` (a
    Streamable HTTP endpoint), or give it a transport of your own
    (``McpClient(transport)``, see :class:`McpTransport`). Entering connects and
    completes the ``initialize`` handshake (bounded by ``handshake_timeout``); leaving
    closes the connection and, for stdio, ends the process (its input closed, then
    killed after ``close_grace``).

    Errors are :class:`McpError` naming the server by ``name``: a stdio server by its
    command, an HTTP server by its URL's origin. Nothing of the URL past its origin is
    ever put in an error or a log line.
    """

    def __init__(
        self,
        transport: McpTransport,
        *,
        call_timeout: float | None = None,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
    ) -> None:
        """A client for the server ``transport`` reaches; each request bounded by
        ``call_timeout`` (``None``: no bound), the handshake by ``handshake_timeout``."""
        if not (
            isinstance(getattr(transport, "name", None), str)
            and callable(getattr(transport, "open", None))
            and callable(getattr(transport, "redact", None))
        ):
            raise TypeError(
                "McpClient needs an McpTransport (a str `name`, `open()` and `redact(text)`), "
                f"not {type(transport).__name__}"
            )
        self._transport = transport
        self.name = transport.name
        """How errors and logs name the server."""
        self.call_timeout = call_timeout
        """Bound on each request's answer in seconds (``None``: no bound)."""
        self.handshake_timeout = handshake_timeout
        self._session: ClientSession | None = None
        self._initialize: InitializeResult | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._closing = anyio.Event()
        self._ended = anyio.Event()
        self._end_reason: str | None = None
        self._entered = False
        self._list_changes = 0

    # --- construction ---------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = False,
        cwd: str | os.PathLike[str] | None = None,
        own_process_group: bool = False,
        call_timeout: float | None = STDIO_CALL_TIMEOUT,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        close_grace: float = CLOSE_GRACE,
        name: str | None = None,
    ) -> McpClient:
        """A client for the server that ``command args...`` runs, speaking over its stdin/stdout.

        The server gets ``env`` on top of :data:`INHERITED_ENV` from this process (the
        whole environment with ``inherit_env=True``). ``own_process_group`` runs it in a
        process group of its own, killed whole when the command exits or the client
        closes: use it for launchers (``npx``, shell scripts) that start the real server
        as a child. Without it the server shares this process's group (Ctrl+C reaches
        it) and only the command itself is killed.
        """
        base = (
            dict(os.environ)
            if inherit_env
            else {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
        )
        shown = name or _stdio_name(command, args)
        launch = partial(
            ServerProcess,
            [command, *args],
            name=shown,
            env={**base, **(env or {})},
            cwd=os.fspath(cwd) if cwd is not None else None,
            own_process_group=own_process_group,
        )
        transport = StdioTransport(launch, name=shown, command=command, close_grace=close_grace)
        return cls(transport, call_timeout=call_timeout, handshake_timeout=handshake_timeout)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        call_timeout: float | None = None,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        timeout: float = DEFAULT_HTTP_TIMEOUT,
        redirects: Redirects = "same-origin",
        name: str | None = None,
    ) -> McpClient:
        """A client for the Streamable HTTP endpoint at ``url``.

        ``headers`` go with every request (e.g. ``Authorization``); the transport's own
        headers (``Accept``, ``Content-Type``, ``Mcp-Session-Id``, ...) are refused, and
        so is a value that is not visible ASCII — the error never echoes the value.
        ``timeout`` bounds connecting and each read but a response stream's (300 s).
        ``redirects`` says which redirects are followed (up to 10, and only those that
        keep the method: 307 and 308 for a POST): ``"same-origin"`` (the endpoint's own
        origin, or its https upgrade), ``"none"``, or ``"any"`` (your ``headers`` then go
        to the other origin too, all but ``Authorization``). A redirect not followed
        fails the request with an :class:`McpError` naming where it pointed (its origin
        only) and carrying its ``http_status``.
        """
        if redirects not in REDIRECT_POLICIES:
            raise ValueError(f"redirects must be 'same-origin', 'none' or 'any', not {redirects!r}")
        origin = display_url(url, path=False)
        parts = url.strip().split("://", 1)
        if len(parts) != 2 or parts[0].lower() not in ("http", "https"):
            raise McpError(f"MCP server {origin}: the URL must start with http:// or https://")
        checked = checked_headers(headers or {}, origin)
        transport = HttpTransport(url, checked, timeout, name or origin, redirects)
        return cls(transport, call_timeout=call_timeout, handshake_timeout=handshake_timeout)

    # --- lifetime -------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError("an McpClient connects once; build a new one to reconnect")
        self._entered = True
        group = anyio.create_task_group()
        await group.__aenter__()
        try:
            await group.start(self._run)
        except BaseException:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)
            raise
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is None:
            return
        self._closing.set()
        state = self._stdio_state
        if state is not None:
            state.closed_by_host = True
        await group.__aexit__(None, None, None)

    async def _run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        from mcp_types import Implementation

        from mcp import ClientSession

        started = False
        handshake = Exchange()
        try:
            async with (
                self._transport.open() as (read, write),
                ClientSession(
                    read,
                    write,
                    message_handler=self._on_message,
                    logging_callback=self._on_log,
                    client_info=Implementation(name="yoagent", version=_version()),
                ) as session,
            ):
                try:
                    with anyio.fail_after(self.handshake_timeout), watching(handshake):
                        self._initialize = await session.initialize()
                except TimeoutError:
                    raise McpError(
                        f"MCP server {self.name}: no answer to initialize "
                        f"within {self.handshake_timeout:g} s"
                    ) from None
                self._session = session
                started = True
                task_status.started()
                await self._closing.wait()
        except Exception as error:
            if not started:
                raise await self._connect_error(error, handshake) from None
            self._end_reason = f"failed: {self._describe(error)}"
            logger.warning("MCP server %s: the connection failed: %s", self.name, self._end_reason)
        finally:
            if self._end_reason is None:
                self._end_reason = (
                    "was closed" if self._closing.is_set() else "closed the connection"
                )
            self._ended.set()

    # --- what the server said -----------------------------------------------------------

    @property
    def server_name(self) -> str | None:
        """The name the server gave in its handshake."""
        return self._initialize.server_info.name if self._initialize else None

    @property
    def server_version(self) -> str | None:
        """The version the server gave in its handshake."""
        return self._initialize.server_info.version if self._initialize else None

    @property
    def protocol_version(self) -> str | None:
        """The MCP protocol version the handshake settled on."""
        return self._initialize.protocol_version if self._initialize else None

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        return self._initialize.instructions if self._initialize else None

    @property
    def tools_list_changes(self) -> int:
        """How many ``notifications/tools/list_changed`` the server has sent."""
        return self._list_changes

    def redact(self, text: str) -> str:
        """``text`` with the connection's secrets replaced (its transport's ``redact``: over
        HTTP the pieces of the server's URL that may be keys, and the credential headers)."""
        return self._transport.redact(text)

    def exited(self) -> str | None:
        """Why the server has gone (``exited with status 1; last stderr: …``), else ``None``.

        Never blocks. A stdio server has gone when its process exited or it closed its
        output or input; an HTTP server when the connection failed or the SDK's transport
        stopped (a POST that got no response ends it). Once not ``None``, it stays so.
        """
        state = self._stdio_state
        if state is not None:
            return state.exit_reason()
        if self._ended.is_set():
            return self._end_reason
        transport = self._transport
        if isinstance(transport, HttpTransport) and transport.connection_ended.is_set():
            return "closed the connection"  # the SDK's transport stopped: nothing gets through
        return None

    @property
    def _stdio_state(self) -> StdioState | None:
        transport = self._transport
        return transport.state if isinstance(transport, StdioTransport) else None

    async def _on_message(self, message: IncomingMessage) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, Exception):
            logger.debug("MCP server %s: transport: %s", self.name, self._describe(message))
        elif isinstance(message, ToolListChangedNotification):
            self._list_changes += 1

    async def _on_log(self, params: LoggingMessageNotificationParams) -> None:
        # What a server logs may quote the URL it was reached at (its keys): redacted.
        if logger.isEnabledFor(logging.DEBUG):
            data = self.redact(str(params.data))
            logger.debug("MCP server %s logged (%s): %s", self.name, params.level, data)

    # --- requests -------------------------------------------------------------------------

    async def list_tools(self) -> list[Tool]:
        """Every tool the server offers (all pages of ``tools/list``)."""
        from mcp_types import ListToolsRequest, ListToolsResult, PaginatedRequestParams

        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            page = await self._send(ListToolsRequest(params=params), ListToolsResult, "tools/list")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
        logger.warning("MCP server %s: tools/list stopped after %d pages", self.name, _MAX_PAGES)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        call_timeout: float | None = None,
    ) -> CallToolResult:
        """Call tool ``name``; the result as the server gave it (``is_error`` included).

        ``call_timeout`` overrides :attr:`call_timeout` for this call. Raises
        :class:`McpError` when the server cannot answer (gone, timed out, refused).
        """
        from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult

        request = CallToolRequest(
            params=CallToolRequestParams(name=name, arguments=dict(arguments or {}))
        )
        limit = call_timeout if call_timeout is not None else self.call_timeout
        return await self._send(request, CallToolResult, f"tools/call {name}", limit=limit)

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send the notification ``method`` (``params`` its params) to the server: a
        one-way message, which the server does not answer.

        Over HTTP this returns once the server has accepted it, and raises
        :class:`McpError` (with its ``http_status``) when the server answered with an
        error status; over stdio, once it is written to the server's input; over a
        transport of your own, once the transport took it. It raises :class:`McpError`
        when the server has gone.
        """
        from mcp_types import ClientNotification, Notification

        if not isinstance(method, str) or not method:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"notify needs a method name, not {method!r}")
        if params is not None and not isinstance(params, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"a notification's params are a mapping, not {type(params).__name__}")
        session = self._connected()
        gone = self.exited()
        if gone is not None:
            raise McpError(f"MCP server {self.name}: cannot send {method}: it {gone}")
        notification = Notification[dict[str, Any] | None, str](
            method=method, params=dict(params) if params is not None else None
        )
        exchange = Exchange()
        with watching(exchange):
            await session.send_notification(cast(ClientNotification, notification))
        transport = self._transport
        if isinstance(transport, HttpTransport):
            limit = self.call_timeout if self.call_timeout is not None else transport.timeout
            await self._until_posted(exchange, method, limit, transport.connection_ended)
        if exchange.transport_error is not None:
            reason = self._describe(exchange.transport_error)
            raise McpError(f"MCP server {self.name}: {method} failed: {reason}")
        failed = self._http_error(method, exchange, None)
        if failed is not None:
            raise failed

    async def _until_posted(
        self, exchange: Exchange, what: str, limit: float, connection_ended: anyio.Event
    ) -> None:
        """Wait (up to ``limit`` seconds) for the POST that carries a notification to be
        answered, or the connection to end."""
        with anyio.move_on_after(limit):
            async with anyio.create_task_group() as group:

                async def first(event: anyio.Event) -> None:
                    await event.wait()
                    group.cancel_scope.cancel()

                group.start_soon(first, exchange.settled)
                group.start_soon(first, self._ended)
                group.start_soon(first, connection_ended)
        if exchange.settled.is_set():
            return
        if connection_ended.is_set() and not self._ended.is_set():
            # A request's failed POST ends the SDK's transport a moment before this client
            # learns why: wait for that reason rather than lose it.
            with anyio.move_on_after(0.5):
                await self._ended.wait()
        if self._ended.is_set():
            raise await self._closed_error(what)
        if connection_ended.is_set():  # the SDK dropped the message, or its POST was cut off
            raise McpError(
                f"MCP server {self.name}: {what} was not acknowledged: the connection has ended"
            )
        raise McpError(f"MCP server {self.name}: {what} got no answer within {limit:g} s")

    def _connected(self) -> ClientSession:
        session = self._session
        if session is None:
            raise RuntimeError("the McpClient is not connected: use it as `async with`")
        return session

    async def _send(
        self,
        request: Any,
        result_type: type[ResultT],
        what: str,
        *,
        limit: float | None = None,
    ) -> ResultT:
        from mcp_types import REQUEST_TIMEOUT
        from pydantic import ValidationError

        from mcp.shared.exceptions import MCPError

        session = self._connected()
        if limit is None:
            limit = self.call_timeout
        exchange = Exchange()
        try:
            with watching(exchange):
                return await session.send_request(
                    request, result_type, request_read_timeout_seconds=limit
                )
        except MCPError as error:
            if _is_closed(error):
                raise await self._closed_error(what) from None
            if error.code == REQUEST_TIMEOUT:
                raise McpError(
                    f"MCP server {self.name}: {what} got no answer within {limit:g} s"
                ) from None
            failed = self._http_error(what, exchange, error)
            if failed is not None:
                raise failed from None
            message = self._transport.redact(error.error.message)
            raise McpError(
                f"MCP server {self.name}: {what} failed: {message} (error {error.code})"
            ) from None
        except ValidationError as error:
            first = error.errors()[0] if error.error_count() else {"msg": str(error)}
            where = ".".join(str(part) for part in first.get("loc", ()))
            detail = self._transport.redact(f"{where}: {first['msg']}" if where else first["msg"])
            raise McpError(
                f"MCP server {self.name}: the answer to {what} does not follow MCP: {detail}"
            ) from None

    # --- errors ---------------------------------------------------------------------------

    def _describe(self, error: BaseException) -> str:
        leaf = _leaf(error)
        if isinstance(leaf, McpError):
            return str(leaf)
        module = type(leaf).__module__.split(".", 1)[0]
        text = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        if module in ("httpx2", "httpcore2"):
            text = f"HTTP error reaching {self.name}: {text}"
        return self._transport.redact(text)

    async def _closed_error(self, what: str) -> McpError:
        state = self._stdio_state
        if state is not None:
            reason = await state.settled_reason()
        else:
            with anyio.move_on_after(0.5):
                await self._ended.wait()
            reason = self._end_reason or "closed the connection"
        return McpError(f"Connection closed during {what}: MCP server {self.name} {reason}")

    def _http_error(self, what: str, exchange: Exchange, error: MCPError | None) -> McpError | None:
        """The error for a message whose POST got an answer outside 2xx, else ``None``."""
        if not exchange.failed:
            return None
        text = f"MCP server {self.name}: {what} failed: {exchange.describe()}"
        if error is not None and exchange.refused_redirect is None:
            text += f": {self._transport.redact(error.error.message)} (error {error.code})"
        return McpError(text, http_status=exchange.status)

    async def _connect_error(self, error: BaseException, handshake: Exchange) -> McpError:
        from mcp.shared.exceptions import MCPError

        leaf = _leaf(error)
        if isinstance(leaf, McpError):
            return leaf
        failed = self._http_error(
            "initialize", handshake, leaf if isinstance(leaf, MCPError) else None
        )
        if failed is not None:
            return failed
        state = self._stdio_state
        gone = state.exit_reason() if state is not None else None
        if state is not None and (gone is not None or _is_closed(leaf)):
            reason = await state.settled_reason()
            return McpError(f"Connection closed during initialize: MCP server {self.name} {reason}")
        return McpError(f"MCP server {self.name}: initialize failed: {self._describe(leaf)}")


def _is_closed(error: BaseException) -> bool:
    from mcp_types import CONNECTION_CLOSED

    from mcp.shared.exceptions import MCPError

    # The dispatcher's own "the connection closed" answer; a server may send -32000 too.
    return (
        isinstance(error, MCPError)
        and error.code == CONNECTION_CLOSED
        and error.error.message == "Connection closed"
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("yoagent-mcp")
    except PackageNotFoundError:
        return "0"
