"""search word for word: where ``rg`` is found, the argument bounds, refusals, the path
prefix a file or a folder gives, how a ripgrep run that times out, is cancelled or had its
lines dropped is told, and the answer's notes and details."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest
from tools_helpers import make_ctx, needs_rg

from yoagent.core import CancelToken, ToolContext, ToolError
from yoagent.tools import PathSandbox, SearchTool, find_ripgrep, search
from yoagent.tools._found import Found
from yoagent.tools._ripgrep import Verified
from yoagent.tools.search import _answer


def program(folder: Path, name: str, body: str = "exit 0", *, executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def test_rg_is_found_on_the_given_path_or_beside_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path = program(tmp_path / "path", "rg")
    assert find_ripgrep(str(tmp_path / "path")) == str(on_path)
    beside = program(tmp_path / "venv", "rg")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "python"))
    monkeypatch.chdir(tmp_path / "venv")
    assert find_ripgrep(str(tmp_path / "empty")) == str(beside)
    beside.chmod(0o644)
    assert find_ripgrep(str(tmp_path / "empty")) is None


async def test_asking_for_ripgrep_without_it_is_an_error_and_auto_falls_back(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("needle\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nowhere" / "python"))
    with pytest.raises(ToolError) as info:
        await SearchTool(PathSandbox([tmp_path]), engine="ripgrep").execute(
            {"pattern": "needle"}, ctx
        )
    assert str(info.value) == "search: ripgrep (rg) was asked for but is not installed"
    tool = SearchTool(PathSandbox([tmp_path]))
    assert tool.engine == "auto"
    result = await tool.execute({"pattern": "needle"}, ctx)
    assert result.details["engine"] == "python"


async def test_max_results_is_bounded_and_defaults_to_the_tools_own(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "f.txt").write_text("m\nm\n")
    tool = SearchTool(PathSandbox([tmp_path]), engine="python", max_results=1)
    assert tool.max_results == 1
    result = await tool.execute({"pattern": "m"}, ctx)
    assert result.details["matches"] == 1 and result.details["truncated"] is True
    await tool.execute({"pattern": "m", "max_results": 1000}, ctx)
    for bad in (0, 1001):
        with pytest.raises(ToolError, match="max_results"):
            await tool.execute({"pattern": "m", "max_results": bad}, ctx)


async def test_allowed_paths_confine_the_search(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "in").mkdir()
    tool = SearchTool(allowed_paths=[tmp_path / "in"], engine="python")
    with pytest.raises(ToolError, match="outside the allowed paths"):
        await tool.execute({"pattern": "x", "path": str(tmp_path)}, ctx)


async def test_nul_bytes_are_refused_word_for_word(tmp_path: Path, ctx: ToolContext) -> None:
    tool = SearchTool(PathSandbox([tmp_path]), engine="python")
    with pytest.raises(ToolError) as pattern:
        await tool.execute({"pattern": "a\0b"}, ctx)
    assert str(pattern.value) == "search: the pattern contains a NUL byte"
    with pytest.raises(ToolError) as glob:
        await tool.execute({"pattern": "a", "glob": "*\0"}, ctx)
    assert str(glob.value) == "search: the glob contains a NUL byte"


@needs_rg
async def test_ripgreps_lines_are_named_as_the_path_was_given(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dirX").mkdir()
    (tmp_path / "dirX" / "f.txt").write_text("needle\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    free = SearchTool(engine="ripgrep")
    absolute = await free.execute(
        {"pattern": "needle", "path": str(tmp_path / "dirX" / "f.txt")}, ctx
    )
    assert absolute.text == f"{tmp_path}/dirX/f.txt:1:needle"
    folder = await free.execute({"pattern": "needle", "path": f"{tmp_path}/dirX/"}, ctx)
    assert folder.text == f"{tmp_path}/dirX/f.txt:1:needle"
    confined = SearchTool(PathSandbox([tmp_path]), engine="ripgrep")
    monkeypatch.chdir(tmp_path)
    relative = await confined.execute({"pattern": "needle", "path": "dirX/f.txt"}, ctx)
    assert relative.text == "dirX/f.txt:1:needle"
    monkeypatch.chdir(tmp_path / "dirX")
    bare = await free.execute({"pattern": "needle", "path": "f.txt"}, ctx)
    assert bare.text == "f.txt:1:needle"
    slashed = await free.execute({"pattern": "needle", "path": "../dirX/"}, ctx)
    assert slashed.text == "../dirX/f.txt:1:needle"


async def test_a_ripgrep_that_outlives_the_timeout_is_a_failure(
    tmp_path: Path, ctx: ToolContext
) -> None:
    slow = program(tmp_path / "bin", "rg", "exec sleep 3")
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", rg_path=str(slow), timeout=0.2)
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "x"}, ctx)
    assert str(info.value) == "search: the search timed out after 0.2 s"
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_a_cancelled_search_says_so(tmp_path: Path, engine: str) -> None:
    slow = program(tmp_path / "bin", "rg", "exec sleep 3")
    (tmp_path / "f.txt").write_text("x\n")
    token = CancelToken()
    token.cancel()
    tool = SearchTool(PathSandbox([tmp_path]), engine=engine, rg_path=str(slow))  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "x"}, make_ctx("search", cancel=token))
    assert str(info.value) == "search: cancelled"
    assert time.monotonic() - started < 2


@needs_rg
async def test_lines_dropped_or_left_unchecked_are_noted(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        (tmp_path / f"f{n}.txt").write_text("needle\n")

    def verify(fd: int, reported: list[object], *, stop: object) -> Verified:
        return Verified(kept=list(reported[:1]), dropped=1, stopped=True)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "verify", verify)
    monkeypatch.setattr(search, "filter_warnings", lambda fd, stderr: ("", 2))
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", timeout=5)
    result = await tool.execute({"pattern": "needle"}, ctx)
    kept, rest = result.text.split("\n", 1)
    assert kept.endswith(":1:needle")
    assert rest == (
        "[the search timed out after 5 s: results may be incomplete.]\n"
        "Warnings:\n"
        "1 reported line(s) left out: the file changed, or a folder on its path was "
        "replaced by a symbolic link, while the search ran\n"
        "1 reported line(s) left out: not re-read before the timeout\n"
        "2 warning(s) about paths that changed while the search ran left out"
    )


@needs_rg
async def test_the_re_reading_stops_at_the_searchs_deadline(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("needle\n")
    seen: list[bool] = []
    real_verify = search.verify

    def verify(fd: int, reported: list[object], *, stop: object) -> Verified:
        give_up = time.monotonic() + 5
        while not stop() and time.monotonic() < give_up:  # type: ignore[operator]
            time.sleep(0.01)
        seen.append(bool(stop()))  # type: ignore[operator]
        return real_verify(fd, reported, stop=lambda: False)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "verify", verify)
    # long enough for rg to start and report on a loaded machine before the deadline
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", timeout=1.0)
    await tool.execute({"pattern": "needle"}, ctx)
    assert seen == [True]


def test_the_answer_word_for_word() -> None:
    empty = _answer("x", Found(notes=["one", "two"]), "python", 5)
    assert empty.text == "No matches for 'x'.\nNotes:\n- one\n- two"
    assert empty.details == {"engine": "python", "matches": 0, "truncated": False, "warnings": None}
    with pytest.raises(ToolError) as failed:
        _answer("x", Found(failure="it broke"), "python", 5)
    assert str(failed.value) == "search: it broke"
    with pytest.raises(ToolError) as warned_failure:
        _answer("x", Found(failure="it broke", warnings="w"), "python", 5)
    assert str(warned_failure.value) == "search: it broke: w"
    with pytest.raises(ToolError) as incomplete:
        _answer("x", Found(warnings="a: denied"), "python", 5)
    assert str(incomplete.value) == (
        "search: no matches were found, but some files could not be searched "
        "(results may be incomplete):\na: denied"
    )
    full = _answer("x", Found(lines=["a:1:x"], truncated=True, notes=["n"]), "ripgrep", 1)
    assert full.text == (
        "a:1:x\n[Stopped after 1 matching lines; there are more. Narrow the pattern, the "
        "path or the glob.]\nNotes:\n- n"
    )


async def test_max_results_of_one_may_be_asked_for(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "f.txt").write_text("m\nm\n")
    tool = SearchTool(PathSandbox([tmp_path]), engine="python")
    result = await tool.execute({"pattern": "m", "max_results": 1}, ctx)
    assert result.details["matches"] == 1


async def test_a_ripgrep_that_cannot_start_is_named(tmp_path: Path, ctx: ToolContext) -> None:
    broken = program(tmp_path / "bin", "rg", executable=False)
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", rg_path=str(broken))
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "x"}, ctx)
    assert str(info.value) == (
        f"search: could not start ripgrep ({broken}): [Errno 13] Permission denied: '{broken}'"
    )


async def test_ripgreps_long_warnings_are_marked_cut(tmp_path: Path, ctx: ToolContext) -> None:
    noisy = program(tmp_path / "bin", "rg", "head -c 6000 /dev/zero | tr '\\0' w >&2; exit 2")
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", rg_path=str(noisy))
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "x"}, ctx)
    assert str(info.value).startswith("search: ripgrep failed (exit 2): www")
    assert str(info.value).endswith("w\n[... more warnings cut ...]")


async def test_a_warning_about_a_path_gone_from_the_searched_folder_is_left_out(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "searched").mkdir()
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "gone.txt").write_text("here, not there\n")
    monkeypatch.chdir(tmp_path / "cwd")
    warns = program(
        tmp_path / "bin", "rg", "echo 'rg: ./gone.txt: No such file or directory' >&2; exit 2"
    )
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", rg_path=str(warns))
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "x", "path": str(tmp_path / "searched")}, ctx)
    assert str(info.value) == (
        "search: ripgrep failed (exit 2): "
        "1 warning(s) about paths that changed while the search ran left out"
    )


@pytest.mark.parametrize(
    "body",
    [
        "exec 2>&-; exec sleep 3",  # stderr closed, still running
        "sleep 5 & exit 0",  # exited, its child holding stdout
    ],
)
async def test_ripgrep_is_done_only_when_it_exited_and_both_pipes_closed(
    tmp_path: Path, ctx: ToolContext, body: str
) -> None:
    rg = program(tmp_path / "bin", "rg", body)
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", rg_path=str(rg), timeout=0.3)
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "x"}, ctx)
    assert str(info.value) == "search: the search timed out after 0.3 s"


@needs_rg
async def test_a_cancel_while_lines_are_re_read_ends_the_call_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("needle\n")
    token = CancelToken()
    real_verify = search.verify

    def verify(fd: int, reported: list[object], *, stop: object) -> Verified:
        anyio.from_thread.run_sync(token.cancel)
        give_up = time.monotonic() + 5.0
        while not stop() and time.monotonic() < give_up:  # type: ignore[operator]
            time.sleep(0.01)
        return real_verify(fd, reported, stop=lambda: False)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "verify", verify)
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep")
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        await tool.execute({"pattern": "needle"}, make_ctx("search", cancel=token))
    assert str(info.value) == "search: cancelled"
    assert time.monotonic() - started < 3.0  # not the 5 s the re-reading would take
