"""Files a cloned project can carry that are not files: a FIFO, a symlink to ``/dev/zero``.

The approval preview and ``/undo``'s snapshot read the target of a ``write_file`` or
``edit_file`` call before it runs. Neither may block on a FIFO (no writer ever comes), read
a device without end, or follow a link out of the folders the tools may touch; and the
session stays responsive to Ctrl+C and SIGTERM throughout.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("FIFOs and /dev/zero need a POSIX system", allow_module_level=True)

import pexpect
from cli_testing import YOAGENT
from pty_testing import PROMPT, Spawn, see, spawn
from sse_server import Call, Reply, ScriptedServer, text

from yoagent.cli import changes
from yoagent.cli.changes import ChangeTracker
from yoagent.cli.file_read import Unreadable, read_regular
from yoagent.cli.preview import preview
from yoagent.core import (
    TextContent,
    ToolCallRequest,
    ToolExecutionEnd,
    ToolResultMessage,
    UserMessage,
)
from yoagent.tools import PathSandbox

__all__ = ["spawn"]  # the fixture

MEMORY_LIMIT = 2 * 1024**3
"""The address space the CLI gets in these tests: reading ``/dev/zero`` without end hits
it in a second or two (a MemoryError) instead of eating the machine's memory."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _run_plain(
    workdir: Path, env: dict[str, str], server: ScriptedServer, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``yoagent --plain`` in ``workdir`` with one prompt on stdin (then end of input: a
    question is answered no), within a bounded address space."""
    return subprocess.run(
        [str(YOAGENT), "--base-url", server.url, "--model", "scripted-model", "--plain", *extra],
        cwd=workdir,
        env=env,
        input="please fix data\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,  # a hang fails here (the process is killed)
        check=False,
        preexec_fn=_limit_memory,
    )


EDIT = Call("edit_file", {"path": "data", "old_text": "a", "new_text": "b"})
WRITE = Call("write_file", {"path": "data", "content": "x"})


@pytest.mark.parametrize("call", [EDIT, WRITE], ids=["edit_file", "write_file"])
@pytest.mark.parametrize("answer", ["asked", "yes"])
def test_a_fifo_in_the_project_hangs_neither_the_approval_nor_a_yes_run(
    server: ScriptedServer, workdir: Path, cli_env: dict[str, str], call: Call, answer: str
) -> None:
    os.mkfifo(workdir / "data")
    server.add(Reply([call]), text("left it alone"))
    result = _run_plain(workdir, cli_env, server, *(["--yes"] if answer == "yes" else []))
    assert result.returncode == 0, result.stderr
    assert "left it alone" in result.stdout
    tool_result = server.requests[1]["messages"][-1]["content"]
    if answer == "asked":
        assert "(no preview: data is a FIFO, not a regular file)" in result.stdout
        assert "the user declined" in tool_result  # the end of input answered no
    else:
        assert "FIFO" in tool_result  # the tool refused it


@pytest.mark.parametrize("answer", ["asked", "yes"])
def test_a_symlink_to_dev_zero_is_neither_read_nor_followed_out_of_the_project(
    server: ScriptedServer, workdir: Path, cli_env: dict[str, str], answer: str
) -> None:
    os.symlink("/dev/zero", workdir / "data")
    server.add(Reply([EDIT]), text("left it alone"))
    result = _run_plain(workdir, cli_env, server, *(["--yes"] if answer == "yes" else []))
    assert result.returncode == 0, result.stderr
    assert "MemoryError" not in result.stderr
    assert "left it alone" in result.stdout
    tool_result = server.requests[1]["messages"][-1]["content"]
    if answer == "asked":
        assert "(no preview: data resolves to /dev/zero, outside the allowed paths)" in (
            result.stdout
        )
        assert "the user declined" in tool_result
    else:
        assert "outside the allowed paths" in tool_result  # the tool refused it


async def test_a_device_inside_an_allowed_path_is_refused_by_its_type_not_read(
    tmp_path: Path,
) -> None:
    """With ``--allow-path /dev`` the link leads inside: the preview and the snapshot see
    a character device and read nothing of it."""
    os.symlink("/dev/zero", tmp_path / "data")
    sandbox = PathSandbox([tmp_path, "/dev"])
    shown = await preview("edit_file", {"path": "data", "old_text": "a", "new_text": "b"}, sandbox)
    assert shown == ["(no preview: data is a character device, not a regular file)"]
    tracker = ChangeTracker(tmp_path, sandbox)
    tracker.begin_turn()
    request = ToolCallRequest(
        tool_call_id="c1", tool_name="write_file", arguments={"path": "data", "content": "x"}
    )
    await tracker(request)
    change = tracker._pending["c1"]  # pyright: ignore[reportPrivateUsage]
    assert (change.snapshot, change.before) == (False, None)


def test_a_link_swapped_in_after_resolution_is_refused_not_followed(tmp_path: Path) -> None:
    os.symlink("/dev/zero", tmp_path / "data")
    with pytest.raises(Unreadable) as caught:
        read_regular(str(tmp_path / "data"), 100, "data")
    assert str(caught.value) == "data became a symbolic link"


async def test_undo_says_why_it_kept_no_copy_of_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "MAX_SNAPSHOT_BYTES", 10)
    (tmp_path / "big.txt").write_text("x" * 11)
    tracker = ChangeTracker(tmp_path)
    tracker.begin_turn()
    request = ToolCallRequest(
        tool_call_id="c1", tool_name="write_file", arguments={"path": "big.txt", "content": "y"}
    )
    await tracker(request)
    (tmp_path / "big.txt").write_text("y")
    result = ToolResultMessage(
        tool_call_id="c1", tool_name="write_file", content=[TextContent(text="ok")]
    )
    tracker.observe(ToolExecutionEnd(result=result))
    tracker.end_turn([UserMessage.from_text("go")], 0)
    assert tracker.session_diff() == ["big.txt: changed (not compared: it is larger than 10 bytes)"]
    undone = tracker.undo_last()
    assert undone is not None
    assert undone[1].skipped == ["big.txt (no copy was kept: it is larger than 10 bytes)"]
    assert (tmp_path / "big.txt").read_text() == "y"


def test_pty_a_fifo_target_leaves_the_session_responsive_to_ctrl_c_and_sigterm(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    os.mkfifo(workdir / "data")
    server.add(Reply([WRITE]), text("never sent"))
    child = spawn("--base-url", server.url, "--model", "scripted-model")
    see(child, PROMPT)
    child.send("write it\r")
    see(child, "no preview: data is a FIFO")
    see(child, "allow?")
    child.sendintr()  # Ctrl+C at the question stops the run
    see(child, PROMPT)
    assert child.isalive()
    assert not any("never sent" in str(r.get("messages")) for r in server.requests)
    child.kill(signal.SIGTERM)
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 128 + signal.SIGTERM, (child.exitstatus, child.signalstatus)
