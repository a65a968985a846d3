"""The pure-Python engine against a line-by-line reference, with its chunk, line and window
sizes made small so that every boundary (a line across chunks, a long line searched in
windows, the line shown) is crossed; and its walk: what it skips, descends into or reports,
the path prefix, the problems it lists and how they are cut, a stop and a deadline."""

from __future__ import annotations

import os
import random
import re
import threading
import time
from pathlib import Path

import pytest

from yoagent.core import ToolError
from yoagent.tools import _pysearch
from yoagent.tools._pysearch import PythonSearch
from yoagent.tools._regex import LineMatcher

CHUNK, LONG, OVERLAP, SHOWN = 7, 16, 4, 10


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pysearch, "CHUNK_BYTES", CHUNK)
    monkeypatch.setattr(_pysearch, "MAX_LINE_BYTES", LONG)
    monkeypatch.setattr(_pysearch, "WINDOW_OVERLAP", OVERLAP)
    monkeypatch.setattr(_pysearch, "SHOWN_LINE_BYTES", SHOWN)


def engine(pattern: str, *, max_results: int = 1000, **options: object) -> PythonSearch:
    return PythonSearch(
        LineMatcher(pattern),
        globs=list(options.pop("globs", [])),  # type: ignore[call-overload]
        max_results=max_results,
        use_gitignore=bool(options.pop("use_gitignore", True)),
        stop=threading.Event(),
        deadline=time.monotonic() + 30,
    )


def scan(data: bytes, pattern: str, *, max_results: int = 1000) -> list[str]:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    search = engine(pattern, max_results=max_results)
    search._search_fd(read_end, "f")  # closes read_end
    return search.found.lines


def reference(data: bytes, pattern: str) -> list[str]:
    """Every line holding a match (whole lines only: short matches, so no window misses
    one), shown as the engine shows it: a long line by its head."""
    compiled = re.compile(pattern.encode())
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    found = []
    for number, line in enumerate(lines, 1):
        if compiled.search(line):
            found.append(f"f:{number}:{line[: SHOWN + 2].decode()}")
    return found


@pytest.mark.usefixtures("small")
@pytest.mark.parametrize("pattern", ["ab", "b", "^a", "b$", "^ba", "ab$", "^b$", "abc", "bca", "^"])
def test_every_chunk_and_window_boundary_finds_what_a_line_by_line_search_finds(
    pattern: str,
) -> None:
    rng = random.Random(f"pysearch-{pattern}")
    for _ in range(150):
        lines = [
            "".join(
                rng.choice("abc") for _ in range(rng.choice([0, 1, 2, 3, 5, 9, 15, 17, 30, 40]))
            )
            for _ in range(rng.randint(1, 6))
        ]
        data = "\n".join(lines).encode() + rng.choice([b"", b"\n"])
        assert scan(data, pattern) == reference(data, pattern), data


@pytest.mark.usefixtures("small")
def test_the_line_numbers_after_a_long_line_that_matched_in_a_window() -> None:
    data = b"x\n" + b"ab" + b"c" * 40 + b"\nab\nc\nab"
    assert scan(data, "ab") == ["f:2:abcccccccccc", "f:3:ab", "f:5:ab"]
    assert scan(b"c" * 40 + b"ab" + b"c" * 3 + b"\nab\n", "ab") == [
        "f:1:cccccccccccc",
        "f:2:ab",
    ]


@pytest.mark.usefixtures("small")
def test_the_results_stop_at_max_results_across_chunks_and_windows() -> None:
    assert scan(b"ab\n" * 10, "ab", max_results=3) == ["f:1:ab", "f:2:ab", "f:3:ab"]
    long_lines = (b"ab" + b"c" * 40 + b"\n") * 3
    assert scan(long_lines, "ab", max_results=2) == ["f:1:abcccccccccc", "f:2:abcccccccccc"]


def test_a_nul_in_the_first_bytes_is_a_binary_file_skipped() -> None:
    assert scan(b"ab\0\nab\n", "ab") == []


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def run(
    root: Path, pattern: str = "needle", shown: str | None = None, **options: object
) -> PythonSearch:
    search = engine(pattern, **options)
    search.run(shown if shown is not None else str(root), str(root), nofollow=True)
    return search


def test_the_walk_skips_hidden_ignored_and_excluded_paths_and_never_follows_links(
    tmp_path: Path,
) -> None:
    root = tree(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: x\n",
            ".gitignore": "build/\n",
            ".hidden/f.txt": "needle\n",
            "build/f.txt": "needle\n",
            "a/.gitignore": "x.txt\n",
            "a/x.txt": "needle\n",
            "b/x.txt": "needle\n",
            "skip/f.txt": "needle\n",
            "kept/f.txt": "needle\n",
        },
    )
    (root / "link").symlink_to(root / "kept")
    (root / "file-link").symlink_to(root / "kept" / "f.txt")
    search = run(root, shown="repo", globs=["!skip/"])
    assert sorted(search.found.lines) == ["repo/b/x.txt:1:needle", "repo/kept/f.txt:1:needle"]
    assert search.found.warnings is None


def test_the_prefix_is_the_folder_as_given(tmp_path: Path) -> None:
    root = tree(tmp_path / "dirX", {"f.txt": "needle\n"})
    assert run(root, shown="./").found.lines == ["f.txt:1:needle"]
    assert run(root, shown=".").found.lines == ["f.txt:1:needle"]
    assert run(root, shown="dirX/").found.lines == ["dirX/f.txt:1:needle"]
    assert run(root, shown="/abs/dirX/").found.lines == ["/abs/dirX/f.txt:1:needle"]


def test_problems_of_files_and_of_the_walk_are_listed_and_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tree(tmp_path / "r", {f"f{n}.txt": "needle\n" for n in range(4)})
    tree(root, {"deep/deeper/f.txt": "needle\n"})
    real_open = _pysearch.open_file_in

    def refuse(folder_fd: int, name: str) -> int:
        if name.startswith("f") and name != "f.txt":
            raise OSError(13, "Permission denied")
        return real_open(folder_fd, name)

    monkeypatch.setattr(_pysearch, "open_file_in", refuse)
    monkeypatch.setattr(_pysearch, "MAX_WALK_DEPTH", 1)
    search = run(root, shown="r")
    assert search.found.lines == []
    problems = (search.found.warnings or "").split("\n")
    assert sorted(problems[:4]) == [f"r/f{n}.txt: Permission denied" for n in range(4)]
    assert problems[4] == "r/deep/: deeper than 1 folders; not entered" and len(problems) == 5
    monkeypatch.setattr(_pysearch, "MAX_PROBLEMS", 4)
    assert run(root, shown="r").found.warnings.split("\n")[-1] == "... and 1 more"  # type: ignore[union-attr]
    monkeypatch.setattr(_pysearch, "MAX_PROBLEMS", 3)
    assert run(root, shown="r").found.warnings.split("\n")[-1] == "... and 2 more"  # type: ignore[union-attr]
    monkeypatch.setattr(_pysearch, "MAX_PROBLEMS", 5)
    assert "more" not in (run(root, shown="r").found.warnings or "")


def test_a_file_that_fails_while_read_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tree(tmp_path / "r", {"f.txt": "needle\n"})

    class Failing(_pysearch._FileScan):
        def run(self, fd: int) -> None:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(_pysearch, "_FileScan", Failing)
    assert run(root, shown="r").found.warnings == "r/f.txt: Input/output error"


def test_a_folder_that_cannot_be_opened_or_walked_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tree(tmp_path / "r", {"f.txt": "needle\n"})
    with pytest.raises(ToolError) as missing:
        run(tmp_path / "missing", shown="missing")
    assert str(missing.value) == "search: missing: No such file or directory"

    def refuse(path: str, *, nofollow: bool) -> int:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(_pysearch, "open_walk_root", refuse)
    with pytest.raises(ToolError) as unopened:
        run(root, shown="r")
    assert str(unopened.value) == "search: cannot read r: Permission denied"
    monkeypatch.undo()

    class Broken(_pysearch.FdWalk):
        def run(self, root_fd: int, visit: object) -> None:  # type: ignore[override]
            os.close(root_fd)
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(_pysearch, "FdWalk", Broken)
    with pytest.raises(ToolError) as unwalked:
        run(root, shown="r")
    assert str(unwalked.value) == "search: cannot read r: Input/output error"


def test_a_stopped_or_late_search_finds_nothing_more(tmp_path: Path) -> None:
    root = tree(tmp_path / "r", {"f.txt": "needle\n"})
    stopped = engine("needle")
    stopped.stop.set()
    stopped.run("r", str(root), nofollow=True)
    assert stopped.found.lines == [] and stopped.found.failure is None
    late = engine("needle")
    late.deadline = time.monotonic() - 1
    late.run("r", str(root), nofollow=True)
    assert late.found.lines == [] and late.found.failure == "the search timed out"


def test_a_nested_repositorys_rules_end_with_it(tmp_path: Path) -> None:
    root = tree(
        tmp_path / "r",
        {"a/.git/HEAD": "ref: x\n", "a/.gitignore": "x.txt\n", "a/x.txt": "needle\n"},
    )
    tree(root, {"b/.gitignore": "x.txt\n", "b/x.txt": "needle\n"})
    assert run(root, shown="r").found.lines == ["r/b/x.txt:1:needle"]
