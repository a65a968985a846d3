"""read_skill on hostile skill folders: a deep tree or a bad path is a tool error the model
reads, never an exception out of the tool."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from yoagent.core import ToolContext, ToolError, load_skills

DEPTH = 1200  # deeper than Python's default recursion limit


def _ctx() -> ToolContext:
    return ToolContext(tool_call_id="t", tool_name="read_skill")


def _remove_tree(root: Path) -> None:
    """Remove a tree of any depth in linear time, holding two descriptors at most: down to
    a leaf folder, empty it, climb by ``..``, remove it, repeat. (pytest's own clean-up of
    the temporary folder recurses, and would fail on these trees in every later session.)"""
    names: list[str] = []
    fd = os.open(root, os.O_RDONLY)
    try:
        while True:
            with os.scandir(fd) as scan:
                entries = list(scan)
            folder = next((e.name for e in entries if e.is_dir(follow_symlinks=False)), None)
            if folder is not None:
                inner = os.open(folder, os.O_RDONLY, dir_fd=fd)
                os.close(fd)
                fd = inner
                names.append(folder)
                continue
            for entry in entries:
                os.unlink(entry.name, dir_fd=fd)
            if not names:
                break
            parent = os.open("..", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(root)


@pytest.fixture(scope="module")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("deep-skills")
    _deep_skill(root)
    yield root
    _remove_tree(root)


def _deep_skill(root: Path) -> Path:
    folder = root / "deep"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: deep\ndescription: Deep.\n---\nThe body.\n")
    (folder / "top.md").write_text("top")
    (folder / "d" / "d" / "d").mkdir(parents=True)
    (folder / "d" / "d" / "d" / "near.md").write_text("near")
    # Built with relative steps: the full path is longer than PATH_MAX.
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(DEPTH):
            with contextlib.suppress(FileExistsError):  # the first levels hold near.md
                os.mkdir("d", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        leaf = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor)
        os.close(leaf)
    finally:
        os.close(descriptor)
    return folder


async def test_read_skill_on_a_deep_folder_tree_lists_what_it_can(skills_root: Path) -> None:
    tool = load_skills(skills_root).tool()
    text = (await tool.execute({"name": "deep"}, _ctx())).text
    assert text.startswith("The body.")
    assert "- top.md" in text
    assert "leaf.txt" not in text  # deeper than the listing goes
    assert "d/d/d/near.md" in text  # a few levels down is listed


async def test_read_skill_reads_a_file_deep_in_its_tree(skills_root: Path) -> None:
    tool = load_skills(skills_root).tool()
    deep = "/".join(["d"] * DEPTH) + "/leaf.txt"
    assert (await tool.execute({"name": "deep", "file": deep}, _ctx())).text == ""


@pytest.mark.parametrize(
    ("file", "problem"),
    [
        ("a\0b", "cannot be read"),
        ("d/" * 3000 + "x", "cannot be read"),
    ],
)
async def test_read_skill_with_a_hostile_file_path_is_a_tool_error(
    skills_root: Path, file: str, problem: str
) -> None:
    tool = load_skills(skills_root).tool()
    with pytest.raises(ToolError, match=problem):
        await tool.execute({"name": "deep", "file": file}, _ctx())
