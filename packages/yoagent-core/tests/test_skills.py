"""Skills: the frontmatter subset, loading and its problems, the prompt section, and
read_skill. (The project's own skills/yoagent/SKILL.md is tested in the root tests/.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from yoagent.core._skills import (
    ReadSkillTool,
    SkillError,
    SkillSet,
    load_skills,
    parse_frontmatter,
)
from yoagent.core._tools.contract import AgentTool, ToolContext, ToolError


def write_skill(root: Path, folder: str, text: str, **files: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    for name, content in files.items():
        extra = path.parent / name.replace("__", "/")
        extra.parent.mkdir(parents=True, exist_ok=True)
        extra.write_text(content, encoding="utf-8")
    return path


FULL = """\
---
# a comment
name: pdf-tools
description: "Fill and merge PDF forms: use when a task mentions PDFs."
license: Apache-2.0
compatibility: 'needs poppler (it''s on PATH)'
allowed-tools: bash read_file   # trailing comment
metadata:
  author: someone
  version: "1.2"
---

# PDF tools

Steps...
"""


def ctx() -> ToolContext:
    return ToolContext(tool_call_id="t", tool_name="read_skill")


# -- frontmatter ------------------------------------------------------------------


def test_frontmatter_subset_is_read() -> None:
    fields, body = parse_frontmatter(FULL)
    assert fields == {
        "name": "pdf-tools",
        "description": "Fill and merge PDF forms: use when a task mentions PDFs.",
        "license": "Apache-2.0",
        "compatibility": "needs poppler (it's on PATH)",
        "allowed-tools": "bash read_file",
        "metadata": {"author": "someone", "version": "1.2"},
    }
    assert body.startswith("# PDF tools")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "line 1: no YAML frontmatter"),
        ("---\nname: x\n", "never closed"),
        ("---\nname x\n---\n", "line 2: expected 'key: value'"),
        ("---\nname: a\nname: b\n---\n", "line 3: 'name' appears twice"),
        ('---\ndescription: "unterminated\n---\n', "line 2: malformed double-quoted"),
        ("---\ndescription: 'bad ' quote'\n---\n", "malformed single-quoted"),
        ("---\ndescription: {a: b}\n---\n", "line 2: inline maps are not supported"),
        ("---\ntools: [a, [b]]\n---\n", "line 2: nested lists and maps are not supported"),
        ("---\ntools: [a, b\n---\n", "line 2: the list '[a, b' is never closed"),
        ("---\ntools: [a b] c\n---\n", "line 2: unexpected text after the list"),
        ('---\ndescription: "a" b\n---\n', "line 2: malformed double-quoted string"),
        ("---\ndescription: >x\n  folded\n---\n", "line 2: malformed block scalar header"),
        ("---\ndescription: |\n    a\n  b\n---\n", "line 4: less indented than the block"),
        ("---\ndescription: a\n  b: c\n---\n", "line 3: only one level of nesting"),
        ("---\ntools:\n  - a\n  - b: c\n---\n", "line 4: list items must be strings"),
        ("---\ntools:\n  - a\n  -\n---\n", "line 4: an empty list item"),
        ("---\ntools:\n  - a\n  b\n---\n", "line 4: expected a '- item' line"),
        ("---\nmetadata:\n  tags: [a]\n---\n", "line 3: only one level of nesting"),
        ("---\n  name: x\n---\n", "line 2: unexpected indentation"),
        ("---\nmetadata:\n  a: 1\n    b: 2\n---\n", "line 4: only one level"),
        ("---\nmetadata:\n\tname: x\n---\n", "tabs"),
        ("---\ndescription: *alias\n---\n", "quote it"),
    ],
)
def test_malformed_frontmatter_names_the_line(text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=re.escape(problem)):
        parse_frontmatter(text)


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        ('description: "Does X" # why', {"description": "Does X"}),
        ("description: 'It''s X'   # why", {"description": "It's X"}),
        (
            "description: Does X when the user\n  asks for Y # really\nname: x",
            {"description": "Does X when the user asks for Y", "name": "x"},
        ),
        ("description: one\n\n  two", {"description": "one\ntwo"}),
        (
            "description: >\n  Does X\n  and Y\n\n  Then Z\nname: x",
            {"description": "Does X and Y\nThen Z\n", "name": "x"},
        ),
        (
            "description: |\n  line 1\n    indented\n\n  # not a comment\nname: x",
            {"description": "line 1\n  indented\n\n# not a comment\n", "name": "x"},
        ),
        ("description: >-\n  a\n  b\n\nname: x", {"description": "a b", "name": "x"}),
        ("description: |+\n  a\n\nname: x", {"description": "a\n\n", "name": "x"}),
        ("description: |2-\n    a\n  b", {"description": "  a\nb"}),
        ("description: > # a comment\n  a", {"description": "a\n"}),
        (
            "allowed-tools:\n  - Bash\n  - 'Read' # c\n  - Bash(git log:*)\nname: x",
            {"allowed-tools": ["Bash", "Read", "Bash(git log:*)"], "name": "x"},
        ),
        (
            "allowed-tools:\n- Bash\n- Read\nname: x",
            {"allowed-tools": ["Bash", "Read"], "name": "x"},
        ),
        (
            "allowed-tools: [Bash, \"Read\", 'Write'] # c",
            {"allowed-tools": ["Bash", "Read", "Write"]},
        ),
        ("allowed-tools: []", {"allowed-tools": []}),
        (
            "metadata:\n  note: >\n    folded\n    text\n  other: x",
            {"metadata": {"note": "folded text\n", "other": "x"}},
        ),
    ],
)
def test_more_yaml_is_read(frontmatter: str, expected: dict[str, object]) -> None:
    fields, body = parse_frontmatter(f"---\n{frontmatter}\n---\nbody")
    assert fields == expected
    assert body == "body"


def test_a_skill_with_a_folded_description_and_a_tool_list(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "x",
        "---\nname: x\ndescription: >\n  Does X\n  well\nallowed-tools:\n  - bash\n"
        "  - read_file\n---\nbody",
    )
    skills = load_skills(tmp_path)
    assert skills.problems == []
    skill = skills.get("x")
    assert skill is not None
    assert skill.description == "Does X well"
    assert skill.allowed_tools == ["bash", "read_file"]


def test_a_list_where_a_string_belongs_is_reported(tmp_path: Path) -> None:
    write_skill(tmp_path, "x", "---\nname: x\ndescription: [a, b]\n---\n")
    skills = load_skills(tmp_path)
    assert skills.names == []
    assert "'description' must be a string, not a list" in str(skills.problems[0])


# -- loading ----------------------------------------------------------------------


def _deny(monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    """Make every stat/open/listdir of a path containing ``marker`` fail with EACCES (the
    tests run as root, where mode 000 does not stop anything)."""
    import errno
    import os

    def guard(real: Any) -> Any:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            if marker in os.fspath(path):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        return call

    monkeypatch.setattr(os, "stat", guard(os.stat))
    monkeypatch.setattr(os, "scandir", guard(os.scandir))
    monkeypatch.setattr(os, "listdir", guard(os.listdir))
    monkeypatch.setattr(os, "open", guard(os.open))


def test_an_unreadable_skill_folder_is_reported_and_the_rest_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path, "good", "---\nname: good\ndescription: fine\n---\n")
    write_skill(tmp_path, "locked", "---\nname: locked\ndescription: d\n---\n")
    _deny(monkeypatch, "/locked/")
    skills = load_skills(tmp_path)
    assert skills.names == ["good"]
    assert len(skills.problems) == 1
    assert "Permission denied" in str(skills.problems[0])
    assert str(tmp_path / "locked" / "SKILL.md") in str(skills.problems[0])


def test_an_unreadable_root_is_reported_and_the_other_roots_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "open", "good", "---\nname: good\ndescription: fine\n---\n")
    write_skill(tmp_path / "shut", "other", "---\nname: other\ndescription: d\n---\n")
    _deny(monkeypatch, "/shut")
    skills = load_skills([tmp_path / "shut", tmp_path / "open"])
    assert skills.names == ["good"]
    assert len(skills.problems) == 1
    assert "cannot read the skills directory" in str(skills.problems[0])
    assert str(skills.problems[0]).startswith(str(tmp_path / "shut"))


def test_load_skills_reads_every_field(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path, "pdf-tools", FULL, **{"reference.md": "ref", "scripts__fill.py": "x"}
    )
    skills = load_skills(tmp_path)
    assert skills.problems == []
    assert skills.names == ["pdf-tools"]
    skill = skills.get("pdf-tools")
    assert skill is not None
    assert skill.path == path
    assert skill.license == "Apache-2.0"
    assert skill.allowed_tools == ["bash", "read_file"]
    assert skill.metadata == {"author": "someone", "version": "1.2"}
    assert skill.files() == ["reference.md", "scripts/fill.py"]
    assert "pdf-tools" in skills
    assert len(skills) == 1


@pytest.mark.parametrize(
    ("folder", "text", "problem"),
    [
        ("a", "---\ndescription: d\n---\n", "'name' is required"),
        ("a", "---\nname: a\n---\n", "'description' is required"),
        ("b", "---\nname: a\ndescription: d\n---\n", "does not match its folder 'b'"),
        ("Bad", "---\nname: Bad\ndescription: d\n---\n", "name 'Bad' is not valid"),
        ("a--b", "---\nname: a--b\ndescription: d\n---\n", "not valid"),
        ("-a", "---\nname: -a\ndescription: d\n---\n", "not valid"),
        ("a", "---\nname: a\ndescription: " + "d" * 1025 + "\n---\n", "limit is 1024"),
        (
            "a",
            "---\nname: a\ndescription: d\ncompatibility: " + "c" * 501 + "\n---\n",
            "limit is 500",
        ),
        ("a", "---\nname: a\ndescription: d\nmetadata: x\n---\n", "'metadata' must be a map"),
        ("a", "---\nname:\n  x: y\ndescription: d\n---\n", "'name' must be a string"),
        ("a", "no frontmatter", "no YAML frontmatter"),
    ],
)
def test_malformed_skills_are_skipped_and_reported(
    tmp_path: Path, folder: str, text: str, problem: str
) -> None:
    write_skill(tmp_path, folder, text)
    write_skill(tmp_path, "good", "---\nname: good\ndescription: fine\n---\nbody")
    skills = load_skills([tmp_path])
    assert skills.names == ["good"]
    assert len(skills.problems) == 1
    assert problem in str(skills.problems[0])
    assert str(tmp_path / folder / "SKILL.md") in str(skills.problems[0])


def test_missing_dirs_and_duplicates_are_reported(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_skill(first, "x", "---\nname: x\ndescription: first\n---\n")
    write_skill(second, "x", "---\nname: x\ndescription: second\n---\n")
    (first / "not-a-skill").mkdir()
    skills = load_skills([first, second, tmp_path / "missing"])
    assert [s.description for s in skills] == ["first"]
    problems = [str(p) for p in skills.problems]
    assert any("already loaded" in p for p in problems)
    assert any("does not exist" in p for p in problems)


def test_prompt_section_lists_name_description_and_path(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "pdf-tools", FULL)
    section = load_skills(tmp_path).prompt_section()
    assert section.startswith("## Skills\n")
    assert "read_skill" in section
    assert (
        f"- pdf-tools: Fill and merge PDF forms: use when a task mentions PDFs. ({path})" in section
    )
    assert SkillSet().prompt_section() == ""


# -- read_skill -------------------------------------------------------------------


async def run(tool: ReadSkillTool, **arguments: Any) -> str:
    return (await tool.execute(arguments, ctx())).text


async def test_read_skill_returns_the_body_and_lists_other_files(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", FULL, **{"reference.md": "the reference"})
    tool = load_skills(tmp_path).tool()
    assert isinstance(tool, AgentTool)
    assert tool.name == "read_skill"
    assert "pdf-tools" in tool.description
    text = await run(tool, name="pdf-tools")
    assert text.startswith("# PDF tools")
    assert "---" not in text.split("\n")[0]
    assert text.endswith("- reference.md")
    assert await run(tool, name="pdf-tools", file="reference.md") == "the reference"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "needs 'name'"),
        ({"name": "nope"}, "no skill named 'nope' (skills: pdf-tools)"),
        ({"name": "pdf-tools", "file": "../secret.txt"}, "outside the skill's folder"),
        ({"name": "pdf-tools", "file": "missing.md"}, "has no file 'missing.md'"),
    ],
)
async def test_read_skill_errors_are_clear(
    tmp_path: Path, arguments: dict[str, Any], problem: str
) -> None:
    write_skill(tmp_path, "pdf-tools", FULL)
    (tmp_path / "secret.txt").write_text("x")
    with pytest.raises(ToolError, match=re.escape(problem)):
        await load_skills(tmp_path).tool().execute(arguments, ctx())


def test_a_skills_own_folder_passed_as_the_root_is_reported(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path, "alpha", "---\nname: alpha\ndescription: A.\n---\nBody.\n"
    ).parent
    skills = load_skills(folder)
    assert len(skills) == 0
    assert "this is a skill's own folder" in str(skills.problems[0])


def test_read_skill_is_an_agent_tool() -> None:

    tool: AgentTool = ReadSkillTool(SkillSet([], []))
    assert tool.parameters["required"] == ["name"]
