"""The official Python SDK's server over Streamable HTTP on loopback, and keys in its URL."""

from __future__ import annotations

import logging

import anyio
import pytest
from mcp_helpers import SECRET_PATH, free_port

from yoagent.core import ImageContent, ToolContext, ToolError
from yoagent.mcp import RESERVED_HEADERS, McpClient, McpError, McpToolAdapter, McpToolSource

QUERY_KEY = "tok-query-9876543210"
PASSWORD = "pa55-word-secret-123"


def ctx() -> ToolContext:
    return ToolContext(tool_call_id="call-1", tool_name="t")


async def test_listing_and_calls_work_over_streamable_http(py_http_url: str) -> None:
    async with McpClient.http(py_http_url) as client:
        assert client.name == py_http_url.removesuffix("/mcp")  # named by origin
        assert client.server_name == "py-test-server"
        tools = {tool.name: tool for tool in await client.list_tools()}
        echo = await McpToolAdapter(client, tools["echo"]).execute({"text": "over http"}, ctx())
        image = await McpToolAdapter(client, tools["image"]).execute({}, ctx())
    assert echo.text == "over http"
    assert isinstance(image.content[0], ImageContent)


async def test_a_list_change_on_http_moves_the_sources_generation(py_http_url: str) -> None:
    async with McpClient.http(py_http_url) as client:
        source = McpToolSource(client)
        before = {tool.name for tool in await source.tools()}
        generation = source.generation()
        await client.call_tool("add_tool")
        with anyio.fail_after(10):
            while source.generation() == generation:  # noqa: ASYNC110 - polled like the loop does
                await anyio.sleep(0.05)
        after = {tool.name for tool in await source.tools()}
    assert after - before == {"extra"}


async def test_a_call_timeout_bounds_an_http_call(py_http_url: str) -> None:
    async with McpClient.http(py_http_url, call_timeout=1) as client:
        with pytest.raises(McpError, match=r"tools/call hang got no answer within 1 s"):
            await client.call_tool("hang", {"seconds": 600})
        assert (await client.call_tool("echo", {"text": "still"})).is_error is False


@pytest.mark.parametrize("name", sorted(RESERVED_HEADERS))
def test_a_reserved_header_is_refused_without_echoing_its_value(name: str) -> None:
    with pytest.raises(McpError) as caught:
        McpClient.http("http://127.0.0.1:1/mcp", headers={name.title(): "secret-value-123"})
    assert "set by the transport" in str(caught.value)
    assert "secret-value-123" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "value", "complaint"),
    [
        ("Bad Name", "v", "not a valid header name"),
        ("X-Key", "line\r\nbreak-secret", "not visible ASCII"),
        ("X-Key", "naïve-secret", "not visible ASCII"),
    ],
)
def test_an_invalid_header_is_refused_without_echoing_its_value(
    name: str, value: str, complaint: str
) -> None:
    with pytest.raises(McpError, match=complaint) as caught:
        McpClient.http("http://127.0.0.1:1/mcp", headers={name: value})
    assert "secret" not in str(caught.value)


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(McpError, match="must start with http"):
        McpClient.http("ftp://example.com/mcp")


def _assert_clean(text: str) -> None:
    for secret in (SECRET_PATH, QUERY_KEY, PASSWORD):
        assert secret not in text, f"{secret!r} leaked into: {text[:300]!r}"


async def test_a_key_in_the_url_never_reaches_a_result_an_error_or_a_log(
    py_http_secret_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = (
        f"http://user:{PASSWORD}@127.0.0.1:{py_http_secret_port}/{SECRET_PATH}/mcp"
        f"?token={QUERY_KEY}"
    )
    seen: list[str] = []
    async with McpClient.http(url, call_timeout=1) as client:
        seen.append(client.name)
        seen.append(repr(client))
        tools = {tool.name: tool for tool in await client.list_tools()}
        # A server that echoes the key in a result, in an is_error result, in a JSON-RPC
        # error, and a call that times out.
        echoed = await McpToolAdapter(client, tools["echo"]).execute(
            {"text": f"you called {url}"}, ctx()
        )
        seen.append(echoed.text)
        with pytest.raises(ToolError) as failed:
            await McpToolAdapter(client, tools["fail"]).execute({"message": url}, ctx())
        seen.append(str(failed.value))
        seen.append(repr(echoed.details))
        unknown_tool = tools["echo"].model_copy(update={"name": f"no-such-tool-{SECRET_PATH}"})
        with pytest.raises(ToolError) as unknown:
            await McpToolAdapter(client, unknown_tool).execute({}, ctx())
        seen.append(str(unknown.value))
        with pytest.raises(McpError) as slow:
            await client.call_tool("hang", {"seconds": 600})
        seen.append(str(slow.value))
    # An unreachable server, named without its URL.
    dead = f"http://user:{PASSWORD}@127.0.0.1:{free_port()}/{SECRET_PATH}/mcp?token={QUERY_KEY}"
    with pytest.raises(McpError) as unreachable:
        async with McpClient.http(dead):
            pass
    seen.append(str(unreachable.value))
    assert "HTTP error reaching http://127.0.0.1:" in str(unreachable.value)
    for text in seen:
        _assert_clean(text)
    assert "[redacted]" in echoed.text
    assert caplog.records, "the SDK and httpx2 logged nothing at DEBUG: the check would be empty"
    for record in caplog.records:
        _assert_clean(record.getMessage())
        _assert_clean(record.exc_text or "")
    _assert_clean(caplog.text)
