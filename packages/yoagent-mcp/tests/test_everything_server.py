"""npm's @modelcontextprotocol/server-everything, over stdio and Streamable HTTP on loopback."""

from __future__ import annotations

import json

import pytest
from mcp_helpers import everything_script, node

from yoagent.core import ImageContent, TextContent, ToolContext, ToolError, ToolResult
from yoagent.mcp import McpClient, McpError, McpToolAdapter


def ctx() -> ToolContext:
    return ToolContext(tool_call_id="call-1", tool_name="t")


@pytest.fixture(params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> McpClient:
    """A client (not yet connected: tests enter it) to server-everything over each transport.

    An McpClient is entered and left in one task, as an `async with` in the test.
    """
    if request.param == "stdio":
        return McpClient.stdio(node(), [everything_script(), "stdio"])
    return McpClient.http(request.getfixturevalue("everything_http_url"))


async def call(client: McpClient, name: str, **arguments: object) -> ToolResult:
    tools = {tool.name: tool for tool in await client.list_tools()}
    return await McpToolAdapter(client, tools[name]).execute(dict(arguments), ctx())


async def test_its_tools_are_listed_with_their_schemas(everything: McpClient) -> None:
    async with everything:
        assert everything.server_name == "mcp-servers/everything"
        tools = {tool.name: tool for tool in await everything.list_tools()}
        assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(tools)
        sum_schema = McpToolAdapter(everything, tools["get-sum"]).parameters
        assert set(sum_schema["properties"]) == {"a", "b"}


async def test_text_results(everything: McpClient) -> None:
    async with everything:
        assert (await call(everything, "echo", message="hello")).text == "Echo: hello"
        assert "5" in (await call(everything, "get-sum", a=2, b=3)).text


async def test_an_image_result(everything: McpClient) -> None:
    async with everything:
        result = await call(everything, "get-tiny-image")
        images = [block for block in result.content if isinstance(block, ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        assert any(isinstance(block, TextContent) for block in result.content)


async def test_a_structured_result_is_kept_in_details(everything: McpClient) -> None:
    async with everything:
        result = await call(everything, "get-structured-content", location="New York")
        structured = result.details["structured_content"]
        assert "temperature" in structured
        assert json.loads(result.text) == structured


async def test_an_embedded_resource_and_resource_links(everything: McpClient) -> None:
    async with everything:
        reference = await call(
            everything, "get-resource-reference", resourceType="Text", resourceId=1
        )
        assert "Resource 1: This is a plaintext resource" in reference.text
        links = await call(everything, "get-resource-links", count=2)
        assert links.text.count("[resource link: ") == 2


async def test_a_call_with_progress_notifications_completes(everything: McpClient) -> None:
    async with everything:
        result = await call(everything, "trigger-long-running-operation", duration=1, steps=2)
        assert "completed" in result.text.lower()


async def test_an_unknown_tool_is_an_error_result(everything: McpClient) -> None:
    async with everything:
        tools = {tool.name: tool for tool in await everything.list_tools()}
        ghost = tools["echo"].model_copy(update={"name": "no-such-tool"})
        with pytest.raises(ToolError, match="no-such-tool"):
            await McpToolAdapter(everything, ghost).execute({}, ctx())


async def test_the_stdio_server_does_not_see_this_processs_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
    async with McpClient.stdio(node(), [everything_script(), "stdio"]) as client:
        environment = (await call(client, "get-env")).text
    assert "sk-ant-must-not-leak" not in environment
    assert "PATH" in environment


async def test_a_notification_is_taken_and_the_connection_goes_on(everything: McpClient) -> None:
    async with everything:
        await everything.notify("notifications/roots/list_changed")
        assert (await call(everything, "echo", message="after")).text == "Echo: after"


async def test_a_path_it_does_not_serve_fails_the_handshake_with_its_status(
    everything_http_url: str,
) -> None:
    origin = everything_http_url.removesuffix("/mcp")
    with pytest.raises(McpError) as refused:
        async with McpClient.http(origin + "/not-mcp"):
            pass
    assert refused.value.http_status == 404
    assert str(refused.value).startswith(
        f"MCP server {origin}: initialize failed: HTTP 404 Not Found"
    )
