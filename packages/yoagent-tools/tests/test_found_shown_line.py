"""How one matching line is shown: only its line ending stripped, cut at 500 characters or
2,000 bytes, each bound met exactly kept whole (its line ending not counted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tools_helpers import ENGINES

from yoagent.core import ToolContext
from yoagent.tools import PathSandbox, SearchTool
from yoagent.tools._found import show_line

CUT = " … [line cut at 500 characters]"


def test_only_the_line_ending_is_stripped() -> None:
    assert show_line(b"x \t\r\n") == "x \t"
    assert show_line(b"\nline\n") == "\nline"
    assert show_line(b"endsX\n") == "endsX"


def test_a_line_of_500_characters_is_whole_and_501_is_cut() -> None:
    assert show_line(b"a" * 500) == "a" * 500
    assert show_line(b"a" * 501) == "a" * 500 + CUT
    assert show_line(b"a" * 600) == "a" * 500 + CUT


def test_a_line_of_2000_bytes_is_whole_and_more_is_cut() -> None:
    wide = "\U0001f600" * 500
    assert show_line(wide.encode()) == wide
    assert show_line(wide.encode() + b"\n") == wide
    assert show_line(wide.encode() + b"\r\n") == wide  # the line ending is not the line's
    assert show_line(("\U0001f600" * 499 + "ab").encode()) == "\U0001f600" * 499 + "a" + CUT


async def search_one_file(
    folder: Path, ctx: ToolContext, engine: str, file: tuple[str, bytes], pattern: str
) -> str:
    """What ``engine`` shows for ``pattern`` in a folder holding one file (name, content)."""
    (folder / file[0]).write_bytes(file[1])
    tool = SearchTool(PathSandbox([folder]), engine=engine)  # type: ignore[arg-type]
    return (await tool.execute({"pattern": pattern}, ctx)).text


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_crlf_line_of_2000_bytes_is_shown_whole_by_either_engine(
    tmp_path: Path, ctx: ToolContext, engine: str
) -> None:
    wide = "\U0001f600" * 500
    shown = await search_one_file(
        tmp_path, ctx, engine, ("crlf.txt", wide.encode() + b"\r\n"), "\U0001f600"
    )
    assert shown == f"crlf.txt:1:{wide}"


def test_a_carriage_return_inside_a_longer_line_at_the_bound_is_not_taken_for_its_ending() -> None:
    wide = "\U0001f600" * 500  # 2,000 bytes
    assert show_line(wide.encode() + b"\r") == wide  # a CRLF line's text, without the LF
    assert show_line(wide.encode() + b"\rm") == wide[:500] + CUT  # the first 2,002 bytes
    assert show_line(b"x\r\r\n") == "x\r"  # only the one line ending


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_longer_line_with_a_carriage_return_at_the_bound_is_cut_by_either_engine(
    tmp_path: Path, ctx: ToolContext, engine: str
) -> None:
    wide = "\U0001f600" * 500
    shown = await search_one_file(
        tmp_path, ctx, engine, ("long.txt", wide.encode() + b"\rmore text\n"), "more"
    )
    assert shown == f"long.txt:1:{wide}{CUT}"
