"""ReadFileTool: a numbered range of a text file's lines (or an image)."""

from __future__ import annotations

import base64
import os
from typing import Any, Final

import anyio
from pydantic import Field

from yoagent.core import ImageContent, TextContent, ToolContext, ToolError, ToolResult

from ._base import Arguments, BuiltinTool
from ._fs import decode_text, image_type, looks_binary, open_for_read
from .sandbox import PathSandbox, StrPath

DEFAULT_LIMIT: Final = 500
DEFAULT_MAX_BYTES: Final = 1024 * 1024
MAX_LINE_CHARS: Final = 2000
MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
_COUNT_LIMIT: Final = 64 * 1024 * 1024  # count the lines after the range only up to this size

_DESCRIPTION = """\
Read a text file. Returns its lines numbered from 1, as `<number>\\t<line>`
(the number and tab are not part of the file: leave them out of edit_file's old_text).

By default the first 500 lines (at most 1 MB) are returned; for a longer file the
answer ends with a note saying which lines were shown and the `offset` to read on
from. Lines longer than 2000 characters are cut. Binary files are reported, not
shown; PNG, JPEG, GIF and WebP images are returned as images. Only regular files
can be read (not folders, devices or pipes: use list_files for folders)."""


class ReadFileArguments(Arguments):
    """The arguments of ``read_file``."""

    path: str = Field(description="The file to read (relative, or absolute).")
    offset: int = Field(
        1, ge=1, description="The first line to return, counting from 1 (default 1)."
    )
    limit: int = Field(DEFAULT_LIMIT, ge=1, description="How many lines to return.")


def _arguments_for(default_limit: int) -> type[ReadFileArguments]:
    """The argument model with this tool's own default for ``limit``."""

    class ReadFile(ReadFileArguments):
        limit: int = Field(
            default_limit, ge=1, description=f"How many lines to return (default {default_limit})."
        )

    return ReadFile


class ReadFileTool(BuiltinTool[ReadFileArguments]):
    """The ``read_file`` tool. Paths are checked by ``sandbox`` (unrestricted by default)."""

    def __init__(
        self,
        sandbox: PathSandbox | None = None,
        *,
        allowed_paths: list[StrPath] | None = None,
        default_limit: int = DEFAULT_LIMIT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        images: bool = True,
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)
        self.default_limit = default_limit
        self.max_bytes = max_bytes
        self.images = images
        super().__init__(
            name="read_file",
            description=f"{_DESCRIPTION}\n\n{self.sandbox.paths_note()}",
            arguments=_arguments_for(max(1, default_limit)),
        )

    async def run(self, arguments: ReadFileArguments, ctx: ToolContext) -> ToolResult:
        """Read the requested lines."""
        path = arguments.path
        io_path = self.sandbox.io_path(path, tool="read_file")
        return await anyio.to_thread.run_sync(
            self._read, path, io_path, arguments.offset, arguments.limit
        )

    def _read(self, shown: str, io_path: str, offset: int, limit: int) -> ToolResult:
        fd, st = open_for_read("read_file", shown, io_path, nofollow=self.sandbox.restricted)
        with os.fdopen(fd, "rb") as file:
            head = file.read(8192)
            mime = image_type(head) if self.images else None
            if mime is not None:
                return self._image(shown, file, head, mime, st.st_size)
            if looks_binary(head):
                return ToolResult.from_text(
                    f"read_file: {shown} is a binary file ({st.st_size} bytes); not shown.",
                    {"path": shown, "binary": True, "size": st.st_size},
                )
            file.seek(0)
            return self._lines(shown, file, offset, limit, st.st_size)

    def _image(self, shown: str, file: Any, head: bytes, mime: str, size: int) -> ToolResult:
        if size > MAX_IMAGE_BYTES:
            return ToolResult.from_text(
                f"read_file: {shown} is a {mime} image of {size} bytes, larger than "
                f"{MAX_IMAGE_BYTES} bytes; not shown.",
                {"path": shown, "image": mime, "size": size},
            )
        data = head + file.read(MAX_IMAGE_BYTES)
        return ToolResult(
            content=[
                TextContent(text=f"{shown}: {mime} image, {len(data)} bytes"),
                ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime),
            ],
            details={"path": shown, "image": mime, "size": len(data)},
        )

    def _lines(self, shown: str, file: Any, offset: int, limit: int, size: int) -> ToolResult:
        raw_lines: list[bytes] = []
        number = 0  # lines consumed so far
        taken = 0
        byte_cut = False
        more = False
        while True:
            line = _next_line(file)
            if line is None:
                break
            number += 1
            if number < offset:
                continue
            if len(raw_lines) >= limit or (taken + len(line) > self.max_bytes and raw_lines):
                byte_cut = len(raw_lines) < limit
                more = True
                break
            raw_lines.append(line)
            taken += len(line)
        total_lines: int | None = number
        if more:
            total_lines = _count_rest(file, number) if size <= _COUNT_LIMIT else None
        if not raw_lines:
            if number == 0:
                return ToolResult.from_text(f"{shown} is empty.", {"path": shown, "lines": 0})
            raise ToolError(
                f"read_file: offset {offset} is past the end of {shown} ({number} lines)"
            )
        decoded = decode_text(b"".join(raw_lines))
        texts = decoded.text.split("\n")
        if texts and texts[-1] == "":
            texts.pop()
        out: list[str] = []
        long_lines = 0
        for index, line in enumerate(texts):
            line = line.removesuffix("\r")
            if len(line) > MAX_LINE_CHARS or line.endswith(_CUT_MARK):
                long_lines += 1
                line = line.removesuffix(_CUT_MARK)[:MAX_LINE_CHARS]
                line += f" … [line cut at {MAX_LINE_CHARS} characters]"
            out.append(f"{offset + index:>6}\t{line}")
        last = offset + len(raw_lines) - 1
        notes: list[str] = []
        if more:
            of = f" of {total_lines}" if total_lines is not None else ""
            why = f"the {self.max_bytes}-byte limit" if byte_cut else f"the {limit}-line limit"
            notes.append(
                f"[Showing lines {offset}-{last}{of} ({why}). Use offset={last + 1} to read on.]"
            )
        if decoded.encoding == "latin-1":
            notes.append("[Not valid UTF-8: shown decoded as latin-1.]")
        text = "\n".join(out)
        if notes:
            text += "\n\n" + "\n".join(notes)
        return ToolResult.from_text(
            text,
            {
                "path": shown,
                "offset": offset,
                "lines": len(raw_lines),
                "total_lines": total_lines,
                "truncated": more,
                "long_lines_cut": long_lines,
                "encoding": decoded.encoding,
            },
        )


_LINE_CAP: Final = 4 * MAX_LINE_CHARS + 4  # bytes kept of one line (enough for the shown part)
_CUT_MARK: Final = "\x00yoagent-cut\x00"


def _next_line(file: Any) -> bytes | None:
    """The next line (with its newline); a very long one is cut and the rest skipped."""
    piece: bytes = file.readline(_LINE_CAP)
    if not piece:
        return None
    if piece.endswith(b"\n") or len(piece) < _LINE_CAP:
        return piece
    while True:
        rest: bytes = file.readline(1 << 20)
        if not rest or rest.endswith(b"\n"):
            break
    return _trim_partial_utf8(piece) + _CUT_MARK.encode() + b"\n"


def _trim_partial_utf8(data: bytes) -> bytes:
    """Drop a multi-byte UTF-8 sequence left incomplete at the end of ``data``."""
    index = len(data) - 1
    continuation = 0
    while index >= 0 and continuation < 3 and data[index] & 0xC0 == 0x80:
        index -= 1
        continuation += 1
    if index >= 0 and data[index] >= 0xC0:
        need = 2 if data[index] < 0xE0 else 3 if data[index] < 0xF0 else 4
        if continuation + 1 < need:
            return data[:index]
    return data


def _count_rest(file: Any, counted: int) -> int:
    """``counted`` plus the lines left in ``file``."""
    total = counted
    last = b"\n"
    while chunk := file.read(1 << 20):
        total += chunk.count(b"\n")
        last = chunk[-1:]
    # the line that stopped the reading was counted; a last line without newline counts too
    return total + (0 if last == b"\n" else 1)
