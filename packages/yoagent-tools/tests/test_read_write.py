"""read_file and write_file: ranges, notes, binary and special files, atomic writes."""

from __future__ import annotations

import base64
import os
import socket
import stat
from pathlib import Path

import pytest

from yoagent.core import ImageContent, ToolContext, ToolError
from yoagent.tools import PathSandbox, ReadFileTool, WriteFileTool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


async def test_reads_numbered_lines(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    result = await ReadFileTool().execute({"path": str(tmp_path / "a.txt")}, ctx)
    assert result.text == "     1\tone\n     2\ttwo\n     3\tthree"
    assert result.details["total_lines"] == 3
    assert result.details["truncated"] is False


async def test_offset_and_limit_with_a_note_saying_how_to_read_on(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    tool = ReadFileTool(PathSandbox([tmp_path]))
    first = await tool.execute({"path": "long.txt"}, ctx)
    assert first.text.splitlines()[0] == "     1\tline 1"
    assert first.text.splitlines()[499] == "   500\tline 500"
    assert first.text.endswith(
        "[Showing lines 1-500 of 1000 (the 500-line limit). Use offset=501 to read on.]"
    )
    middle = await tool.execute({"path": "long.txt", "offset": 998, "limit": 2}, ctx)
    assert middle.text.splitlines()[:2] == ["   998\tline 998", "   999\tline 999"]
    assert "Use offset=1000" in middle.text
    last = await tool.execute({"path": "long.txt", "offset": 1000}, ctx)
    assert last.text == "  1000\tline 1000"
    with pytest.raises(ToolError, match=r"offset 1001 is past the end of long.txt \(1000 lines\)"):
        await tool.execute({"path": "long.txt", "offset": 1001}, ctx)


async def test_byte_limit_and_long_lines_are_cut_with_a_note(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "wide.txt").write_text(("x" * 5000 + "\n") * 3 + "é" * 20000 + "\n")
    tool = ReadFileTool(max_bytes=12000)
    result = await tool.execute({"path": str(tmp_path / "wide.txt")}, ctx)
    lines = result.text.splitlines()
    assert lines[0].endswith("[line cut at 2000 characters]")
    assert "12000-byte limit" in result.text
    rest = await tool.execute({"path": str(tmp_path / "wide.txt"), "offset": 4}, ctx)
    assert rest.text.startswith("     4\t" + "é" * 2000 + " … [line cut")
    assert rest.details["encoding"] == "utf-8"


async def test_crlf_lines_show_without_carriage_returns(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    result = await ReadFileTool().execute({"path": str(tmp_path / "w.txt")}, ctx)
    assert result.text == "     1\ta\n     2\tb"


async def test_latin1_files_are_read_and_say_so(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "l.txt").write_bytes("café\n".encode("latin-1"))
    result = await ReadFileTool().execute({"path": str(tmp_path / "l.txt")}, ctx)
    assert "café" in result.text
    assert "latin-1" in result.text


async def test_binary_files_are_reported_not_dumped(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02" * 100)
    result = await ReadFileTool().execute({"path": str(tmp_path / "b.bin")}, ctx)
    assert result.text.endswith("is a binary file (300 bytes); not shown.")


async def test_images_come_back_as_image_content(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "p.png").write_bytes(PNG)
    result = await ReadFileTool().execute({"path": str(tmp_path / "p.png")}, ctx)
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG


async def test_empty_and_missing_files(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "e.txt").write_text("")
    result = await ReadFileTool().execute({"path": str(tmp_path / "e.txt")}, ctx)
    assert result.text.endswith("is empty.")
    with pytest.raises(ToolError, match="does not exist"):
        await ReadFileTool().execute({"path": str(tmp_path / "nope.txt")}, ctx)


def _special_files(tmp_path: Path) -> list[tuple[str, Path]]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    sock_path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    server.close()
    link_to_fifo = tmp_path / "link-to-fifo"
    link_to_fifo.symlink_to(fifo)
    return [
        ("FIFO", fifo),
        ("directory", folder),
        ("socket", sock_path),
        ("FIFO", link_to_fifo),
        ("character device", Path("/dev/null")),
    ]


@pytest.mark.parametrize("restricted", [False, True])
async def test_non_regular_files_are_refused_without_blocking(
    tmp_path: Path, ctx: ToolContext, restricted: bool
) -> None:
    specials = _special_files(tmp_path)
    roots = [tmp_path, Path("/dev")] if restricted else None
    read = ReadFileTool(PathSandbox(roots))
    write = WriteFileTool(PathSandbox(roots))
    for kind, path in specials:
        with pytest.raises(ToolError, match=f"is a {kind}.*not a regular file; refused"):
            await read.execute({"path": str(path)}, ctx)
        with pytest.raises(ToolError, match="not a regular file; refused"):
            await write.execute({"path": str(path), "content": "x"}, ctx)
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


async def test_write_creates_parents_and_reports(tmp_path: Path, ctx: ToolContext) -> None:
    tool = WriteFileTool(PathSandbox([tmp_path]))
    result = await tool.execute({"path": "a/b/c.txt", "content": "hi\nthere"}, ctx)
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "hi\nthere"
    assert result.text == "Created a/b/c.txt (8 bytes, 2 lines)."
    again = await tool.execute({"path": "a/b/c.txt", "content": ""}, ctx)
    assert again.text.startswith("Replaced a/b/c.txt (0 bytes")
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == ""


async def test_write_keeps_the_mode_and_leaves_no_temporary_file(
    tmp_path: Path, ctx: ToolContext
) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o751)
    await WriteFileTool().execute({"path": str(script), "content": "#!/bin/sh\n"}, ctx)
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o751
    assert script.read_text() == "#!/bin/sh\n"
    assert os.listdir(tmp_path) == ["run.sh"]


async def test_write_is_atomic_the_old_inode_is_replaced_whole(
    tmp_path: Path, ctx: ToolContext
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old content")
    reader = os.open(target, os.O_RDONLY)  # a reader holding the old file sees the old content
    try:
        await WriteFileTool().execute({"path": str(target), "content": "new"}, ctx)
        assert os.read(reader, 100) == b"old content"
    finally:
        os.close(reader)
    assert target.read_text() == "new"


async def test_write_through_a_symlink_replaces_the_target_not_the_link(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "real.txt").write_text("a")
    (tmp_path / "link.txt").symlink_to("real.txt")
    for roots in (None, [tmp_path]):
        await WriteFileTool(PathSandbox(roots)).execute(
            {"path": str(tmp_path / "link.txt"), "content": f"b{roots is None}"}, ctx
        )
        assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "bFalse"


async def test_write_under_a_file_is_a_clear_error(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "file").write_text("x")
    for roots in (None, [tmp_path]):
        with pytest.raises(ToolError, match="not a folder"):
            await WriteFileTool(PathSandbox(roots)).execute(
                {"path": str(tmp_path / "file" / "x.txt"), "content": "y"}, ctx
            )
