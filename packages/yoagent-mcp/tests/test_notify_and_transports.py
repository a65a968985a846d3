"""Client notifications (``notify``) over each transport, and a transport of the caller's
own plugged into ``McpClient`` and an agent."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp_helpers import WrappedReadStream, WrappedStream, py_server_argv, py_server_streams

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    TextContent,
    ToolCall,
    ToolContext,
    ToolResultMessage,
)
from yoagent.mcp import (
    McpClient,
    McpError,
    McpToolAdapter,
    McpToolSource,
    McpTransport,
    with_mcp_server,
)

NOTE = "notifications/yoagent-test/note"


@pytest.fixture(params=["stdio", "http"])
def client(request: pytest.FixtureRequest) -> McpClient:
    """A client (not yet connected) to the Python SDK's test server over each transport."""
    if request.param == "stdio":
        command, *args = py_server_argv()
        return McpClient.stdio(command, args)
    return McpClient.http(request.getfixturevalue("py_http_url"))


async def notes_seen(client: McpClient, count: int) -> list[dict[str, Any]]:
    """The params of the notes the server has received, once it has ``count`` of them."""
    with anyio.fail_after(10):
        while True:
            result = await client.call_tool("notes")
            notes: list[dict[str, Any]] = json.loads(result.content[0].text)  # type: ignore[union-attr]
            if len(notes) >= count:
                return notes
            await anyio.sleep(0.05)


async def test_notify_sends_a_notification_the_server_receives(client: McpClient) -> None:
    async with client:
        await client.notify(NOTE, {"text": "hello", "n": 1})
        await client.notify(NOTE)
        notes = await notes_seen(client, 2)

    assert notes == [{"text": "hello", "n": 1}, {}]


async def test_a_notification_the_server_refuses_raises_with_its_status(py_http_url: str) -> None:
    origin = py_http_url.removesuffix("/mcp")
    async with McpClient.http(py_http_url) as client:
        with pytest.raises(McpError) as refused:
            await client.notify(NOTE, {"http_status": 403})
        await client.notify(NOTE, {"text": "after"})
        notes = await notes_seen(client, 1)

    assert str(refused.value) == f"MCP server {origin}: {NOTE} failed: HTTP 403 Forbidden"
    assert refused.value.http_status == 403
    assert notes == [{"text": "after"}]


async def test_notify_to_a_server_that_has_gone_raises() -> None:
    command, *args = py_server_argv()
    async with McpClient.stdio(command, args) as client:
        with pytest.raises(McpError):
            await client.call_tool("die", {"code": 4})
        with pytest.raises(McpError) as gone:
            await client.notify(NOTE, {"text": "anyone?"})

    assert str(gone.value).startswith(
        f"MCP server python py_server.py: cannot send {NOTE}: it exited with status 4"
    )


async def test_a_notification_whose_post_gets_no_response_raises_at_once(py_http_url: str) -> None:
    origin = py_http_url.removesuffix("/mcp")
    async with McpClient.http(py_http_url, timeout=30) as client:
        with anyio.fail_after(10), pytest.raises(McpError) as dropped:
            await client.notify(NOTE, {"http_exit": True})  # the server ends mid-POST
        # The SDK's transport has ended with that POST (and would drop what comes next).
        with anyio.fail_after(10), pytest.raises(McpError) as unsent:
            await client.notify(NOTE, {"text": "anyone?"})

    assert str(dropped.value).startswith(
        f"MCP server {origin}: {NOTE} failed: HTTP error reaching {origin}: "
    )
    assert dropped.value.http_status is None
    # Refused before it is sent once the client sees the transport stopped, or (sent in the
    # moment before) dropped by the SDK and said to be: either way at once, not after 30 s.
    assert str(unsent.value) in (
        f"MCP server {origin}: cannot send {NOTE}: it closed the connection",
        f"MCP server {origin}: {NOTE} was not acknowledged: the connection has ended",
    )


async def test_a_server_gone_mid_post_is_seen_as_gone_and_its_tools_are_withdrawn(
    py_http_url: str,
) -> None:
    async with McpClient.http(py_http_url, timeout=30) as client:
        source = McpToolSource(client)
        assert await source.tools() != [] and client.exited() is None
        before = source.generation()
        with anyio.fail_after(10), pytest.raises(McpError):
            await client.notify(NOTE, {"http_exit": True})
        with anyio.fail_after(10):
            while client.exited() is None:  # noqa: ASYNC110 - the transport stops just after
                await anyio.sleep(0.01)
        assert client.exited() == "closed the connection"
        assert source.generation() == before + 1
        assert await source.tools() == []
        origin = py_http_url.removesuffix("/mcp")
        with pytest.raises(McpError) as refused:
            await client.notify(NOTE)
    assert (
        str(refused.value) == f"MCP server {origin}: cannot send {NOTE}: it closed the connection"
    )


async def test_notify_outside_the_connection_is_a_runtime_error() -> None:
    command, *args = py_server_argv()
    with pytest.raises(RuntimeError, match="not connected"):
        await McpClient.stdio(command, args).notify(NOTE)


@pytest.mark.parametrize(
    ("method", "params"),
    [("", None), (7, None), (NOTE, ["not", "a", "mapping"])],
)
async def test_notify_with_a_bad_method_or_params_is_a_type_error(method: Any, params: Any) -> None:
    command, *args = py_server_argv()
    with pytest.raises((TypeError, ValueError)):
        await McpClient.stdio(command, args).notify(method, params)


class CountingStdio(McpTransport):
    """A transport of the caller's own: the SDK's stdio client to the test server, counting
    the messages each way and scrubbing a word from error texts."""

    name = "counted"

    def __init__(self) -> None:
        self.sent = 0
        self.received = 0

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[Any]:
        async with py_server_streams() as (read, write):
            yield _Counted(read, self), _Counting(write, self)

    def redact(self, text: str) -> str:
        return text.replace("classified", "[hidden]")


class _Counted(WrappedReadStream):
    def __init__(self, inner: Any, owner: CountingStdio) -> None:
        super().__init__(inner)
        self.owner = owner

    def seen(self, item: Any) -> Any:
        self.owner.received += 1
        return item


class _Counting(WrappedStream):
    def __init__(self, inner: Any, owner: CountingStdio) -> None:
        super().__init__(inner)
        self.owner = owner

    async def send(self, item: Any) -> None:
        self.owner.sent += 1
        await self.inner.send(item)


async def test_a_transport_of_ones_own_serves_a_client_and_an_agent() -> None:
    transport = CountingStdio()
    model = MockProvider(
        [
            AssistantMessage(
                content=[ToolCall(id="c1", name="own__echo", arguments={"text": "via mine"})]
            ),
            AssistantMessage(content=[TextContent(text="done")]),
        ]
    )
    agent = Agent.from_provider(model, ModelConfig.mock())

    async with with_mcp_server(agent, McpClient(transport), prefix="own") as client:
        assert client.name == "counted"
        assert client.server_name == "py-test-server"
        await agent.prompt("echo something")
        await client.notify(NOTE, {"text": "mine"})
        assert await notes_seen(client, 1) == [{"text": "mine"}]
        tools = {tool.name: tool for tool in await client.list_tools()}
        redacted = await McpToolAdapter(client, tools["echo"]).execute(
            {"text": "a classified matter"}, ToolContext(tool_call_id="c2", tool_name="e")
        )

    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.text == "via mine"
    assert redacted.text == "a [hidden] matter"
    assert transport.sent > 3 and transport.received > 3


def test_something_that_is_not_a_transport_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="McpClient needs an McpTransport"):
        McpClient(object())  # type: ignore[arg-type]
