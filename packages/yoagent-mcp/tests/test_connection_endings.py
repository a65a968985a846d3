"""How a connection that ends is reported: a transport that fails after the handshake, a
read stream that ends under a call, a notification whose POST is not answered, a server
that logs, and a server's tools withdrawn once it has gone."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp_helpers import PY_SERVER, WrappedReadStream, py_server_streams

from yoagent.mcp import McpClient, McpError, McpToolSource, McpTransport

NOTE = "notifications/yoagent-test/note"


class FailsLater(McpTransport):
    """A transport that raises ``error`` from its own task once ``fail`` is set, after the
    handshake: the connection fails under the client."""

    name = "own"

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.fail = anyio.Event()

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[Any]:
        async with py_server_streams() as streams, anyio.create_task_group() as group:

            async def fail_when_told() -> None:
                await self.fail.wait()
                raise self.error

            group.start_soon(fail_when_told)
            yield streams

    def redact(self, text: str) -> str:
        return text.replace("classified", "[hidden]")


class _HttpcoreError(Exception):
    """An error of the HTTP stack's (named by its module, as httpcore2's own are)."""


_HttpcoreError.__module__ = "httpcore2._async.http11"


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (McpError("the tunnel went down"), "failed: the tunnel went down"),
        (ValueError("boom"), "failed: ValueError: boom"),
        (ValueError(), "failed: ValueError"),
        (ValueError("a classified matter"), "failed: ValueError: a [hidden] matter"),
        (_HttpcoreError("reset"), "failed: HTTP error reaching own: _HttpcoreError: reset"),
    ],
)
async def test_a_connection_that_fails_after_the_handshake_says_why(
    error: Exception, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    transport = FailsLater(error)
    async with McpClient(transport) as client:
        assert client.exited() is None
        transport.fail.set()
        with anyio.fail_after(10):
            while client.exited() is None:  # noqa: ASYNC110 - exited() is polled
                await anyio.sleep(0.02)
        assert client.exited() == reason
        with pytest.raises(McpError) as later:
            await client.call_tool("echo", {"text": "anyone?"})
    assert str(later.value) == f"Connection closed during tools/call echo: MCP server own {reason}"
    assert client.exited() == reason  # closing afterwards does not change it
    assert [record.getMessage() for record in caplog.records] == [
        f"MCP server own: the connection failed: {reason}"
    ]


class EndsUnderACall(McpTransport):
    """A transport whose read stream ends, once ``cut`` is set, instead of handing on the
    next message (a server that went away mid-call); leaving it waits for ``release``."""

    name = "cut"

    def __init__(self) -> None:
        self.cut = False
        self.release = anyio.Event()

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[Any]:
        async with py_server_streams() as (read, write):
            try:
                yield _CutReader(read, self), write
            finally:
                with anyio.CancelScope(shield=True):
                    await self.release.wait()


class _CutReader(WrappedReadStream):
    def __init__(self, inner: Any, owner: EndsUnderACall) -> None:
        super().__init__(inner)
        self.owner = owner

    def seen(self, item: Any) -> Any:
        if self.owner.cut:
            raise anyio.EndOfStream
        return item


async def test_a_read_stream_that_ends_under_a_call_closes_the_connection() -> None:
    transport = EndsUnderACall()
    client = McpClient(transport)
    with anyio.fail_after(20):
        async with client:
            transport.cut = True
            with pytest.raises(McpError) as cut:
                await client.call_tool("echo", {"text": "lost"})
            transport.release.set()
    assert str(cut.value) == (
        "Connection closed during tools/call echo: MCP server cut closed the connection"
    )


@pytest.mark.parametrize(
    ("options", "bound"),
    [
        ({"call_timeout": 1}, "1 s"),  # the call timeout, when there is one
        ({"call_timeout": 1, "timeout": 60}, "1 s"),
        ({"timeout": 1.5}, "1.5 s"),  # else the HTTP timeout
    ],
)
async def test_a_notification_whose_post_is_not_answered_is_bounded(
    py_http_url: str, options: dict[str, Any], bound: str
) -> None:
    origin = py_http_url.removesuffix("/mcp")
    async with McpClient.http(py_http_url, **options) as client:
        with anyio.fail_after(20), pytest.raises(McpError) as slow:
            await client.notify(NOTE, {"http_delay": 600})
    assert str(slow.value) == f"MCP server {origin}: {NOTE} got no answer within {bound}"
    assert slow.value.http_status is None


@pytest.mark.parametrize(
    ("method", "params", "said"),
    [
        ("", None, "notify needs a method name, not ''"),
        (7, None, "notify needs a method name, not 7"),
        (NOTE, ["a"], "a notification's params are a mapping, not list"),
        (NOTE, "text", "a notification's params are a mapping, not str"),
    ],
)
async def test_a_notification_with_a_bad_method_or_params_says_which(
    method: Any, params: Any, said: str
) -> None:
    client = McpClient.stdio(sys.executable, [str(PY_SERVER), "stdio"])
    with pytest.raises(TypeError) as refused:
        await client.notify(method, params)
    assert str(refused.value) == said


async def test_what_a_server_logs_is_logged_at_debug_naming_the_server_and_level(
    py_http_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    origin = py_http_url.removesuffix("/mcp")
    caplog.set_level(logging.DEBUG, logger="yoagent.mcp")
    async with McpClient.http(py_http_url) as client:
        result = await client.call_tool("log", {"message": "warming up"})
    assert result.content[0].text == "logged"  # type: ignore[union-attr]
    logged = [r for r in caplog.records if r.name == "yoagent.mcp" and "logged (" in r.msg]
    assert [(r.levelno, r.getMessage()) for r in logged] == [
        (logging.DEBUG, f"MCP server {origin} logged (info): warming up")
    ]


class _Gone:
    """A stand-in client that is up, then gone (``reason``)."""

    name = "stdio srv"
    tools_list_changes = 3
    call_timeout = None

    def __init__(self, server_name: str | None) -> None:
        self.server_name = server_name
        self.reason: str | None = None
        self.listed: list[Any] = []

    def exited(self) -> str | None:
        return self.reason

    async def list_tools(self) -> list[Any]:
        return self.listed


@pytest.mark.parametrize(
    ("server_name", "prefix", "said"),
    [
        ("py-test-server", "py", "MCP server py-test-server (prefix 'py') exited with status 3"),
        (None, None, "MCP server stdio srv exited with status 3"),
    ],
)
async def test_a_gone_servers_tools_are_withdrawn_and_that_is_warned_about_once(
    server_name: str | None, prefix: str | None, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_types import Tool

    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    client = _Gone(server_name)
    client.listed = [Tool(name="echo", input_schema={"type": "object"})]
    source = McpToolSource(client, prefix=prefix)  # type: ignore[arg-type]
    assert len(await source.tools()) == 1
    assert source.generation() == 3

    client.reason = "exited with status 3"

    assert source.generation() == 4
    assert await source.tools() == []
    assert await source.tools() == []
    assert [record.getMessage() for record in caplog.records] == [
        f"{said}: its tools are withdrawn"
    ]


async def test_a_read_stream_that_ends_before_the_handshake_is_answered_fails_the_connect() -> None:
    transport = EndsUnderACall()
    transport.cut = True  # the answer to initialize never arrives
    transport.release.set()
    with anyio.fail_after(20), pytest.raises(McpError) as cut:
        async with McpClient(transport):
            pass
    assert str(cut.value) == "MCP server cut: initialize failed: MCPError: Connection closed"
