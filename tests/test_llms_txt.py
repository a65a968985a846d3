"""``llms.txt`` at the repository root maps every documentation page, in the llms.txt format
(https://llmstxt.org): an H1 with the project's name, a blockquote summary, notes without
headings, then H2 sections whose lines are only list items ``- [title](link)``, optionally
followed by ``: notes``. Every link resolves: a relative link to a file of the repository
(and to a heading of it, for ``#anchor``), an absolute one only to this repository's files.
The pages are those whose code blocks tests/test_docs_examples.py runs: README.md,
CONTRIBUTING.md, docs/**/*.md, every package's README.md and skills/*/SKILL.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_docs_examples import pages

REPO = Path(__file__).resolve().parents[1]
BLOB = "https://github.com/yologdev/yoagent-python/blob/main/"
_ITEM = re.compile(r"- \[(?P<title>[^\]]+)\]\((?P<link>[^)\s]+)\)(?::\s+\S.*)?")


def slug(heading: str) -> str:
    """The anchor Markdown renderers (GitHub, MkDocs' toc) give a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def problems(text: str, root: Path = REPO) -> tuple[list[str], set[str]]:
    """What breaks the format or a link in ``text``, and the files its links name."""
    found: list[str] = []
    linked: set[str] = set()
    lines = text.splitlines()
    if not lines or not re.fullmatch(r"# \S.*", lines[0]):
        found.append("line 1: the file starts with an H1 naming the project")
    rest = [line for line in lines[1:] if line.strip()]
    if not rest or not rest[0].startswith("> "):
        found.append("the H1 is followed by a blockquote summary ('> ...')")
    section: str | None = None
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("#"):
            if not line.startswith("## "):
                found.append(f"line {number}: {line!r}: only H2 sections follow the H1")
            section = line[3:]
            continue
        if section is None or not line.strip():
            continue
        item = _ITEM.fullmatch(line)
        if item is None:
            found.append(f"line {number}: a section holds only '- [title](link): notes' items")
            continue
        link = item["link"]
        if link.startswith(BLOB):
            link = link.removeprefix(BLOB)
        elif re.match(r"[a-z]+:", link):
            found.append(f"line {number}: {link} is not a file of this repository")
            continue
        path, _, anchor = link.partition("#")
        target = root / path
        if not target.is_file():
            found.append(f"line {number}: {link} does not exist")
            continue
        linked.add(target.resolve().relative_to(root.resolve()).as_posix())
        headings = re.findall(r"^#+ (.*)$", target.read_text("utf-8"), re.M)
        if anchor and anchor not in {slug(heading) for heading in headings}:
            found.append(f"line {number}: {path} has no heading #{anchor}")
    return found, linked


def test_llms_txt_is_in_the_format_and_every_link_resolves() -> None:
    found, _ = problems((REPO / "llms.txt").read_text("utf-8"))
    assert found == []


@pytest.mark.parametrize("page", [p.relative_to(REPO).as_posix() for p in pages()])
def test_llms_txt_lists_the_page(page: str) -> None:
    _, linked = problems((REPO / "llms.txt").read_text("utf-8"))
    assert page in linked, f"add `- [title]({page}): what it covers` to llms.txt"


GOOD = "# x\n\n> What x is.\n\nA note.\n\n## Docs\n\n- [Read me](README.md): the start\n"


def test_a_file_in_the_format_passes(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# x\n\n## Getting started\n")
    assert problems(GOOD, tmp_path) == ([], {"README.md"})
    anchored = GOOD.replace("(README.md)", "(README.md#getting-started)")
    assert problems(anchored, tmp_path) == ([], {"README.md"})


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("# x\n", "x\n"), "starts with an H1"),
        (("> What x is.\n", "What x is.\n"), "blockquote summary"),
        (("## Docs", "### Docs"), "only H2 sections"),
        (("- [Read me](README.md): the start", "Read README.md"), "only '- [title](link)"),
        (("(README.md)", "(missing.md)"), "missing.md does not exist"),
        (("(README.md)", "(README.md#nowhere)"), "has no heading #nowhere"),
        (("(README.md)", "(https://example.com/x.md)"), "not a file of this repository"),
        (("(README.md)", f"({BLOB}gone.md)"), "gone.md does not exist"),
    ],
)
def test_each_departure_is_named(change: tuple[str, str], problem: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# x\n\n## Getting started\n")
    text = GOOD.replace(*change, 1)
    assert text != GOOD
    found, _ = problems(text, tmp_path)
    assert any(problem in line for line in found), found
