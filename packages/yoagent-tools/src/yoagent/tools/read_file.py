"""ReadFileTool: a numbered range of a text file's lines (or an image).

The file is read in a worker thread that checks a stop flag (set when the call is
cancelled, the thread then abandoned) between lines and while skipping the rest of a
long line. A line is skipped at most :data:`MAX_LINE_SKIP_BYTES` past its shown part:
a 4 GiB log with no newline is not read to its end, the answer says the line goes on.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Callable
from typing import Any, Final

import anyio
from pydantic import Field

from yoagent.core import (
    ImageContent,
    TextContent,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolResult,
)

from ._base import BuiltinTool
from ._fs import decode_text, image_type, looks_binary, open_for_read
from ._text import visible_name
from .sandbox import PathSandbox, StrPath

DEFAULT_LIMIT: Final = 500
DEFAULT_MAX_BYTES: Final = 1024 * 1024
MAX_LINE_CHARS: Final = 2000
MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
_COUNT_LIMIT: Final = 64 * 1024 * 1024  # count the lines after the range only up to this size
MAX_LINE_SKIP_BYTES: Final = 64 * 1024 * 1024
"""How far past its shown part a long line is read to find its end; past it, reading stops."""
_STOP_EVERY: Final = 1024  # lines read between two checks of the stop flag

_DESCRIPTION = """\
Read a text file. Returns its lines numbered from 1, as `<number>\\t<line>`
(the number and tab are not part of the file: leave them out of edit_file's old_text).

By default the first 500 lines (at most 1 MB) are returned; for a longer file the
answer ends with a note saying which lines were shown and the `offset` to read on
from. Lines longer than 2000 characters are cut. Binary files are reported, not
shown; PNG, JPEG, GIF and WebP images are returned as images. Only regular files
can be read (not folders, devices or pipes: use list_files for folders)."""


class ReadFileArguments(ToolArguments):
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
        path, offset, limit = arguments.path, arguments.offset, arguments.limit
        io_path = self.sandbox.io_path(path, tool="read_file")
        shown = visible_name(path)
        stop = threading.Event()
        result: ToolResult | None = None
        try:
            with ctx.cancel.scope():
                result = await anyio.to_thread.run_sync(
                    lambda: self._read(shown, io_path, offset, limit, stop.is_set),
                    abandon_on_cancel=True,
                )
        finally:
            stop.set()
        if result is None:
            raise ToolError("read_file: cancelled")
        return result

    def _read(
        self, shown: str, io_path: str, offset: int, limit: int, stop: Callable[[], bool]
    ) -> ToolResult:
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
            return self._lines(shown, _LineReader(file, stop), offset, limit, st.st_size)

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

    def _lines(
        self, shown: str, reader: _LineReader, offset: int, limit: int, size: int
    ) -> ToolResult:
        raw_lines: list[bytes] = []
        number = 0  # lines consumed so far
        taken = 0
        byte_cut = False
        more = False
        while True:
            line = reader.next_line()
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
        endless = reader.endless_line
        total_lines: int | None = number
        if endless is not None:
            more, total_lines = True, None
        elif more:
            total_lines = reader.count_rest(number) if size <= _COUNT_LIMIT else None
        if not raw_lines:
            if number == 0:
                return ToolResult.from_text(f"{shown} is empty.", {"path": shown, "lines": 0})
            if endless is not None:
                raise ToolError(
                    f"read_file: line {endless} of {shown} is longer than "
                    f"{MAX_LINE_SKIP_BYTES} bytes, so the lines after it cannot be reached; "
                    "read on with bash (e.g. `tail -c`)"
                )
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
        if endless is not None:
            notes.append(
                f"[Showing lines {offset}-{last}: line {endless} continues past "
                f"{MAX_LINE_SKIP_BYTES} bytes, and the rest of the file was not read. "
                "Read on with bash (e.g. `tail -c`).]"
            )
        elif more:
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


class _Stopped(Exception):
    """The call was cancelled: the worker thread stops reading."""


class _LineReader:
    """A text file's lines, each cut to :data:`_LINE_CAP` bytes, checking ``stop`` as it goes."""

    def __init__(self, file: Any, stop: Callable[[], bool]) -> None:
        self.file = file
        self.stop = stop
        self.lines = 0
        self.endless_line: int | None = None
        """The number of a line whose end was not found within MAX_LINE_SKIP_BYTES."""

    def next_line(self) -> bytes | None:
        """The next line (with its newline); a very long one is cut and its rest skipped."""
        if self.endless_line is not None:
            return None
        self.lines += 1
        if self.lines % _STOP_EVERY == 0 and self.stop():
            raise _Stopped
        piece: bytes = self.file.readline(_LINE_CAP)
        if not piece:
            return None
        if piece.endswith(b"\n") or len(piece) < _LINE_CAP:
            return piece
        skipped = 0
        while True:
            if self.stop():
                raise _Stopped
            rest: bytes = self.file.readline(1 << 20)
            if not rest or rest.endswith(b"\n"):
                break
            skipped += len(rest)
            if skipped >= MAX_LINE_SKIP_BYTES:
                self.endless_line = self.lines
                break
        return _trim_partial_utf8(piece) + _CUT_MARK.encode() + b"\n"

    def count_rest(self, counted: int) -> int:
        """``counted`` plus the lines left in the file."""
        total = counted
        last = b"\n"
        while chunk := self.file.read(1 << 20):
            if self.stop():
                raise _Stopped
            total += chunk.count(b"\n")
            last = chunk[-1:]
        # the line that stopped the reading was counted; a last line without newline counts too
        return total + (0 if last == b"\n" else 1)


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
