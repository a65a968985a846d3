"""Project instructions word for word: which of a folder's two files are read (a missing,
empty or repeated one skipped), bytes that are not UTF-8, the cut at 40,000 characters,
the system prompt's section, and ``/init``'s starter ``AGENTS.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from yoagent.cli.instructions import (
    MAX_FILE_CHARS,
    InstructionFile,
    find_instructions,
    instructions_section,
    starter_text,
    write_starter,
)


def texts(cwd: Path) -> list[str]:
    return [found.text for found in find_instructions(cwd)]


def test_claude_md_is_read_when_agents_md_is_missing_or_empty(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("claude rules\n")
    assert texts(tmp_path) == ["claude rules"]
    (tmp_path / "AGENTS.md").write_text(" \n")
    assert find_instructions(tmp_path) == [
        InstructionFile(path=tmp_path / "CLAUDE.md", text="claude rules")
    ]


def test_an_empty_file_alone_gives_nothing(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("\n\n")
    assert find_instructions(tmp_path) == []


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"caf\xc3\xa9 \xff ok")
    assert texts(tmp_path) == ["café \ufffd ok"]


def test_a_file_of_exactly_the_limit_is_whole_and_one_longer_is_cut(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("a" * MAX_FILE_CHARS)
    assert texts(tmp_path) == ["a" * MAX_FILE_CHARS]
    (tmp_path / "AGENTS.md").write_text("b" * (MAX_FILE_CHARS + 1))
    assert texts(tmp_path) == [
        "b" * MAX_FILE_CHARS + "\n[… cut: the file is longer than 40000 characters]"
    ]


def test_the_system_prompts_section_word_for_word(tmp_path: Path) -> None:
    files = [
        InstructionFile(path=Path("/repo/AGENTS.md"), text="outer"),
        InstructionFile(path=Path("/repo/app/CLAUDE.md"), text="inner"),
    ]
    assert instructions_section(files) == (
        "## Project instructions\n\n"
        "The project's own instructions follow (later files are nearer the working folder "
        "and win where they disagree). Follow them.\n\n"
        "### /repo/AGENTS.md\n\nouter\n\n"
        "### /repo/app/CLAUDE.md\n\ninner"
    )
    assert instructions_section([]) == ""


STARTER = """\
# {name}

Instructions for coding agents working in this repository (read by yoagent and
other agents at the start of every session).

## Overview

- (what this project is, and where its main parts live)

## Commands

{commands}

## Conventions

- (code style, naming, how errors are handled)
- Run the tests before saying a change is done.

## Do not

- (files or folders never to edit, commands never to run)
"""


def test_the_starter_without_marker_files_word_for_word(tmp_path: Path) -> None:
    work = tmp_path / "tool"
    work.mkdir()
    assert starter_text(work) == STARTER.format(
        name="tool", commands="- (how to build, test and lint this project)"
    )


def test_the_starter_lists_each_marker_files_commands(tmp_path: Path) -> None:
    work = tmp_path / "app"
    work.mkdir()
    (work / "pyproject.toml").write_text("")
    (work / "Makefile").write_text("")
    expected = STARTER.format(
        name="app",
        commands="- Python: `uv run pytest` (or `python -m pytest`) runs the tests\n"
        "- `make` builds; see the Makefile for its targets",
    )
    assert starter_text(work) == expected
    written = write_starter(work)
    assert written == work / "AGENTS.md"
    assert written.read_text(encoding="utf-8") == expected


def test_a_file_that_cannot_be_read_is_skipped_and_the_other_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "AGENTS.md").write_text("agents rules")
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    read_text = Path.read_text

    def refusing(path: Path, *args: Any, **kwargs: Any) -> str:
        if path.name == "AGENTS.md":
            raise PermissionError(13, "Permission denied")
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refusing)
    assert texts(tmp_path) == ["claude rules"]
