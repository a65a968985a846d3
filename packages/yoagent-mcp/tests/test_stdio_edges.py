"""A hand-written stdio server that misbehaves: non-JSON lines, a null id, odd content, requests."""

from __future__ import annotations

import logging
import sys
import threading
import time

import pytest
from mcp_helpers import RAW_SERVER

from yoagent.core import TextContent, ToolContext, ToolError
from yoagent.core.support import reset_warn_once
from yoagent.mcp import McpClient, McpToolAdapter
from yoagent.mcp._stdio import EXIT_TAIL_GRACE, EXIT_WAIT, StdioState


def raw_client() -> McpClient:
    return McpClient.stdio(sys.executable, [str(RAW_SERVER)], call_timeout=30)


async def run(client: McpClient, name: str) -> object:
    tools = {tool.name: tool for tool in await client.list_tools()}
    context = ToolContext(tool_call_id="c", tool_name=name)
    return await McpToolAdapter(client, tools[name]).execute({}, context)


async def test_lines_that_are_not_json_rpc_are_skipped_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    async with raw_client() as client:
        result = await run(client, "garbage")
        assert result.text == "after garbage"  # type: ignore[attr-defined]
        state = client._transport.state  # type: ignore[attr-defined]
        assert state.non_json_lines == 3
    assert "not JSON-RPC (skipped): starting up, not JSON" in caplog.text


async def test_unmodelled_and_malformed_blocks_become_text_and_the_call_still_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reset_warn_once()  # the test may run twice in one process (mutmut's runs do)
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    async with raw_client() as client:
        result = await run(client, "odd")
    texts = [block.text for block in result.content if isinstance(block, TextContent)]  # type: ignore[attr-defined]
    assert texts[0] == "fine"
    assert '"data": "<5000 characters>"' in texts[1] and '"note": "3d"' in texts[1]
    assert texts[2] == "widget text"
    assert '"mimeType": "image/png"' in texts[3]
    assert texts[4] == "[1, 2]"  # structured content that is not an object is read as text
    assert "'hologram' block" in caplog.text


async def test_an_error_without_an_id_answers_the_one_request_in_flight() -> None:
    async with raw_client() as client:
        with pytest.raises(ToolError, match=r"tools/call nullid failed: lost id \(error -32000\)"):
            await run(client, "nullid")


async def test_server_requests_are_answered_ping_with_a_result_others_with_an_error() -> None:
    async with raw_client() as client:
        result = await run(client, "ask")
    assert result.text == "roots answer code -32600; ping {}"  # type: ignore[attr-defined]


class _SlowToExit:
    """A process that closed its output and exits only later (a loaded machine)."""

    def __init__(self) -> None:
        self.status: str | None = None
        self.has_exited = False
        self.stderr = self

    @property
    def done(self) -> threading.Event:
        event = threading.Event()
        if self.has_exited:
            event.set()
        return event

    def text(self) -> str:
        return ""


def test_a_closed_output_becomes_the_exit_status_however_late_the_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    process = _SlowToExit()
    state = StdioState(process)  # type: ignore[arg-type]
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    state.output_closed = True
    assert state.exit_reason() == "closed its output (its process is still running)"
    clock[0] += 10 * EXIT_TAIL_GRACE  # long past the grace, still running: not fixed
    assert state.exit_reason() == "closed its output (its process is still running)"
    process.status, process.has_exited = "exited with status 3", True
    assert state.exit_reason() == "exited with status 3"
    process.status = "exited with status 4"  # fixed once the exit is seen and drained
    assert state.exit_reason() == "exited with status 3"


async def test_a_closed_connection_waits_past_the_tail_grace_for_a_late_exit() -> None:
    """The exit of a server that closed its output is seen late (its watcher thread
    starved on a loaded machine): the error still names the exit status."""

    process = _SlowToExit()
    state = StdioState(process)  # type: ignore[arg-type]
    state.output_closed = True

    def exit_late() -> None:
        time.sleep(2 * EXIT_TAIL_GRACE)
        process.status, process.has_exited = "exited with status 3", True

    thread = threading.Thread(target=exit_late)
    thread.start()
    started = time.monotonic()
    reason = await state.settled_reason()
    thread.join()
    assert reason == "exited with status 3"
    assert time.monotonic() - started < EXIT_WAIT


async def test_a_server_still_running_with_its_output_closed_is_reported_after_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import yoagent.mcp._stdio as stdio

    monkeypatch.setattr(stdio, "EXIT_WAIT", 0.2)
    state = StdioState(_SlowToExit())  # type: ignore[arg-type]
    state.output_closed = True
    assert await state.settled_reason() == "closed its output (its process is still running)"


async def test_a_connection_the_host_closed_is_reported_at_once() -> None:
    state = StdioState(_SlowToExit())  # type: ignore[arg-type]  # still running
    state.closed_by_host = True
    started = time.monotonic()
    assert await state.settled_reason() == "was closed"
    assert time.monotonic() - started < EXIT_TAIL_GRACE
