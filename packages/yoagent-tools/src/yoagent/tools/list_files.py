"""ListFilesTool: a folder's tree, bounded in depth and size, with what could not be read."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from pydantic import Field

from yoagent.core import ToolArguments, ToolContext, ToolError, ToolResult
from yoagent.core.support import utf8_safe

from ._base import BuiltinTool
from ._fs import IGNORED_DIRS, is_ignored_dir
from ._ignore import GitIgnores
from ._text import visible_name
from ._walk import Entry, FdWalk, open_walk_root
from .sandbox import PathSandbox, StrPath

DEFAULT_DEPTH: Final = 3
MAX_DEPTH: Final = 20
DEFAULT_LIMIT: Final = 200
MAX_LIMIT: Final = 5000
MAX_WARNINGS: Final = 20
DEFAULT_TIMEOUT: Final = 30.0

_DESCRIPTION = """\
List the files and folders under a folder, as paths relative to it, sorted.

Folders end with `/`, symlinks with `@` (they are not followed). By default it goes
3 levels deep and stops after 200 entries (the answer says so when it was cut:
list a subfolder or lower `depth`). `.git`, dependency and build folders
(node_modules, __pycache__, .venv, target, dist, build, ...) and folders ignored by
.gitignore files (in a git repository) are shown as `(skipped)` but not entered,
and ignored files are left out, unless `all` is true. Folders that could not be read
are listed under Warnings: the listing is then incomplete. Bytes in names that are
not UTF-8 are shown as \\xNN, control characters as \\n, \\t, \\xNN. To find files by
content, use search."""


class ListFilesArguments(ToolArguments):
    """The arguments of ``list_files``."""

    path: str = Field(".", description="The folder to list (default: the working folder).")
    depth: int = Field(
        DEFAULT_DEPTH,
        ge=1,
        le=MAX_DEPTH,
        description=f"How many levels to go down (default {DEFAULT_DEPTH}).",
    )
    limit: int = Field(
        DEFAULT_LIMIT,
        ge=1,
        le=MAX_LIMIT,
        description=f"The most entries to return (default {DEFAULT_LIMIT}).",
    )
    all: bool = Field(
        False,
        description="Also enter .git, dependency, build and ignored folders (default false).",
    )


@dataclass(slots=True)
class _Listing:
    entries: list[str] = field(default_factory=list[str])
    warnings: list[str] = field(default_factory=list[str])
    warning_count: int = 0
    notes: list[str] = field(default_factory=list[str])
    truncated: bool = False
    timed_out: bool = False

    def warn(self, text: str) -> None:
        self.warning_count += 1
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)


class ListFilesTool(BuiltinTool[ListFilesArguments]):
    """The ``list_files`` tool. Paths are checked by ``sandbox`` (unrestricted by default).

    The tree is walked through held folder descriptors without following symlinks, so a
    folder swapped for a symlink during the walk is reported, never entered. A walk
    longer than ``timeout`` seconds stops and returns what it listed, saying so; a
    cancel stops it at once.
    """

    def __init__(
        self,
        sandbox: PathSandbox | None = None,
        *,
        allowed_paths: list[StrPath] | None = None,
        ignored_dirs: frozenset[str] = IGNORED_DIRS,
        use_gitignore: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)
        self.ignored_dirs = ignored_dirs
        self.use_gitignore = use_gitignore
        self.timeout = timeout
        super().__init__(
            name="list_files",
            description=f"{_DESCRIPTION}\n\n{self.sandbox.paths_note()}",
            arguments=ListFilesArguments,
        )

    async def run(self, arguments: ListFilesArguments, ctx: ToolContext) -> ToolResult:
        """List the folder."""
        path = arguments.path
        io_path = self.sandbox.io_path(path, tool="list_files")
        shown = visible_name(path)
        stop = threading.Event()
        listing: _Listing | None = None
        try:
            with ctx.cancel.scope():
                listing = await anyio.to_thread.run_sync(
                    lambda: self._list(shown, io_path, arguments, stop), abandon_on_cancel=True
                )
        finally:
            stop.set()
        if listing is None:
            raise ToolError("list_files: cancelled")
        return _answer(shown, listing, arguments, self.timeout)

    def _list(
        self, shown: str, root: str, arguments: ListFilesArguments, stop: threading.Event
    ) -> _Listing:
        nofollow = self.sandbox.restricted
        try:
            root_fd = open_walk_root(root, nofollow=nofollow)
        except FileNotFoundError:
            raise ToolError(f"list_files: {shown} does not exist") from None
        except NotADirectoryError:
            raise ToolError(
                f"list_files: {shown} is not a folder (read it with read_file)"
            ) from None
        except OSError as error:
            raise ToolError(f"list_files: cannot read {shown}: {error.strerror or error}") from None
        everything = arguments.all
        gitignores = (
            GitIgnores.for_walk(root, nofollow=nofollow)
            if self.use_gitignore and not everything
            else GitIgnores.disabled()
        )
        listing = _Listing()
        limit = arguments.limit
        deadline = time.monotonic() + self.timeout

        def should_stop() -> bool:
            if stop.is_set():
                return True
            if time.monotonic() > deadline:
                listing.timed_out = True
                stop.set()
            return listing.timed_out

        def visit(entry: Entry) -> bool:
            if len(listing.entries) >= limit:
                listing.truncated = True
                stop.set()
                return False
            shown_rel = visible_name(entry.rel)
            if entry.kind == "link":
                listing.entries.append(shown_rel + "@")
                return False
            is_dir = entry.kind == "dir"
            if not everything and gitignores.decide(entry.rel, is_dir) is True:
                if is_dir:
                    listing.entries.append(shown_rel + "/ (skipped)")
                return False
            if not is_dir:
                listing.entries.append(shown_rel)
                return False
            if not everything and is_ignored_dir(entry.name, self.ignored_dirs):
                listing.entries.append(shown_rel + "/ (skipped)")
                return False
            listing.entries.append(shown_rel + "/")
            return entry.depth < arguments.depth

        walk = FdWalk(
            max_depth=MAX_DEPTH,
            stop=should_stop,
            enter=gitignores.enter,
            leave=gitignores.leave,
        )
        try:
            walk.run(root_fd, visit)
        except OSError as error:
            raise ToolError(f"list_files: cannot read {shown}: {error.strerror or error}") from None
        for problem in walk.problems:
            listing.warn(f"cannot read {visible_name(problem)}")
        listing.notes += map(visible_name, gitignores.notes)
        return listing


def _answer(
    shown: str, listing: _Listing, arguments: ListFilesArguments, timeout: float
) -> ToolResult:
    lines = list(listing.entries) if listing.entries else [f"({shown} is empty)"]
    if listing.timed_out:
        lines.append(
            f"[Listing stopped after {timeout:g} s, with {len(listing.entries)} entries: "
            "list a subfolder, or lower `depth`.]"
        )
    elif listing.truncated:
        lines.append(
            f"[Listing cut at {arguments.limit} entries: list a subfolder, "
            "or raise `limit`/lower `depth`.]"
        )
    warnings_text = None
    if listing.warning_count:
        extra = listing.warning_count - len(listing.warnings)
        items = [f"- {text}" for text in listing.warnings]
        if extra:
            items.append(f"- ... and {extra} more")
        warnings_text = "\n".join(items)
        lines.append("Warnings (the listing is incomplete):\n" + warnings_text)
    if listing.notes:
        lines.append("Notes:\n" + "\n".join(f"- {note}" for note in listing.notes))
    details: dict[str, Any] = {
        "path": shown,
        "entries": len(listing.entries),
        "depth": arguments.depth,
        "truncated": listing.truncated or listing.timed_out,
        "timed_out": listing.timed_out,
        "warnings": warnings_text,
    }
    return ToolResult.from_text(utf8_safe("\n".join(lines)), details)
