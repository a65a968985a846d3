"""The Python SDK's own server over stdio: listing, every content type, every way it ends."""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from mcp_helpers import PY_SERVER, py_server_argv

from yoagent.core import ImageContent, TextContent, ToolContext, ToolError
from yoagent.mcp import McpClient, McpError, McpToolAdapter


def stdio_client(**options: object) -> McpClient:
    return McpClient.stdio(sys.executable, [str(PY_SERVER), "stdio"], **options)  # type: ignore[arg-type]


def ctx(name: str = "t") -> ToolContext:
    return ToolContext(tool_call_id="call-1", tool_name=name)


async def adapter(client: McpClient, name: str, prefix: str | None = None) -> McpToolAdapter:
    tools = {tool.name: tool for tool in await client.list_tools()}
    return McpToolAdapter(client, tools[name], prefix=prefix)


async def test_the_handshake_names_the_server_and_lists_its_tools_with_their_schemas() -> None:
    async with stdio_client() as client:
        assert client.server_name == "py-test-server"
        assert client.server_version == "1.2.3"
        assert client.protocol_version == "2025-11-25"
        assert client.instructions == "Use echo to test."
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert {"echo", "image", "mixed", "weather", "die", "hang"} <= set(tools)
    echo = McpToolAdapter(client, tools["echo"])
    assert echo.description == "Echo the text back."
    assert echo.parameters["properties"]["text"]["type"] == "string"
    assert echo.parameters["required"] == ["text"]


async def test_a_prefix_names_the_tool_and_the_server_still_gets_its_own_name() -> None:
    async with stdio_client() as client:
        echo = await adapter(client, "echo", prefix="py")
        assert echo.name == "py__echo"
        result = await echo.execute({"text": "hello"}, ctx())
    assert result.text == "hello"


async def test_text_and_image_results_become_text_and_image_content() -> None:
    async with stdio_client() as client:
        image = await (await adapter(client, "image")).execute({}, ctx())
    assert len(image.content) == 1
    block = image.content[0]
    assert isinstance(block, ImageContent) and block.mime_type == "image/png"
    assert block.data.startswith("iVBORw0KGgo")


async def test_audio_resources_and_links_are_converted_block_by_block() -> None:
    async with stdio_client() as client:
        result = await (await adapter(client, "mixed")).execute({}, ctx())
    kinds = [type(block).__name__ for block in result.content]
    assert kinds == [
        "TextContent",
        "TextContent",
        "TextContent",
        "ImageContent",
        "TextContent",
        "TextContent",
    ]
    texts = [b.text for b in result.content if isinstance(b, TextContent)]
    assert texts[0] == "first"
    assert texts[1] == "[audio: audio/wav, 8 bytes]"
    assert texts[2] == "the notes"  # an embedded text resource gives its own text
    assert texts[3] == "[resource <file:///data.bin>: application/octet-stream, 30 bytes]"
    assert texts[4] == "[resource link: big.log <file:///big.log> (the log)]"
    embedded_image = result.content[3]
    assert isinstance(embedded_image, ImageContent) and embedded_image.mime_type == "image/png"


async def test_structured_content_is_kept_in_details_and_read_when_it_is_all_there_is() -> None:
    async with stdio_client() as client:
        weather = await (await adapter(client, "weather")).execute({"city": "Oslo"}, ctx())
        bare = await (await adapter(client, "structured_only")).execute({}, ctx())
    assert weather.details == {"structured_content": {"city": "Oslo", "celsius": 21.5}}
    assert '"celsius": 21.5' in weather.text
    assert bare.details == {"structured_content": {"answer": 42}}
    assert bare.text == '{"answer": 42}'


async def test_an_is_error_result_fails_the_call_with_the_servers_text() -> None:
    async with stdio_client() as client:
        fail = await adapter(client, "fail")
        with pytest.raises(ToolError, match="Error executing tool fail"):
            await fail.execute({"message": "nope"}, ctx())
        # The connection is fine afterwards.
        assert (await client.call_tool("echo", {"text": "still here"})).is_error is False


async def test_a_server_that_dies_mid_call_is_reported_with_its_status_and_stderr() -> None:
    async with stdio_client() as client:
        die = await adapter(client, "die")
        with pytest.raises(ToolError) as caught:
            await die.execute({"code": 3}, ctx())
        message = str(caught.value)
        assert "Connection closed during tools/call die" in message
        assert "exited with status 3" in message
        assert "dying now: disk on fire" in message
        assert client.exited() is not None and "exited with status 3" in client.exited()  # type: ignore[operator]
        # Every later call fails at once, saying why.
        with pytest.raises(McpError, match="exited with status 3"):
            with anyio.fail_after(5):
                await client.call_tool("echo", {"text": "anyone?"})


async def test_a_call_that_hangs_past_the_call_timeout_fails_and_the_server_stays_usable() -> None:
    async with stdio_client(call_timeout=1.0) as client:
        hang = await adapter(client, "hang")
        started = anyio.current_time()
        with pytest.raises(ToolError, match=r"tools/call hang got no answer within 1 s"):
            await hang.execute({"seconds": 600}, ctx())
        assert anyio.current_time() - started < 30
        assert client.exited() is None
        echo = await client.call_tool("echo", {"text": "after"})
    assert echo.content[0].text == "after"  # type: ignore[union-attr]


async def test_a_per_adapter_call_timeout_overrides_the_clients() -> None:
    async with stdio_client(call_timeout=None) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        hang = McpToolAdapter(client, tools["hang"], call_timeout=0.5)
        with pytest.raises(ToolError, match=r"got no answer within 0\.5 s"):
            await hang.execute({"seconds": 600}, ctx())


async def test_a_cancelled_call_ends_promptly_and_the_server_stays_usable() -> None:
    async with stdio_client() as client:
        hang = await adapter(client, "hang")
        context = ctx()

        async def cancel_soon() -> None:
            await anyio.sleep(0.5)
            context.cancel.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(cancel_soon)
            with pytest.raises(ToolError, match="cancelled"):
                await hang.execute({"seconds": 600}, context)
        assert (await client.call_tool("echo", {"text": "ok"})).is_error is False


async def test_a_stderr_flood_of_non_utf8_bytes_is_drained_and_its_tail_kept() -> None:
    async with stdio_client() as client:
        flood = await adapter(client, "flood_stderr")
        result = await flood.execute({"kib": 1024}, ctx())  # 1 MiB: far beyond any pipe buffer
        assert result.text == "flooded"
        die = await adapter(client, "die")
        with pytest.raises(ToolError) as caught:
            await die.execute({"code": 5}, ctx())
    message = str(caught.value)
    assert "exited with status 5" in message
    assert "last words \ufffd\ufffd" in message  # decoded lossily
    tail = message.split("last stderr: ", 1)[1]
    assert len(tail.encode()) <= 3 * 4096 + 3  # the kept tail is bounded (4 KiB of bytes)


async def test_a_server_that_exits_between_calls_is_seen_as_gone_and_later_calls_fail_at_once() -> (
    None
):
    async with stdio_client() as client:
        leave = await adapter(client, "exit_after_answer")
        assert (await leave.execute({"code": 0}, ctx())).text == "leaving"
        with anyio.fail_after(10):
            while client.exited() is None:  # noqa: ASYNC110 - the exit watch is polled
                await anyio.sleep(0.05)
            # Gone at first sight; the reason settles on the exit status once it is seen.
            while not (client.exited() or "").startswith("exited with status 0"):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        with pytest.raises(McpError, match="exited with status 0"):
            with anyio.fail_after(5):
                await client.call_tool("echo", {"text": "late"})


async def test_closing_reads_as_closed_and_leaves_no_process() -> None:
    async with stdio_client() as client:
        pid = client._transport.state.process.pid  # type: ignore[attr-defined]
        assert client.exited() is None
    assert client.exited() == "was closed"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_the_server_gets_only_the_safe_environment_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("YOAGENT_TEST_SECRET", "sk-must-not-leak")
    async with stdio_client(env={"GIVEN": "yes"}) as client:
        hidden = await client.call_tool("env", {"name": "YOAGENT_TEST_SECRET"})
        given = await client.call_tool("env", {"name": "GIVEN"})
        path = await client.call_tool("env", {"name": "PATH"})
    assert hidden.content[0].text == ""  # type: ignore[union-attr]
    assert given.content[0].text == "yes"  # type: ignore[union-attr]
    assert path.content[0].text == os.environ["PATH"]  # type: ignore[union-attr]
    async with stdio_client(inherit_env=True) as client:
        inherited = await client.call_tool("env", {"name": "YOAGENT_TEST_SECRET"})
    assert inherited.content[0].text == "sk-must-not-leak"  # type: ignore[union-attr]


async def test_a_command_that_cannot_start_is_a_clear_error() -> None:
    with pytest.raises(McpError, match=r"cannot start '/nonexistent/server': No such file"):
        async with McpClient.stdio("/nonexistent/server"):
            pass


async def test_a_server_that_never_answers_the_handshake_is_bounded() -> None:
    silent = McpClient.stdio(
        sys.executable, ["-c", "import time; time.sleep(600)"], handshake_timeout=1
    )
    with pytest.raises(McpError, match=r"no answer to initialize within 1 s"):
        async with silent:
            pass


async def test_a_server_that_dies_during_the_handshake_says_why() -> None:
    crash = McpClient.stdio(
        sys.executable, ["-c", "import sys; sys.stderr.write('bad config\\n'); sys.exit(2)"]
    )
    with pytest.raises(McpError) as caught:
        async with crash:
            pass
    assert "exited with status 2" in str(caught.value)
    assert "bad config" in str(caught.value)


def test_a_stdio_server_is_named_by_its_command_and_script_never_its_options() -> None:
    client = McpClient.stdio("/usr/bin/python3", ["-u", "/srv/tools/server.py", "--token", "abc"])
    assert client.name == "python3 server.py"
    assert py_server_argv()[1].endswith("py_server.py")
