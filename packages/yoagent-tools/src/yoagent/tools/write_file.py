"""WriteFileTool: create or replace a whole file, atomically."""

from __future__ import annotations

import anyio
from pydantic import Field

from yoagent.core import ToolArguments, ToolContext, ToolError, ToolResult

from ._base import BuiltinTool
from ._fs import WriteOutcome, sandboxed_write, write_lock
from ._text import visible_name
from .sandbox import PathSandbox, StrPath

_DESCRIPTION = """\
Create a file, or replace a file's whole content, with the given text (UTF-8).

Missing parent folders are created. An existing file keeps its owner, group,
permissions and extended attributes. The
write is atomic: the file holds either the old or the new content, never part of
it. To change part of an existing file, prefer edit_file. Only regular files can be
written (not folders, devices or pipes)."""


class WriteFileArguments(ToolArguments):
    """The arguments of ``write_file``."""

    path: str = Field(description="The file to write (relative, or absolute).")
    content: str = Field(description="The complete new content of the file.")


class WriteFileTool(BuiltinTool[WriteFileArguments]):
    """The ``write_file`` tool. Paths are checked by ``sandbox`` (unrestricted by default).

    The target's symlinks are resolved before writing, so writing through a link
    replaces the file it points to, not the link. Writes to one file from this process
    (``write_file`` and ``edit_file`` calls) happen one at a time.
    """

    def __init__(
        self, sandbox: PathSandbox | None = None, *, allowed_paths: list[StrPath] | None = None
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)
        super().__init__(
            name="write_file",
            description=f"{_DESCRIPTION}\n\n{self.sandbox.paths_note()}",
            arguments=WriteFileArguments,
        )

    async def run(self, arguments: WriteFileArguments, ctx: ToolContext) -> ToolResult:
        """Write the file."""
        path, content = arguments.path, arguments.content
        target = self.sandbox.check(path, tool="write_file")
        shown = visible_name(path)
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ToolError(f"write_file: the content is not valid text: {error}") from None

        def write() -> WriteOutcome:
            with write_lock(target):
                return sandboxed_write(
                    "write_file", shown, target, data, nofollow=self.sandbox.restricted
                )

        outcome = await anyio.to_thread.run_sync(write)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        verb = "Created" if outcome.created else "Replaced"
        return ToolResult.from_text(
            f"{verb} {shown} ({outcome.size} bytes, {lines} lines).",
            {"path": shown, "created": outcome.created, "bytes": outcome.size, "lines": lines},
        )
