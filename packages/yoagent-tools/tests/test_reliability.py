"""The tools' defects of issue 10, each pinned by a test named after it.

Every test here failed on the code before its fix (checked when the fix landed).
"""

from __future__ import annotations

import errno
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import pytest
from tools_helpers import ENGINES, is_alive, make_ctx

from yoagent.core import CancelToken, ToolContext, ToolError
from yoagent.tools import (
    BashTool,
    EditFileTool,
    ListFilesTool,
    PathSandbox,
    ReadFileTool,
    SearchTool,
    WriteFileTool,
)
from yoagent.tools.edit_file import Edit, EditError, apply_edits

# -- 2: parallel edits of one file ------------------------------------------------


async def test_parallel_edits_of_one_file_lose_no_edit(tmp_path: Path) -> None:
    edits = 1000
    path = tmp_path / "shared.txt"
    path.write_text("".join(f"<{index}>\n" for index in range(edits)))
    tool = EditFileTool()
    applied: list[int] = []

    async def edit(index: int) -> None:
        await tool.execute(
            {"path": str(path), "old_text": f"<{index}>\n", "new_text": f"<{index}:done>\n"},
            make_ctx("edit_file"),
        )
        applied.append(index)

    async with anyio.create_task_group() as group:
        for index in range(edits):
            group.start_soon(edit, index)
    text = path.read_text()
    lost = [index for index in applied if f"<{index}:done>" not in text]
    assert len(applied) == edits
    assert lost == []


async def test_parallel_writes_and_edits_of_one_file_apply_one_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("start\n")
    writer, editor = WriteFileTool(), EditFileTool()

    async def write_then_edit(index: int) -> None:
        await writer.execute({"path": str(path), "content": f"v{index}\n"}, make_ctx("write_file"))

    async with anyio.create_task_group() as group:
        for index in range(50):
            group.start_soon(write_then_edit, index)
    final = path.read_text()
    assert final.startswith("v") and final.count("\n") == 1  # one whole write, never a mix
    await editor.execute({"path": str(path), "old_text": final, "new_text": "end\n"}, make_ctx())
    assert path.read_text() == "end\n"


# -- 3: output is always valid text -------------------------------------------------


def _odd_tree(root: Path) -> None:
    os.mkdir(os.fsencode(root / "dir") + b"\xfe")
    with open(os.fsencode(root) + b"/bad\xff.txt", "wb") as file:
        file.write(b"needle \xfe\xff here\n")


async def test_undecodable_file_names_are_escaped_in_list_files(
    tmp_path: Path, ctx: ToolContext
) -> None:
    _odd_tree(tmp_path)
    result = await ListFilesTool(PathSandbox([tmp_path])).execute({}, ctx)
    assert result.text.splitlines() == ["bad\\xff.txt", "dir\\xfe/"]
    result.text.encode("utf-8")  # no lone surrogate: a request body can carry it


@pytest.mark.parametrize("engine", ENGINES)
async def test_undecodable_names_and_bytes_are_escaped_in_search(
    tmp_path: Path, ctx: ToolContext, engine: Any
) -> None:
    _odd_tree(tmp_path)
    result = await SearchTool(PathSandbox([tmp_path]), engine=engine).execute(
        {"pattern": "needle"}, ctx
    )
    assert result.text == "bad\\xff.txt:1:needle \\xfe\\xff here"
    result.text.encode("utf-8")


async def test_undecodable_bytes_are_escaped_in_bash_output(ctx: ToolContext) -> None:
    result = await BashTool().execute({"command": r"printf 'a\xffb\n'; printf '\xfe' >&2"}, ctx)
    assert "a\\xffb" in result.text and "\\xfe" in result.text
    result.text.encode("utf-8")


async def test_a_lone_surrogate_in_a_path_argument_never_reaches_a_result(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError) as info:
        await ReadFileTool(PathSandbox([tmp_path])).execute({"path": "nope\udcff.txt"}, ctx)
    str(info.value).encode("utf-8")


# -- 4: the near-miss hint is bounded ---------------------------------------------


def _words(seed: int, count: int) -> str:
    vocabulary = ["alpha", "beta", "gamma", "delta", "x", "y", "return", "if", "self"]
    return " ".join(vocabulary[(seed * 7 + index * 3) % len(vocabulary)] for index in range(count))


async def test_edit_near_miss_hint_on_a_16kb_file_is_bounded(
    tmp_path: Path, ctx: ToolContext
) -> None:
    path = tmp_path / "big.py"
    path.write_text("\n".join(_words(index, 6) for index in range(400)) + "\n")
    old_text = "\n".join(_words(index * 13 + 5, 6) + " z" for index in range(60))
    started = time.monotonic()
    with pytest.raises(ToolError, match="old_text was not found"):
        await EditFileTool().execute(
            {"path": str(path), "old_text": old_text, "new_text": "x"}, ctx
        )
    assert time.monotonic() - started < 5  # 26 s before the fix


def test_edit_near_miss_hint_stops_when_the_call_is_cancelled() -> None:
    data = ("\n".join(_words(index, 6) for index in range(400)) + "\n").encode()
    old_text = "\n".join(_words(index * 13 + 5, 6) + " z" for index in range(60))
    started = time.monotonic()
    with pytest.raises(EditError) as info:
        apply_edits(data, [Edit(old_text, "x")], stop=lambda: True)
    assert time.monotonic() - started < 0.3
    assert "Did you mean" not in str(info.value)


def test_edit_near_miss_hint_still_finds_the_closest_lines() -> None:
    data = b"def f():\n    return 1\n\ndef g(a, b):\n    total = a + b\n    return total\n"
    with pytest.raises(EditError) as info:
        apply_edits(data, [Edit("def g(a, b):\n    total = a - b\n", "x")])
    assert "Did you mean lines 4-5" in str(info.value)


# -- 7: the Python engine neither freezes nor eats memory ------------------------


async def test_catastrophic_regex_does_not_freeze_the_python_engine(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "a.txt").write_text("a" * 28 + "b\n")
    started = time.monotonic()
    result = await SearchTool(PathSandbox([tmp_path]), engine="python", timeout=5).execute(
        {"pattern": "(a+)+$"}, ctx
    )
    assert result.text == "No matches for '(a+)+$'."
    assert time.monotonic() - started < 5  # Python's re: minutes, holding the GIL


def _one_line_file(path: Path, size: int) -> None:
    with open(path, "wb") as file:
        for _ in range(size >> 20):
            file.write(b"x" * (1 << 20))
        file.write(b"needle\n")


async def test_python_engine_memory_is_bounded_on_a_one_line_file(
    tmp_path: Path, ctx: ToolContext
) -> None:
    _one_line_file(tmp_path / "one-line.txt", 40 << 20)
    tool = SearchTool(PathSandbox([tmp_path]), engine="python", timeout=60)
    tracemalloc.start()
    try:
        result = await tool.execute({"pattern": "needle"}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.text.startswith("one-line.txt:1:xxxx")
    assert result.text.endswith("[line cut at 500 characters]")
    assert peak < 24 << 20  # 3 copies of the line (> 120 MB) before the fix


async def test_python_engine_finds_matches_across_window_edges_of_a_long_line(
    tmp_path: Path, ctx: ToolContext
) -> None:
    from yoagent.tools._pysearch import MAX_LINE_BYTES

    for offset in (MAX_LINE_BYTES - 3, MAX_LINE_BYTES, 2 * MAX_LINE_BYTES + 7):
        data = b"y" * offset + b"needle" + b"y" * 100 + b"\nsecond needle\n"
        (tmp_path / "long.txt").write_bytes(data)
        result = await SearchTool(PathSandbox([tmp_path]), engine="python").execute(
            {"pattern": "needle", "max_results": 10}, ctx
        )
        assert [line.split(":")[1] for line in result.text.splitlines()] == ["1", "2"]
        anchored = await SearchTool(PathSandbox([tmp_path]), engine="python").execute(
            {"pattern": "^needle"}, ctx
        )
        assert anchored.text == "No matches for '^needle'."


# -- 9: bash kills what left its group ----------------------------------------------


def _pid_after(text: str, marker: str) -> int:
    for line in text.splitlines():
        if line.startswith(marker):
            return int(line.removeprefix(marker))
    raise AssertionError(f"no {marker} in {text!r}")


def _wait_dead(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while is_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not is_alive(pid)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="descendants are tracked through /proc")
async def test_a_setsid_child_of_a_command_dies_with_its_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = (
        f"(setsid bash -c 'echo $$ > {pid_file}; exec sleep 300' &); "
        f"while [ ! -s {pid_file} ]; do sleep 0.05; done; echo PID=$(cat {pid_file}); sleep 100"
    )
    with pytest.raises(ToolError, match="timed out") as info:
        await BashTool().execute({"command": command, "timeout": 2}, make_ctx())
    assert _wait_dead(_pid_after(str(info.value), "PID="))


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="descendants are tracked through /proc")
async def test_a_setsid_child_of_a_command_dies_with_its_cancellation(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    token = CancelToken()
    command = f"setsid sleep 300 & echo $! > {pid_file}; sleep 100"

    async def cancel_soon() -> None:
        for _ in range(400):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await anyio.sleep(0.05)
        token.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(cancel_soon)
        with pytest.raises(ToolError, match="cancelled"):
            await BashTool().execute({"command": command}, make_ctx(cancel=token))
    assert _wait_dead(int(pid_file.read_text()))


# -- 11: API keys stay out of commands -------------------------------------------


async def test_api_keys_are_scrubbed_from_the_bash_environment(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-1",
        "OPENAI_API_KEY": "sk-2",
        "ANTHROPIC_AUTH_TOKEN": "tok-3",
        "AWS_SECRET_ACCESS_KEY": "aws-4",
        "AWS_SESSION_TOKEN": "aws-5",
        "AWS_BEARER_TOKEN_BEDROCK": "aws-6",
        "HF_TOKEN": "hf-7",
        "my_service_api_key": "lower-8",
    }
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    result = await BashTool().execute({"command": "env"}, ctx)
    assert "PLAIN_SETTING=kept" in result.text
    assert not [value for value in secrets.values() if value in result.text]
    kept = await BashTool(keep_secrets=True).execute({"command": "env"}, ctx)
    assert all(f"{key}={value}" in kept.text for key, value in secrets.items())
    explicit = await BashTool(env={"OPENAI_API_KEY": "chosen"}).execute({"command": "env"}, ctx)
    assert "OPENAI_API_KEY=chosen" in explicit.text and "sk-ant-1" not in explicit.text


# -- 14: the spawner leaks no descriptor --------------------------------------------


def _open_fds() -> set[int]:
    return {
        int(name) for name in os.listdir("/proc/self/fd" if os.path.isdir("/proc") else "/dev/fd")
    }


async def test_spawner_leaks_no_descriptor_when_the_second_pipe_fails(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_pipe = os.pipe
    calls = 0

    def pipe() -> tuple[int, int]:
        nonlocal calls
        calls += 1
        if calls == 3:  # the Wakeup's pipe, stdout's, then stderr's: too many open files
            raise OSError(errno.EMFILE, "Too many open files")
        return real_pipe()

    before = _open_fds()
    monkeypatch.setattr(os, "pipe", pipe)
    with pytest.raises(ToolError, match="Too many open files"):
        await BashTool().execute({"command": "true"}, ctx)
    monkeypatch.setattr(os, "pipe", real_pipe)
    assert _open_fds() - before == set()


# -- 15: names of 231-255 bytes --------------------------------------------------


async def test_write_and_edit_work_on_names_of_up_to_255_utf8_bytes(
    tmp_path: Path, ctx: ToolContext
) -> None:
    for name in ["😀" * 60 + ".txt", "中" * 85, "é" * 127 + "x"]:
        assert 231 <= len(name.encode()) <= 255
        path = tmp_path / name
        await WriteFileTool().execute({"path": str(path), "content": "one\n"}, ctx)
        await EditFileTool().execute({"path": str(path), "old_text": "one", "new_text": "two"}, ctx)
        assert path.read_text() == "two\n"
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["😀" * 60 + ".txt", "中" * 85, "é" * 127 + "x"]
    )  # no temporary file left behind


# -- 16: atomic writes keep owner, group, mode and xattrs ------------------------


@pytest.mark.parametrize("tool_name", ["write_file", "edit_file"])
async def test_atomic_writes_keep_owner_group_mode_and_xattrs(
    tmp_path: Path, ctx: ToolContext, tool_name: str
) -> None:
    path = tmp_path / "owned.txt"
    path.write_text("old\n")
    as_root = os.geteuid() == 0
    if as_root:
        os.chown(path, 1234, 5678)
    os.chmod(path, 0o2751 if as_root else 0o751)
    try:
        os.setxattr(path, "user.origin", b"kept")
        has_xattr = True
    except OSError:
        has_xattr = False
    before = path.stat()
    if tool_name == "write_file":
        await WriteFileTool().execute({"path": str(path), "content": "new\n"}, ctx)
    else:
        await EditFileTool().execute({"path": str(path), "old_text": "old", "new_text": "new"}, ctx)
    after = path.stat()
    assert path.read_text() == "new\n"
    assert after.st_ino != before.st_ino  # really replaced
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert after.st_mode == before.st_mode
    if has_xattr:
        assert os.getxattr(path, "user.origin") == b"kept"


# -- 17: no controlling terminal -------------------------------------------------


def test_commands_have_no_controlling_terminal(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    script = tmp_path / "run.py"
    script.write_text(
        "import anyio\n"
        "from yoagent.core import ToolContext\n"
        "from yoagent.tools import BashTool\n"
        "async def main():\n"
        "    r = await BashTool(timeout=20).execute({'command': "
        '"if : </dev/tty; then echo TTY-OPENED; else echo NO-TTY; fi"}, '
        "ToolContext(tool_call_id='1', tool_name='bash'))\n"
        "    print('RESULT', r.text)\n"
        "anyio.run(main)\n"
    )
    child = pexpect.spawn(sys.executable, [str(script)], timeout=30, encoding="utf-8")
    child.expect(pexpect.EOF)
    output = child.before
    assert "RESULT Exit code: 0" in output
    # with the terminal inherited: TTY-OPENED (and a read from it would hang)
    assert "NO-TTY" in output and "TTY-OPENED" not in output


# -- 18: a deep tree is a warning, never a crash --------------------------------------


def _deep_tree(root: Path, depth: int) -> None:
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1]), "w") as f:
            f.write("needle at the bottom\n")
    finally:
        for fd in fds:
            os.close(fd)


def _remove_deep_tree(root: Path, depth: int) -> None:
    """shutil.rmtree recurses: remove the tree bottom-up through descriptors."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        os.unlink("bottom.txt", dir_fd=fds[-1])
        for index in range(depth, 0, -1):
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[index - 1])
    finally:
        for fd in fds:
            os.close(fd)


async def test_python_search_on_a_deep_tree_is_a_warning_not_a_recursion_error(
    tmp_path: Path, ctx: ToolContext
) -> None:
    depth = 1100
    (tmp_path / "top.txt").write_text("needle at the top\n")
    _deep_tree(tmp_path, depth)
    try:
        result = await SearchTool(PathSandbox([tmp_path]), engine="python").execute(
            {"pattern": "needle"}, ctx
        )
    finally:
        _remove_deep_tree(tmp_path, depth)
    assert result.text.startswith("top.txt:1:needle at the top\nWarnings:\n")
    assert "deeper than 100 folders; not entered" in result.text
