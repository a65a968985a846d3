"""search: ripgrep and the Python fallback, hostile configs, early stop, and abnormal ends."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
import trio
from tools_helpers import ENGINES, make_ctx, needs_rg, wait_group_gone

from yoagent.core import ToolContext, ToolError
from yoagent.tools import PathSandbox, SearchTool, find_ripgrep


def _project(base: Path) -> Path:
    root = base / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'TODO: ship'\n# todo later\n")
    (root / "src" / "util.js").write_text("// TODO js\n")
    (root / "notes.txt").write_text("-v flag\n--files too\nTODO notes\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("TODO in a dependency\n")
    (root / ".hidden").write_text("TODO hidden\n")
    (root / "blob.bin").write_bytes(b"TODO\x00\x01binary")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TODO secret outside\n")
    (root / "escape").symlink_to(outside)
    (root / "escape-file.txt").symlink_to(outside / "secret.txt")
    return root


def _tool(root: Path, engine: str, **kwargs: object) -> SearchTool:
    return SearchTool(PathSandbox([root]), engine=engine, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ENGINES)
async def test_finds_lines_as_path_line_text(tmp_path: Path, ctx: ToolContext, engine: str) -> None:
    root = _project(tmp_path)
    result = await _tool(root, engine).execute({"pattern": "TODO"}, ctx)
    assert sorted(result.text.splitlines()) == [
        "notes.txt:3:TODO notes",
        "src/app.py:2:    return 'TODO: ship'",
        "src/util.js:1:// TODO js",
    ]
    assert result.details["engine"] == engine
    assert result.details["truncated"] is False


@pytest.mark.parametrize("engine", ENGINES)
async def test_options_ignore_case_literal_and_glob(
    tmp_path: Path, ctx: ToolContext, engine: str
) -> None:
    root = _project(tmp_path)
    tool = _tool(root, engine)
    result = await tool.execute(
        {"pattern": "todo", "ignore_case": True, "glob": "*.py", "path": "src"}, ctx
    )
    assert result.text.splitlines() == [
        "src/app.py:2:    return 'TODO: ship'",
        "src/app.py:3:# todo later",
    ]
    literal = await tool.execute({"pattern": "TODO: s(", "literal": True}, ctx)
    assert literal.text == "No matches for 'TODO: s('."


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_pattern_starting_with_a_dash_is_a_pattern(
    tmp_path: Path, ctx: ToolContext, engine: str
) -> None:
    root = _project(tmp_path)
    tool = _tool(root, engine)
    assert (await tool.execute({"pattern": "-v"}, ctx)).text == "notes.txt:1:-v flag"
    assert (await tool.execute({"pattern": "--files"}, ctx)).text == "notes.txt:2:--files too"


@pytest.mark.parametrize("engine", ENGINES)
async def test_the_result_limit_stops_early_and_says_so(
    tmp_path: Path, ctx: ToolContext, engine: str
) -> None:
    (tmp_path / "big.txt").write_text("match\n" * 200_000)
    started = time.monotonic()
    result = await _tool(tmp_path, engine).execute({"pattern": "match", "max_results": 5}, ctx)
    assert result.text.splitlines()[:5] == [f"big.txt:{n}:match" for n in range(1, 6)]
    assert "[Stopped after 5 matching lines; there are more." in result.text
    assert result.details == {"engine": engine, "matches": 5, "truncated": True, "warnings": None}
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("engine", ENGINES)
async def test_exactly_max_results_is_not_truncated(
    tmp_path: Path, ctx: ToolContext, engine: str
) -> None:
    (tmp_path / "f.txt").write_text("m\n" * 3)
    result = await _tool(tmp_path, engine).execute({"pattern": "m", "max_results": 3}, ctx)
    assert result.details["truncated"] is False


@needs_rg
async def test_a_hostile_ripgrep_config_changes_nothing(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    config = tmp_path / "rgrc"
    config.write_text("--follow\n--max-count=1\n--replace=X\n--hidden\n--no-ignore\n-uuu\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    monkeypatch.setenv("GREP_OPTIONS", "-h -S")
    result = await _tool(root, "ripgrep").execute({"pattern": "(?i)todo"}, ctx)
    lines = sorted(result.text.splitlines())
    assert lines == [
        "notes.txt:3:TODO notes",
        "src/app.py:2:    return 'TODO: ship'",
        "src/app.py:3:# todo later",  # --max-count=1 would have hidden this one
        "src/util.js:1:// TODO js",
    ]
    assert "secret" not in result.text  # --follow would have escaped through `escape`


# -- ripgrep's ends, with fake `rg` programs --------------------------------------------


def _fake_rg(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-rg"
    script.write_text(f"#!/bin/bash\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


async def test_ripgrep_gets_no_config_and_the_pattern_cannot_be_an_option(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "argv"
    rg = _fake_rg(
        tmp_path,
        f'printf "%s\\n" "$@" > {record}; '
        f'echo "cfg=${{RIPGREP_CONFIG_PATH-unset}} grep=${{GREP_OPTIONS-unset}}" >> {record}; '
        "exit 1",
    )
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", "/tmp/evil")
    monkeypatch.setenv("GREP_OPTIONS", "-h")
    tool = SearchTool(PathSandbox([tmp_path]), engine="ripgrep", rg_path=rg)
    result = await tool.execute({"pattern": "--pre=sh", "glob": "-x"}, ctx)
    assert result.text == "No matches for '--pre=sh'."
    argv = record.read_text().splitlines()
    assert argv[0] == "--no-config"
    assert argv[-4:] == ["--regexp=--pre=sh", "--", ".", "cfg=unset grep=unset"]
    assert "--glob=-x" in argv


async def test_exit_2_with_matches_returns_them_with_warnings(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "a.txt").write_text("hit\n")
    rg = _fake_rg(
        tmp_path,
        "printf './a.txt\\0001:hit\\n'; echo 'b: Permission denied (os error 13)' >&2; exit 2",
    )
    result = await SearchTool(PathSandbox([tmp_path]), rg_path=rg).execute({"pattern": "hit"}, ctx)
    assert result.text.startswith("a.txt:1:hit\n")
    assert "Warnings:\nb: Permission denied (os error 13)" in result.text
    assert result.details["warnings"] == "b: Permission denied (os error 13)"


async def test_an_error_without_matches_fails(tmp_path: Path, ctx: ToolContext) -> None:
    rg = _fake_rg(tmp_path, 'echo "regex parse error" >&2; exit 2')
    with pytest.raises(ToolError, match=r"ripgrep failed \(exit 2\): regex parse error"):
        await SearchTool(rg_path=rg).execute({"pattern": "(", "path": str(tmp_path)}, ctx)


async def test_a_killed_search_never_reads_as_no_matches(tmp_path: Path, ctx: ToolContext) -> None:
    silent = _fake_rg(tmp_path, "kill -9 $$")
    with pytest.raises(ToolError, match="killed by signal 9"):
        await SearchTool(rg_path=silent).execute({"pattern": "x", "path": str(tmp_path)}, ctx)
    (tmp_path / "a.txt").write_text("x\n")
    partial = _fake_rg(tmp_path, "printf './a.txt\\0001:x\\n'; kill -9 $$")
    result = await SearchTool(PathSandbox([tmp_path]), rg_path=partial).execute(
        {"pattern": "x"}, ctx
    )
    assert result.text.startswith("a.txt:1:x\n")
    assert "killed by signal 9: results may be incomplete" in result.text
    odd = _fake_rg(tmp_path, "exit 7")
    with pytest.raises(ToolError, match="exit code 7"):
        await SearchTool(rg_path=odd).execute({"pattern": "x", "path": str(tmp_path)}, ctx)


async def test_a_search_that_runs_too_long_fails_and_is_killed(
    tmp_path: Path, ctx: ToolContext
) -> None:
    pid_file = tmp_path / "pid"
    rg = _fake_rg(tmp_path, f"echo $$ > {pid_file}; sleep 60 & wait")
    with pytest.raises(ToolError, match=r"timed out after 0\.5 s"):
        await SearchTool(rg_path=rg, timeout=0.5).execute(
            {"pattern": "x", "path": str(tmp_path)}, ctx
        )
    assert wait_group_gone(int(pid_file.read_text())) == []


async def test_the_early_stop_kills_the_search(tmp_path: Path, ctx: ToolContext) -> None:
    pid_file = tmp_path / "pid"
    (tmp_path / "f.txt").write_text("x\n")
    rg = _fake_rg(tmp_path, f"echo $$ > {pid_file}; while :; do printf './f.txt\\0001:x\\n'; done")
    started = time.monotonic()
    result = await SearchTool(PathSandbox([tmp_path]), rg_path=rg).execute(
        {"pattern": "x", "max_results": 3}, ctx
    )
    assert result.text.splitlines()[:3] == ["f.txt:1:x"] * 3
    assert result.details["truncated"] is True
    assert time.monotonic() - started < 3
    assert wait_group_gone(int(pid_file.read_text())) == []


async def test_python_engine_reports_a_bad_regex(tmp_path: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        await SearchTool(engine="python").execute({"pattern": "(", "path": str(tmp_path)}, ctx)


async def test_missing_path_and_missing_ripgrep(tmp_path: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await SearchTool().execute({"pattern": "x", "path": str(tmp_path / "nope")}, ctx)


def test_find_ripgrep_looks_on_the_given_path_then_beside_python(tmp_path: Path) -> None:
    fake = Path(_fake_rg(tmp_path, "exit 1"))
    fake.rename(tmp_path / "rg")
    assert find_ripgrep(str(tmp_path)) == str(tmp_path / "rg")
    beside = find_ripgrep(str(tmp_path / "empty"))
    assert beside is None or Path(beside).parent == Path(os.sys.executable).parent


@needs_rg
def test_ripgrep_search_runs_under_trio(tmp_path: Path) -> None:
    root = _project(tmp_path)

    async def main() -> str:
        result = await _tool(root, "ripgrep").execute({"pattern": "TODO js"}, make_ctx())
        return result.text

    assert trio.run(main) == "src/util.js:1:// TODO js"


@pytest.mark.parametrize("single_file", [True, False], ids=["file", "folder"])
async def test_the_python_engine_keeps_its_timeout_inside_one_large_file(
    tmp_path: Path, ctx: ToolContext, single_file: bool
) -> None:
    """The deadline is checked while a file is read, not only between files."""
    big = tmp_path / "big.txt"
    big.write_text("nothing here\n" * 1_000_000 + "needle\n")
    tool = SearchTool(engine="python", timeout=0.01)
    target = big if single_file else tmp_path
    with pytest.raises(ToolError, match="timed out"):
        await tool.execute({"pattern": "needle", "path": str(target)}, ctx)
