"""list_files: depth, limits, skipped folders, symlinks, and warnings for what could not be read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from yoagent.core import ToolContext, ToolError
from yoagent.tools import ListFilesTool, PathSandbox


def _tree(base: Path) -> None:
    for rel in [
        "src/app/main.py",
        "src/app/deep/er/x.py",
        "README.md",
        ".env",
        "build/out.o",
        "node_modules/pkg/index.js",
        ".git/HEAD",
        "logs/today.log",
        "pkg.egg-info/PKG",
    ]:
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (base / ".gitignore").write_text("# comment\n*.log\n/secret-dir/\n")
    (base / "secret-dir").mkdir()


async def test_lists_sorted_relative_paths_with_skipped_folders(
    tmp_path: Path, ctx: ToolContext
) -> None:
    _tree(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path / "src")
    result = await ListFilesTool(PathSandbox([tmp_path])).execute({}, ctx)
    assert result.text.splitlines() == [
        ".env",
        ".git/ (skipped)",
        ".gitignore",
        "README.md",
        "build/ (skipped)",
        "link@",
        "logs/",
        "node_modules/ (skipped)",
        "pkg.egg-info/ (skipped)",
        "secret-dir/ (skipped)",
        "src/",
        "src/app/",
        "src/app/deep/",
        "src/app/main.py",
    ]
    assert result.details["truncated"] is False
    assert result.details["warnings"] is None


async def test_depth_limit_and_all(tmp_path: Path, ctx: ToolContext) -> None:
    _tree(tmp_path)
    tool = ListFilesTool()
    shallow = await tool.execute({"path": str(tmp_path / "src"), "depth": 1}, ctx)
    assert shallow.text == "app/"
    everything = await tool.execute({"path": str(tmp_path), "depth": 10, "all": True}, ctx)
    assert "node_modules/pkg/index.js" in everything.text.splitlines()
    assert "logs/today.log" in everything.text.splitlines()
    assert "src/app/deep/er/x.py" in everything.text.splitlines()


async def test_result_limit_cuts_with_a_note(tmp_path: Path, ctx: ToolContext) -> None:
    for index in range(30):
        (tmp_path / f"f{index:02}.txt").write_text("x")
    result = await ListFilesTool().execute({"path": str(tmp_path), "limit": 10}, ctx)
    lines = result.text.splitlines()
    assert lines[:10] == [f"f{index:02}.txt" for index in range(10)]
    assert lines[10].startswith("[Listing cut at 10 entries")
    assert result.details["truncated"] is True


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their mode")
async def test_unreadable_folders_are_reported_under_warnings_when_not_root(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "hidden.txt").write_text("x")
    (tmp_path / "open.txt").write_text("x")
    (tmp_path / "locked").chmod(0)
    try:
        result = await ListFilesTool().execute({"path": str(tmp_path)}, ctx)
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert "Warnings (the listing is incomplete):\n- cannot read locked/" in result.text
    assert result.details["warnings"]


async def test_unreadable_folders_are_reported_under_warnings(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same as above for any user: the folder's scan fails as EACCES would."""
    from yoagent.tools import _walk

    (tmp_path / "locked").mkdir()
    (tmp_path / "open.txt").write_text("x")
    real_list = _walk._list

    def listing(fd: int) -> list[tuple[str, str]]:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_list(fd)

    monkeypatch.setattr(_walk, "_list", listing)
    result = await ListFilesTool().execute({"path": str(tmp_path)}, ctx)
    assert result.text.splitlines() == [
        "locked/",
        "open.txt",
        "Warnings (the listing is incomplete):",
        "- cannot read locked/: Permission denied",
    ]
    assert result.details["warnings"] == "- cannot read locked/: Permission denied"


async def test_errors(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "f.txt").write_text("x")
    tool = ListFilesTool()
    with pytest.raises(ToolError, match="is not a folder"):
        await tool.execute({"path": str(tmp_path / "f.txt")}, ctx)
    with pytest.raises(ToolError, match="does not exist"):
        await tool.execute({"path": str(tmp_path / "nope")}, ctx)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = await tool.execute({"path": str(empty)}, ctx)
    assert result.text == f"({empty} is empty)"
