"""A launcher that backgrounds the real server: its process group is killed whole."""

from __future__ import annotations

import os
import signal
import sys
import uuid
from pathlib import Path

import anyio
import pytest
from mcp_helpers import PY_SERVER, processes_with, wait_until_gone

from yoagent.mcp import McpClient, McpError, McpToolSource

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")


def launcher(marker: str, *, then: str) -> list[str]:
    """``sh -c`` that starts the real server in the background, then ``then``.

    A background job's stdin is /dev/null in a non-interactive shell: the launcher's own
    stdin is handed over through fd 3.
    """
    script = f'exec 3<&0; "{sys.executable}" "{PY_SERVER}" stdio {marker} <&3 3<&- & {then}'
    return ["-c", script]


async def test_closing_kills_the_whole_group_of_a_launcher_that_backgrounds_the_server() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    async with McpClient.stdio("sh", launcher(marker, then="wait"), own_process_group=True) as c:
        assert (await c.call_tool("echo", {"text": "through the launcher"})).is_error is False
        assert len(processes_with(marker)) >= 1  # the real server runs, as a grandchild
    assert wait_until_gone(marker) == []  # nothing left in the process table


async def test_a_launcher_that_exits_takes_its_backgrounded_server_with_it(
    tmp_path: Path,
) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    flag = tmp_path / "exit-now"
    wait_then_exit = f'while [ ! -e "{flag}" ]; do sleep 0.05; done; exit 7'
    client = McpClient.stdio("sh", launcher(marker, then=wait_then_exit), own_process_group=True)
    async with client:
        source = McpToolSource(client)
        assert len(await source.tools()) > 0
        flag.touch()  # the launcher exits now; the server it backgrounded still runs
        with anyio.fail_after(30):
            while not (client.exited() or "").startswith("exited with status 7"):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        assert wait_until_gone(marker) == []  # the group went when the launcher's exit was seen
        assert await source.tools() == []
        with pytest.raises(McpError, match="exited with status 7"):
            await client.call_tool("echo", {"text": "anyone?"})


async def test_without_its_own_group_only_the_command_is_killed() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    # The server itself ends when its input closes (a race with the check below), so the
    # launcher also backgrounds a process that reads nothing and ends on no cue of ours.
    idle = f"{marker}-idle"
    sleeper = f'"{sys.executable}" -c "import time; time.sleep(120)" {idle} </dev/null & wait'
    async with McpClient.stdio("sh", launcher(marker, then=sleeper), close_grace=0.2) as c:
        assert (await c.call_tool("echo", {"text": "x"})).is_error is False
        assert processes_with(idle)
    left = processes_with(idle)
    try:
        assert left, "a backgrounded process should outlive its launcher without its own group"
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)
