"""WriteFileTool: create or replace a whole file, atomically."""

from __future__ import annotations

from typing import Any

import anyio

from yoagent.core import ToolContext, ToolError, ToolResult

from ._args import get_str
from ._fs import atomic_write
from .sandbox import PathSandbox, StrPath

_DESCRIPTION = """\
Create a file, or replace a file's whole content, with the given text (UTF-8).

Missing parent folders are created. An existing file keeps its permissions. The
write is atomic: the file holds either the old or the new content, never part of
it. To change part of an existing file, prefer edit_file. Only regular files can be
written (not folders, devices or pipes)."""


class WriteFileTool:
    """The ``write_file`` tool. Paths are checked by ``sandbox`` (unrestricted by default).

    The target's symlinks are resolved before writing, so writing through a link
    replaces the file it points to, not the link.
    """

    def __init__(
        self, sandbox: PathSandbox | None = None, *, allowed_paths: list[StrPath] | None = None
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)

    @property
    def name(self) -> str:
        """The tool's wire name."""
        return "write_file"

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        return _DESCRIPTION

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": (
                        "The file to write (relative to the working folder, or absolute)."
                    ),
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file.",
                },
            },
            "required": ["path", "content"],
            "additionalProperties": False,
        }

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the file."""
        path = get_str("write_file", arguments, "path")
        content = arguments.get("content")
        if not isinstance(content, str):
            raise ToolError("write_file: the 'content' argument is required (a string)")
        target = self.sandbox.check(path, tool="write_file")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ToolError(f"write_file: the content is not valid text: {error}") from None
        outcome = await anyio.to_thread.run_sync(
            lambda: atomic_write("write_file", path, target, data, nofollow=self.sandbox.restricted)
        )
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        verb = "Created" if outcome.created else "Replaced"
        return ToolResult.from_text(
            f"{verb} {path} ({outcome.size} bytes, {lines} lines).",
            {"path": path, "created": outcome.created, "bytes": outcome.size, "lines": lines},
        )
