"""Skills: the frontmatter (YAML, both PyYAML loaders), loading and its problems, the
prompt section, and read_skill. (The project's own skills/yoagent/SKILL.md is tested in
the root tests/.)

Hostile files (huge, binary, alias bombs, deep nesting) are in test_skill_hostile.py."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from core_helpers import text_reply, tool_reply

from yoagent.core import (
    Agent,
    MockProvider,
    ModelConfig,
    ModelTool,
    ToolCall,
    ToolResultMessage,
    _skill_frontmatter,
)
from yoagent.core._skill_frontmatter import MAX_SKILL_BYTES, SkillError, parse_frontmatter
from yoagent.core._skills import ReadSkillTool, SkillSet, load_skills
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


@pytest.mark.usefixtures("loader")
def test_the_frontmatter_fields_are_read() -> None:
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


@pytest.fixture(params=["libyaml", "python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs on libyaml's loader (when PyYAML has it) and on the pure-Python
    one (the fallback where it does not)."""
    if request.param == "python":
        monkeypatch.setattr(_skill_frontmatter, "_Loader", _skill_frontmatter._PythonLoader)
    elif _skill_frontmatter._Loader is _skill_frontmatter._PythonLoader:
        pytest.skip("PyYAML is built without libyaml here")
    return str(request.param)


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('---\ndescription: "unterminated\n---\n', 3, "while scanning a quoted scalar (line 2)"),
        ("---\ndescription: 'bad ' quote'\n---\n", 2, "while parsing a block mapping"),
        ("---\ntools: [a, b\n---\n", 3, "while parsing a flow sequence (line 2)"),
        ("---\ntools: [a b] c\n---\n", 2, "while parsing a block mapping"),
        ('---\ndescription: "a" b\n---\n', 2, "while parsing a block mapping"),
        ("---\ndescription: >x\n  folded\n---\n", 2, "while scanning a block scalar"),
        ("---\ndescription: |\n    a\n  b\n---\n", 4, "while parsing a block mapping (line 2)"),
        ("---\ndescription: a\n  b: c\n---\n", 3, "mapping values are not allowed"),
        ("---\ntools:\n  - a\n  b\n---\n", 5, "while scanning a simple key (line 4)"),
        ("---\nmetadata:\n  a: 1\n    b: 2\n---\n", 4, "mapping values are not allowed"),
        ("---\nmetadata:\n\tname: x\n---\n", 3, "that cannot start any token"),
        ("---\ndescription: *alias\n---\n", 2, "found undefined alias"),
        ("---\nname: a\nname: b\n---\n", 3, "'name' appears twice"),
        ("---\nmetadata:\n  a: x\n  a: y\n---\n", 4, "'a' appears twice"),
    ],
)
def test_yaml_errors_name_the_line_of_the_file(text: str, line: int, problem: str) -> None:
    with pytest.raises(SkillError) as caught:
        parse_frontmatter(text)
    assert str(caught.value).startswith(f"line {line}: ")
    assert problem in str(caught.value)


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "line 1: no YAML frontmatter"),
        ("---\nname: x\n", "never closed"),
        ("---\nname x\n---\n", "the frontmatter must be a map of 'key: value' lines, not a string"),
        ("---\n- a\n---\n", "the frontmatter must be a map of 'key: value' lines, not a list"),
    ],
)
def test_a_file_without_a_frontmatter_map_is_refused(text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=re.escape(problem)):
        parse_frontmatter(text)


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        # Real YAML the old hand-written subset refused: read as YAML reads it; whether
        # a skill may hold it is the fields' check (test_malformed_skills_…).
        ("description: {a: b}", {"description": {"a": "b"}}),
        ("tools: [a, [b]]", {"tools": ["a", ["b"]]}),
        ("tools:\n  - a\n  - b: c", {"tools": ["a", {"b": "c"}]}),
        ("tools:\n  - a\n  -", {"tools": ["a", None]}),
        ("metadata:\n  tags: [a]", {"metadata": {"tags": ["a"]}}),
        ("  name: x", {"name": "x"}),  # a map may be indented as a whole
        # Every plain scalar is text: no YAML 1.1 numbers, booleans or dates.
        (
            "description: No\nmetadata:\n  version: 1.10\n  on: yes\n  date: 2024-01-01",
            {
                "description": "No",
                "metadata": {"version": "1.10", "on": "yes", "date": "2024-01-01"},
            },
        ),
        (
            "license: ~\ncompatibility: null\nmetadata:",
            {"license": None, "compatibility": None, "metadata": None},
        ),
        ("", {}),
    ],
)
def test_valid_yaml_is_read_as_yaml_with_text_scalars(
    frontmatter: str, expected: dict[str, object]
) -> None:
    fields, _ = parse_frontmatter(f"---\n{frontmatter}\n---\nbody")
    assert fields == expected


@pytest.mark.usefixtures("loader")
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
        ("description: |\n  a", {"description": "a\n"}),  # the line ends, as in the file
        ("description: |-\n  a", {"description": "a"}),
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


@pytest.mark.usefixtures("loader")
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
        ("a", "---\n---\n", "'name' is required; 'description' is required"),
        ("a", "---\nname: ~\ndescription: d\n---\n", "'name' is required"),
        ("a", "---\nname: a\ndescription: |\n\n---\n", "'description' is required"),
        (
            "a",
            "---\nname: a\ndescription: {x: y}\n---\n",
            "'description' must be a string, not a map",
        ),
        ("a", "---\nname: !!int 3\ndescription: d\n---\n", "'name' must be a string, not a number"),
        ("a", "---\nname: !!binary YQ==\ndescription: d\n---\n", "not binary data (!!binary)"),
        ("a", "---\nname: a\ndescription: !!bool true\n---\n", "not a boolean"),
        (
            "a",
            "---\nname: a\ndescription: d\nmetadata:\n  tags: [x]\n---\n",
            "'metadata' entry 'tags' must be a string, not a list",
        ),
        (
            "a",
            "---\nname: a\ndescription: d\nallowed-tools: [bash, {x: y}]\n---\n",
            "'allowed-tools' item 2 must be a string, not a map",
        ),
        (
            "a",
            "---\nname: a\ndescription: d\nallowed-tools: {x: y}\n---\n",
            "'allowed-tools' must be a list of strings, not a map",
        ),
        (
            "a",
            "---\nname: a\ndescription: d\nfoo: !!python/object:os.system x\n---\n",
            "line 4: could not determine a constructor for the tag",
        ),
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
        ({}, "invalid arguments for read_skill: name: Field required"),
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


def _skill_with(tmp_path: Path, name: str, make: Any) -> ReadSkillTool:
    write_skill(tmp_path, "pdf-tools", FULL)
    make(tmp_path / "pdf-tools" / name)
    return load_skills(tmp_path).tool()


async def test_read_skill_refuses_a_file_over_the_cap_without_returning_it(
    tmp_path: Path,
) -> None:
    tool = _skill_with(tmp_path, "big.md", lambda p: p.write_bytes(b"x" * (MAX_SKILL_BYTES + 1)))
    with pytest.raises(ToolError) as refused:
        await tool.execute({"name": "pdf-tools", "file": "big.md"}, ctx())
    assert str(refused.value) == (
        f"read_skill: 'big.md' is larger than {MAX_SKILL_BYTES} bytes "
        "(read it with a file tool instead)"
    )
    exact = _skill_with(tmp_path, "edge.md", lambda p: p.write_bytes(b"y" * MAX_SKILL_BYTES))
    assert len(await run(exact, name="pdf-tools", file="edge.md")) == MAX_SKILL_BYTES


async def test_read_skill_refuses_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    tool = _skill_with(tmp_path, "logo.png", lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\xff"))
    with pytest.raises(ToolError, match=re.escape("read_skill: 'logo.png' is not UTF-8 text")):
        await tool.execute({"name": "pdf-tools", "file": "logo.png"}, ctx())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
async def test_read_skill_never_blocks_on_a_fifo_or_reads_a_folder(tmp_path: Path) -> None:
    tool = _skill_with(tmp_path, "pipe", os.mkfifo)
    (tmp_path / "pdf-tools" / "sub").mkdir()
    for name in ("pipe", "sub"):
        with anyio.fail_after(10), pytest.raises(ToolError) as refused:
            await tool.execute({"name": "pdf-tools", "file": name}, ctx())
        assert str(refused.value) == f"read_skill: skill 'pdf-tools' has no file {name!r}"


def test_a_skills_own_folder_passed_as_the_root_is_reported(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path, "alpha", "---\nname: alpha\ndescription: A.\n---\nBody.\n"
    ).parent
    skills = load_skills(folder)
    assert len(skills) == 0
    assert "this is a skill's own folder" in str(skills.problems[0])


def test_read_skill_is_an_agent_tool_whose_schema_is_its_models() -> None:
    tool: AgentTool = ReadSkillTool(SkillSet([], []))
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name."},
            "file": {
                "type": "string",
                "default": "",
                "description": "A file in the skill's folder to read instead of SKILL.md "
                "(a path relative to the folder, as listed after the instructions).",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }


def test_unknown_keys_are_ignored_and_null_fields_are_absent(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "a",
        "---\nname: a\ndescription: d\nversion: 2\nmodel: {x: [1]}\nlicense: ~\nmetadata:\n---\n",
    )
    skills = load_skills(tmp_path)
    assert skills.problems == []
    skill = skills.get("a")
    assert skill is not None
    assert (skill.license, skill.metadata, skill.allowed_tools) == (None, {}, [])


# -- read_skill's arguments are a model ---------------------------------------------------


async def test_read_skill_refuses_an_unknown_argument_with_an_error_result(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", FULL)
    agent = Agent.from_provider(
        MockProvider(
            [
                tool_reply(
                    ToolCall(
                        id="c1", name="read_skill", arguments={"name": "pdf-tools", "section": "x"}
                    )
                ),
                text_reply("ok"),
            ]
        ),
        ModelConfig.mock(),
        tools=[load_skills(tmp_path).tool()],
    )
    await agent.prompt("use the pdf skill")
    (result,) = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert (
        result.text == "invalid arguments for read_skill: section: Extra inputs are not permitted"
    )


async def test_read_skill_arguments_are_coerced_laxly(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", FULL, **{"reference.md": "the reference"})
    tool = load_skills(tmp_path).tool()
    assert isinstance(tool, ModelTool)
    # A null 'file' means none (the instructions); bytes are decoded as text.
    assert (await run(tool, name="pdf-tools", file=None)).startswith("# PDF tools")
    assert await run(tool, name=b"pdf-tools", file=b"reference.md") == "the reference"
    with pytest.raises(ToolError, match="name: Input should be a valid string"):
        await run(tool, name=["pdf-tools"])
