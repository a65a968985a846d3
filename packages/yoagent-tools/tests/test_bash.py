"""BashTool: output, exit codes, process-group kills, capped output, background jobs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
import trio
from tools_helpers import group_members, is_alive, make_ctx, wait_group_gone

from yoagent.core import CancelToken, ToolContext, ToolError, ToolResult
from yoagent.tools import BashTool

_IDS = re.compile(r"pid=(\d+) child=(\d+)")
# prints the group leader's pid (= the pgid) and a background child, then waits forever
_TREE = "sleep 60 & echo pid=$$ child=$!; wait"


def _ids(text: str) -> tuple[int, int]:
    match = _IDS.search(text)
    assert match is not None, text
    return int(match.group(1)), int(match.group(2))


async def test_runs_a_command_and_returns_stdout_with_the_exit_code(ctx: ToolContext) -> None:
    result = await BashTool().execute({"command": "echo hello"}, ctx)
    assert result.text == "Exit code: 0\nhello"
    assert result.details["exit_code"] == 0


async def test_a_failing_command_is_an_error_carrying_stdout_stderr_and_exit_code(
    ctx: ToolContext,
) -> None:
    with pytest.raises(ToolError) as info:
        await BashTool().execute({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert str(info.value) == "Exit code: 3\nSTDOUT:\nout\nSTDERR:\nerr"


async def test_stdin_is_empty_so_reading_it_ends_at_once(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await BashTool().execute({"command": "cat; read line; echo rc=$?"}, ctx)
    assert "rc=1" in result.text
    assert time.monotonic() - started < 5


async def test_runs_in_the_configured_folder_with_extra_environment(
    tmp_path: Path, ctx: ToolContext
) -> None:
    tool = BashTool(cwd=tmp_path, env={"YOAGENT_TEST_VAR": "42", "HOME": None})
    result = await tool.execute({"command": 'pwd; echo "$YOAGENT_TEST_VAR/${HOME:-unset}"'}, ctx)
    assert result.text.splitlines()[1:] == [str(tmp_path), "42/unset"]


async def test_deny_patterns_refuse_before_running(tmp_path: Path, ctx: ToolContext) -> None:
    marker = tmp_path / "ran"
    tool = BashTool(deny_patterns=[r"\brm\s+-rf\s+/"])
    with pytest.raises(ToolError, match=r"refused.*deny pattern"):
        await tool.execute({"command": f"touch {marker}; rm -rf /nonexistent-x"}, ctx)
    assert not marker.exists()


async def test_bad_arguments_are_clear_errors(ctx: ToolContext) -> None:
    tool = BashTool(timeout=5, max_timeout=10)
    with pytest.raises(ToolError, match="invalid arguments for bash: command: Field required"):
        await tool.execute({}, ctx)
    with pytest.raises(ToolError, match="less than or equal to 10"):
        await tool.execute({"command": "true", "timeout": 11}, ctx)
    with pytest.raises(ToolError, match="empty"):
        await tool.execute({"command": "  "}, ctx)


@pytest.mark.parametrize("waitid", [True, False], ids=["waitid", "no-waitid"])
async def test_timeout_kills_the_whole_group_and_returns_the_output_so_far(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, waitid: bool
) -> None:
    """Also without ``os.waitid`` (macOS before Python 3.13), where the runner polls."""
    if not waitid:
        monkeypatch.delattr(os, "waitid")
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        await BashTool().execute({"command": f"echo before; {_TREE}", "timeout": 1}, ctx)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert message.startswith("bash: the command timed out after 1 s and was killed")
    assert "before" in message
    pgid, child = _ids(message)
    assert wait_group_gone(pgid) == []
    assert not is_alive(child)
    assert elapsed < 3


async def test_cancel_token_kills_the_group() -> None:
    token = CancelToken()
    seen: list[str] = []
    started = anyio.Event()

    def on_update(result: ToolResult) -> None:
        seen.append(result.text)
        if _IDS.search(result.text):
            started.set()

    context = make_ctx("bash", cancel=token, on_update=on_update)
    outcome: list[BaseException] = []

    async def run() -> None:
        try:
            await BashTool().execute({"command": _TREE}, context)
        except ToolError as error:
            outcome.append(error)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(5):
            await started.wait()
        pgid, child = _ids(seen[-1])
        assert pgid in group_members(pgid)
        assert is_alive(child)
        token.cancel()
    assert len(outcome) == 1
    assert str(outcome[0]).startswith("bash: cancelled")
    assert wait_group_gone(pgid) == []
    assert not is_alive(child)


async def test_outer_cancellation_kills_the_group_and_propagates() -> None:
    seen: list[str] = []
    context = make_ctx("bash", on_update=lambda r: seen.append(r.text))
    finished = False
    with anyio.move_on_after(0.7) as scope:
        await BashTool().execute({"command": _TREE}, context)
        finished = True
    assert scope.cancelled_caught
    assert not finished
    pgid, child = _ids(seen[-1])
    assert wait_group_gone(pgid) == []
    assert not is_alive(child)


async def _started(seen: list[str]) -> None:
    """Wait (under plain asyncio) until the command printed its ids."""
    for _ in range(250):
        if any(_IDS.search(text) for text in seen):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the command did not start")


def test_a_call_left_pending_when_the_loop_shuts_down_kills_the_group() -> None:
    """A call started and never awaited: ``asyncio.run`` ends and drops it."""
    seen: list[str] = []
    context = make_ctx("bash", on_update=lambda r: seen.append(r.text))

    async def main() -> None:
        asyncio.get_running_loop().create_task(BashTool().execute({"command": _TREE}, context))
        await _started(seen)
        # return without awaiting or cancelling the call

    asyncio.run(main())
    pgid, child = _ids(seen[-1])
    assert wait_group_gone(pgid) == []
    assert not is_alive(child)


def test_a_coroutine_closed_without_being_resumed_kills_the_group() -> None:
    """The call's coroutine is closed where it waits (GeneratorExit), outside any loop."""
    seen: list[str] = []
    context = make_ctx("bash", on_update=lambda r: seen.append(r.text))
    loop = asyncio.new_event_loop()
    coro = BashTool().execute({"command": _TREE}, context)
    task = loop.create_task(coro)

    loop.run_until_complete(_started(seen))
    pgid, child = _ids(seen[-1])
    assert is_alive(child)
    # anyio's cancel scopes complain that no loop runs; the call's cleanup still runs
    with contextlib.suppress(RuntimeError):
        coro.close()
    assert wait_group_gone(pgid) == []
    assert not is_alive(child)
    loop.set_exception_handler(lambda _loop, _context: None)
    del task
    loop.close()


async def test_gigabytes_of_output_are_capped_and_drained_with_bounded_memory(
    ctx: ToolContext,
) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Time is the benchmark's business (benchmarks/RESULTS.md); here a generous timeout only
    # keeps a loaded machine from cutting the 3 GB short.
    tool = BashTool(timeout=300, max_timeout=300)
    result = await tool.execute({"command": "yes | head -c 3000000000"}, ctx)
    rss_growth_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    details = result.details
    assert details["stdout_bytes"] == 3_000_000_000
    assert details["stdout_cut"] is True
    assert len(result.text.encode()) < 256 * 1024 + 1024
    assert "bytes dropped" in result.text
    assert result.text.endswith("y")  # the last part is kept too
    assert rss_growth_kb < 64 * 1024  # far below the 3 GB printed


async def test_output_is_decoded_after_cutting(ctx: ToolContext) -> None:
    tool = BashTool(max_output_bytes=1024)
    # 3-byte characters: the cut falls inside one; decoding after cutting replaces it
    result = await tool.execute({"command": "for i in $(seq 2000); do printf '€'; done"}, ctx)
    assert result.details["stdout_cut"] is True
    assert "€€€" in result.text


async def test_a_background_job_holding_the_pipes_does_not_hang_the_call(
    ctx: ToolContext,
) -> None:
    started = time.monotonic()
    result = await BashTool().execute(
        {"command": "sleep 30 & echo pid=$$ child=$!; echo done"}, ctx
    )
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 2.5
    assert "done" in result.text
    assert "NOTE: the command finished, but a background process" in result.text
    assert result.details["output_still_open"] is True
    _, child = _ids(result.text)
    assert is_alive(child)  # left running, its pipes drained, not closed
    import os
    import signal

    os.kill(child, signal.SIGKILL)


async def test_a_redirected_background_job_returns_at_once(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await BashTool().execute({"command": "sleep 30 > /dev/null 2>&1 & echo child=$!"}, ctx)
    assert time.monotonic() - started < 0.8
    assert result.details["output_still_open"] is False
    import os
    import signal

    os.kill(int(result.text.split("child=")[1].split()[0]), signal.SIGKILL)


async def test_output_is_streamed_as_updates() -> None:
    updates: list[ToolResult] = []
    context = make_ctx("bash", on_update=updates.append)
    result = await BashTool().execute({"command": "echo first; sleep 0.6; echo second"}, context)
    assert "first" in result.text and "second" in result.text
    assert updates, "no partial output was reported"
    assert "first" in updates[0].text and "second" not in updates[0].text
    assert updates[0].details == {"partial": True}


async def test_overhead_of_a_trivial_command_is_small(ctx: ToolContext) -> None:
    tool = BashTool()
    started = time.monotonic()
    for _ in range(10):
        await tool.execute({"command": "true"}, ctx)
    assert (time.monotonic() - started) / 10 < 0.25


def test_runs_under_trio() -> None:
    async def main() -> tuple[str, str]:
        ok = await BashTool().execute({"command": "echo trio"}, make_ctx("bash"))
        with pytest.raises(ToolError) as info:
            await BashTool().execute({"command": f"{_TREE}", "timeout": 1}, make_ctx("bash"))
        return ok.text, str(info.value)

    text, timed_out = trio.run(main)
    assert text == "Exit code: 0\ntrio"
    pgid, _ = _ids(timed_out)
    assert wait_group_gone(pgid) == []


def test_trio_cancellation_kills_the_group() -> None:
    seen: list[str] = []

    async def main() -> None:
        context = make_ctx("bash", on_update=lambda r: seen.append(r.text))
        with trio.move_on_after(0.7):
            await BashTool().execute({"command": _TREE}, context)

    trio.run(main)
    pgid, child = _ids(seen[-1])
    assert wait_group_gone(pgid) == []
    assert not is_alive(child)


async def test_a_failing_command_keeps_its_exit_code_in_the_error_details() -> None:
    from yoagent.core import ToolError

    tool = BashTool()
    with pytest.raises(ToolError) as caught:
        await tool.execute({"command": "echo out; exit 3"}, make_ctx())
    assert caught.value.details["exit_code"] == 3
    assert "Exit code: 3" in str(caught.value)


async def test_a_failing_progress_callback_never_leaves_the_command_running(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"

    def broken(text: str) -> None:
        raise RuntimeError("event stream closed")

    ctx = ToolContext(tool_call_id="c", tool_name="bash", on_progress=broken)
    with pytest.raises(RuntimeError):
        await BashTool().execute({"command": f"touch {marker}; sleep 30"}, ctx)
    await anyio.sleep(0.3)
    assert not marker.exists()


_PROGRAM = f"""
import anyio
from yoagent.core import ToolContext
from yoagent.tools import BashTool

async def main() -> None:
    shown = lambda result: print(result.text, flush=True)
    context = ToolContext(tool_call_id="call-1", tool_name="bash", on_update=shown)
    await BashTool().execute({{"command": {_TREE!r}}}, context)

anyio.run(main)
"""


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_program_killed_mid_command_takes_the_commands_group_with_it(how: str) -> None:
    """A plain Python program using the bash tool, stopped by SIGTERM (Python's default:
    no exit handler runs) or SIGKILL, left its commands running (issue 27)."""
    program = subprocess.Popen(
        [sys.executable, "-c", _PROGRAM],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert program.stdout is not None
    line = ""
    while "child=" not in line:
        line = program.stdout.readline()
        assert line, "the program ended before its command started"
    pgid, child = _ids(line)
    try:
        program.send_signal(getattr(signal, how))
        program.wait(30)
        assert wait_group_gone(pgid, within=10) == []
        assert not is_alive(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
