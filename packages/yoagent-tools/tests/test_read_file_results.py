"""What ``read_file`` answers, field for field: a binary file, an image within and past
the size bound (and with images turned off), an empty file, the notes and details of a
range cut by lines or by bytes (at the byte bound exactly and one past it), whether the
lines after a range are counted, an offset past the end, and the tool's own default
``limit``. From the mutation triage of a whole run of yoagent-tools: each test pins a
behaviour a surviving mutant changed."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from yoagent.core import ImageContent, TextContent, ToolContext, ToolError, ToolResult
from yoagent.tools import ReadFileTool, read_file

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


async def _read(tool: ReadFileTool, path: Path, ctx: ToolContext, **arguments: int) -> ToolResult:
    return await tool.execute({"path": str(path), **arguments}, ctx)


async def test_a_binary_file_is_named_with_its_size_not_shown(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02" * 10)
    result = await _read(ReadFileTool(), tmp_path / "b.bin", ctx)
    shown = str(tmp_path / "b.bin")
    assert result.text == f"read_file: {shown} is a binary file (30 bytes); not shown."
    assert result.details == {"path": shown, "binary": True, "size": 30}


async def test_an_image_within_the_bound_is_returned_whole_with_its_details(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_file, "MAX_IMAGE_BYTES", len(PNG))
    path = tmp_path / "p.png"
    path.write_bytes(PNG)
    result = await _read(ReadFileTool(), path, ctx)
    text, image = result.content
    assert isinstance(text, TextContent) and isinstance(image, ImageContent)
    assert text.text == f"{path}: image/png image, {len(PNG)} bytes"
    assert base64.b64decode(image.data) == PNG
    assert result.details == {"path": str(path), "image": "image/png", "size": len(PNG)}


async def test_an_image_past_the_bound_is_named_not_shown(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_file, "MAX_IMAGE_BYTES", len(PNG) - 1)
    path = tmp_path / "p.png"
    path.write_bytes(PNG)
    result = await _read(ReadFileTool(), path, ctx)
    assert result.text == (
        f"read_file: {path} is a image/png image of {len(PNG)} bytes, larger than "
        f"{len(PNG) - 1} bytes; not shown."
    )
    assert result.details == {"path": str(path), "image": "image/png", "size": len(PNG)}


async def test_with_images_turned_off_an_image_is_a_binary_file(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "p.png").write_bytes(PNG)
    result = await _read(ReadFileTool(images=False), tmp_path / "p.png", ctx)
    assert result.details == {"path": str(tmp_path / "p.png"), "binary": True, "size": len(PNG)}


async def test_an_empty_file_says_so(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    result = await _read(ReadFileTool(), tmp_path / "e.txt", ctx)
    assert result.text == f"{tmp_path / 'e.txt'} is empty."
    assert result.details == {"path": str(tmp_path / "e.txt"), "lines": 0}


async def test_a_range_cut_by_lines_says_which_and_counts_the_rest(
    tmp_path: Path, ctx: ToolContext
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\ntwo\nthree\nfour\nfive\n")
    result = await _read(ReadFileTool(), path, ctx, limit=2)
    assert result.text == (
        "     1\tone\n     2\ttwo\n\n"
        "[Showing lines 1-2 of 5 (the 2-line limit). Use offset=3 to read on.]"
    )
    assert result.details == {
        "path": str(path),
        "offset": 1,
        "lines": 2,
        "total_lines": 5,
        "truncated": True,
        "long_lines_cut": 0,
        "encoding": "utf-8",
    }


async def test_a_range_as_large_as_the_byte_bound_is_whole_and_one_byte_more_is_cut(
    tmp_path: Path, ctx: ToolContext
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("aaaa\nbbbb\ncccc\n")  # 5 bytes a line
    whole = await _read(ReadFileTool(max_bytes=15), path, ctx)
    assert whole.details is not None and whole.details["lines"] == 3
    assert whole.details["truncated"] is False
    cut = await _read(ReadFileTool(max_bytes=14), path, ctx)
    assert cut.text.endswith(
        "[Showing lines 1-2 of 3 (the 14-byte limit). Use offset=3 to read on.]"
    )
    assert cut.details is not None and cut.details["lines"] == 2


async def test_the_lines_after_a_range_are_counted_only_in_a_file_up_to_the_count_bound(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("1\n2\n3\n4\n")  # 8 bytes
    monkeypatch.setattr(read_file, "_COUNT_LIMIT", 8)
    counted = await _read(ReadFileTool(), path, ctx, limit=1)
    assert counted.details is not None and counted.details["total_lines"] == 4
    monkeypatch.setattr(read_file, "_COUNT_LIMIT", 7)
    uncounted = await _read(ReadFileTool(), path, ctx, limit=1)
    assert uncounted.details is not None and uncounted.details["total_lines"] is None
    assert uncounted.text.endswith(
        "[Showing lines 1-1 (the 1-line limit). Use offset=2 to read on.]"
    )


async def test_an_offset_past_the_end_is_an_error_that_counts_the_lines(
    tmp_path: Path, ctx: ToolContext
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a\nb\nc\n")
    with pytest.raises(ToolError) as caught:
        await _read(ReadFileTool(), path, ctx, offset=9)
    assert str(caught.value) == f"read_file: offset 9 is past the end of {path} (3 lines)"


async def test_the_tools_default_limit_is_its_own_and_a_limit_of_one_is_allowed(
    tmp_path: Path, ctx: ToolContext
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a\nb\nc\n")
    two = ReadFileTool(default_limit=2)
    assert two.parameters["properties"]["limit"]["default"] == 2
    assert (await _read(two, path, ctx)).details["lines"] == 2  # type: ignore[index]
    assert ReadFileTool(default_limit=0).parameters["properties"]["limit"]["default"] == 1
    assert (await _read(ReadFileTool(), path, ctx, limit=1)).details["lines"] == 1  # type: ignore[index]
    with pytest.raises(ToolError, match="limit"):
        await _read(two, path, ctx, limit=0)


@pytest.mark.parametrize(
    ("data", "kept"),
    [
        (b"abc", b"abc"),
        (b"", b""),
        ("aé".encode(), "aé".encode()),  # a whole 2-byte character stays
        ("a€".encode(), "a€".encode()),  # 3 bytes
        ("a😀".encode(), "a😀".encode()),  # 4 bytes
        ("a€".encode()[:-1], b"a"),  # 2 of 3 bytes: dropped
        ("a€".encode()[:-2], b"a"),  # 1 of 3
        ("a😀".encode()[:-1], b"a"),  # 3 of 4
        ("a😀".encode()[:-3], b"a"),  # 1 of 4
        ("aé".encode()[:-1], b"a"),  # 1 of 2
        (b"a\x80\x80", b"a\x80\x80"),  # stray continuation bytes: not a sequence to trim
        ("é".encode()[:-1], b""),  # nothing before the cut character
    ],
)
def test_a_cut_line_loses_only_a_character_left_incomplete(data: bytes, kept: bytes) -> None:
    assert read_file._trim_partial_utf8(data) == kept  # pyright: ignore[reportPrivateUsage]


async def test_a_line_past_the_cap_is_cut_on_a_whole_character_and_said_cut(
    tmp_path: Path, ctx: ToolContext
) -> None:
    path = tmp_path / "long.txt"
    cap = read_file._LINE_CAP  # pyright: ignore[reportPrivateUsage]
    line = "a" * (cap - 1) + "€" * 10  # the cap falls inside a 3-byte character
    path.write_text(line + "\nnext\n", encoding="utf-8")
    result = await _read(ReadFileTool(), path, ctx)
    first, second = result.text.split("\n")[:2]
    assert first == "     1\t" + "a" * read_file.MAX_LINE_CHARS + " … [line cut at 2000 characters]"
    assert second == "     2\tnext"
    assert result.details is not None and result.details["long_lines_cut"] == 1
