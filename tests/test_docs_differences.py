"""docs/differences.md, "Differences from the original", lists every deliberate departure
from the Rust original as a row of three filled cells (what the original does, what we
do, why), in tables of one shape, and the repository's README and the docs index link it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "differences.md"
HEADER = ("the original", "yoagent for Python", "why")


def tables(text: str) -> list[list[tuple[int, tuple[str, ...]]]]:
    """The tables of ``text``: each a list of its rows (separator left out), a row being its
    line number and its cells, trimmed."""
    found: list[list[tuple[int, tuple[str, ...]]]] = []
    previous = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("|"):
            continue
        if number != previous + 1:
            found.append([])
        previous = number
        if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            found[-1].append((number, tuple(cell.strip() for cell in cells)))
    return found


def rows(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """Every row below a header, of every table."""
    return [row for table in tables(text) for row in table[1:]]


def problems(text: str) -> list[str]:
    """What breaks the page's one table shape."""
    found: list[str] = []
    if not text.startswith("# Differences from the original\n"):
        found.append("the title must be '# Differences from the original'")
    if not tables(text):
        found.append("no table")
    for table in tables(text):
        (first, header), *body = table
        if header != HEADER:
            found.append(f"line {first}: a table headed other than | {' | '.join(HEADER)} |")
        for number, cells in body:
            if len(cells) != len(HEADER):
                found.append(f"line {number}: {len(cells)} cells, not {len(HEADER)}")
            elif not all(cells):
                found.append(f"line {number}: an empty cell")
    return found


def test_the_page_is_one_shape_of_table() -> None:
    assert problems(PAGE.read_text("utf-8")) == []


def test_the_page_lists_the_deviations_the_issue_names() -> None:
    text = PAGE.read_text("utf-8")
    table = [" ".join(cells) for _, cells in rows(text)]
    assert any("`RunFailedError`" in row and "raise" in row for row in table)  # prompt raises
    assert any("`inherit_env=True`" in row and "environment" in row for row in table)  # MCP


@pytest.mark.parametrize(
    ("page", "target"), [("README.md", "docs/differences.md"), ("docs/README.md", "differences.md")]
)
def test_the_page_is_linked(page: str, target: str) -> None:
    assert f"]({target})" in (REPO / page).read_text("utf-8")


TITLE = "# Differences from the original\n\n"
TOP = "| the original | yoagent for Python | why |\n|---|---|---|\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# Other\n\n" + TOP + "| a | b | c |\n", "title"),
        (TITLE + "No table.\n", "no table"),
        (TITLE + TOP + "| a | b |\n", "2 cells"),
        (TITLE + TOP + "| a |  | c |\n", "empty cell"),
        (TITLE + TOP + "| a | b | c |\n\n| a | b | c |\n|---|---|---|\n", "headed other than"),
    ],
)
def test_a_page_of_another_shape_is_named(text: str, problem: str) -> None:
    assert any(problem in line for line in problems(text)), problems(text)


def test_a_pipe_escaped_in_a_cell_stays_in_it() -> None:
    assert problems(TITLE + TOP + "| `a \\| b` | c | d |\n") == []
