"""ListFilesTool: a folder's tree, bounded in depth and size, with what could not be read."""

from __future__ import annotations

import fnmatch
import os
import stat
import threading
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from yoagent.core import ToolContext, ToolError, ToolResult

from ._args import get_bool, get_int, get_str
from ._fs import IGNORED_DIRS, is_ignored_dir, open_for_read, read_all
from .sandbox import PathSandbox, StrPath

DEFAULT_DEPTH: Final = 3
MAX_DEPTH: Final = 20
DEFAULT_LIMIT: Final = 200
MAX_LIMIT: Final = 5000
MAX_WARNINGS: Final = 20

_DESCRIPTION = """\
List the files and folders under a folder, as paths relative to it, sorted.

Folders end with `/`, symlinks with `@` (they are not followed). By default it goes
3 levels deep and stops after 200 entries (the answer says so when it was cut:
list a subfolder or lower `depth`). `.git`, dependency and build folders
(node_modules, __pycache__, .venv, target, dist, build, ...) and the folder's
.gitignore patterns are shown as `(skipped)` but not entered, unless `all` is true.
Folders that could not be read are listed under Warnings: the listing is then
incomplete. To find files by content, use search."""


@dataclass(slots=True)
class _Listing:
    entries: list[str] = field(default_factory=list[str])
    warnings: list[str] = field(default_factory=list[str])
    warning_count: int = 0
    truncated: bool = False

    def warn(self, text: str) -> None:
        self.warning_count += 1
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)


class _GitIgnore:
    """The simple patterns of one .gitignore (no negation; good enough to skip build output)."""

    def __init__(self, text: str) -> None:
        self.names: list[tuple[str, bool]] = []  # (pattern, dirs only) matched on the name
        self.paths: list[tuple[str, bool]] = []  # matched on the path from the root
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", "!")):
                continue
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            if "/" in line:
                self.paths.append((line.lstrip("/"), dir_only))
            else:
                self.names.append((line, dir_only))

    def ignores(self, rel: str, name: str, is_dir: bool) -> bool:
        for pattern, dir_only in self.names:
            if (is_dir or not dir_only) and fnmatch.fnmatchcase(name, pattern):
                return True
        for pattern, dir_only in self.paths:
            if (is_dir or not dir_only) and fnmatch.fnmatchcase(rel, pattern):
                return True
        return False


class ListFilesTool:
    """The ``list_files`` tool. Paths are checked by ``sandbox`` (unrestricted by default)."""

    def __init__(
        self,
        sandbox: PathSandbox | None = None,
        *,
        allowed_paths: list[StrPath] | None = None,
        ignored_dirs: frozenset[str] = IGNORED_DIRS,
        use_gitignore: bool = True,
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)
        self.ignored_dirs = ignored_dirs
        self.use_gitignore = use_gitignore

    @property
    def name(self) -> str:
        """The tool's wire name."""
        return "list_files"

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
                    "description": "The folder to list (default: the working folder).",
                },
                "depth": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_DEPTH,
                    "description": f"How many levels to go down (default {DEFAULT_DEPTH}).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": f"The most entries to return (default {DEFAULT_LIMIT}).",
                },
                "all": {
                    "type": "boolean",
                    "description": "Also enter .git, dependency and build folders (default false).",
                },
            },
            "additionalProperties": False,
        }

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """List the folder."""
        path = get_str("list_files", arguments, "path", ".")
        depth = get_int(
            "list_files", arguments, "depth", DEFAULT_DEPTH, minimum=1, maximum=MAX_DEPTH
        )
        limit = get_int(
            "list_files", arguments, "limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT
        )
        everything = get_bool("list_files", arguments, "all", False)
        io_path = self.sandbox.io_path(path, tool="list_files")
        stop = threading.Event()
        try:
            listing = await anyio.to_thread.run_sync(
                lambda: self._list(path, io_path, depth, limit, everything, stop),
                abandon_on_cancel=True,
            )
        finally:
            stop.set()
        return _answer(path, listing, depth, limit)

    def _list(
        self, shown: str, root: str, depth: int, limit: int, everything: bool, stop: threading.Event
    ) -> _Listing:
        try:
            st = os.stat(root)
        except FileNotFoundError:
            raise ToolError(f"list_files: {shown} does not exist") from None
        except OSError as error:
            raise ToolError(f"list_files: {shown}: {error.strerror or error}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise ToolError(f"list_files: {shown} is not a folder (read it with read_file)")
        ignore = None
        if self.use_gitignore and not everything:
            try:
                fd, _ = open_for_read(
                    "list_files",
                    ".gitignore",
                    os.path.join(root, ".gitignore"),
                    nofollow=self.sandbox.restricted,
                )
                ignore = _GitIgnore(read_all(fd, 256 * 1024).decode("utf-8", "replace"))
            except ToolError:
                ignore = None
        listing = _Listing()
        try:
            entries = _scan(root)
        except OSError as error:
            raise ToolError(f"list_files: cannot read {shown}: {error.strerror or error}") from None
        self._walk(root, "", entries, 1, depth, limit, everything, ignore, listing, stop)
        return listing

    def _walk(
        self,
        folder: str,
        prefix: str,
        entries: list[os.DirEntry[str]],
        level: int,
        depth: int,
        limit: int,
        everything: bool,
        ignore: _GitIgnore | None,
        listing: _Listing,
        stop: threading.Event,
    ) -> None:
        for entry in entries:
            if stop.is_set():
                return
            if len(listing.entries) >= limit:
                listing.truncated = True
                return
            rel = prefix + entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                is_link = is_dir = False
            if is_link:
                listing.entries.append(rel + "@")
                continue
            if not is_dir:
                if ignore is not None and ignore.ignores(rel, entry.name, False):
                    continue
                listing.entries.append(rel)
                continue
            skipped = not everything and (
                is_ignored_dir(entry.name, self.ignored_dirs)
                or (ignore is not None and ignore.ignores(rel, entry.name, True))
            )
            if skipped:
                listing.entries.append(rel + "/ (skipped)")
                continue
            listing.entries.append(rel + "/")
            if level >= depth:
                continue
            try:
                children = _scan(os.path.join(folder, entry.name))
            except OSError as error:
                listing.warn(f"cannot read {rel}/: {error.strerror or error}")
                continue
            self._walk(
                os.path.join(folder, entry.name),
                rel + "/",
                children,
                level + 1,
                depth,
                limit,
                everything,
                ignore,
                listing,
                stop,
            )


def _scan(folder: str) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as iterator:
        return sorted(iterator, key=lambda entry: entry.name)


def _answer(shown: str, listing: _Listing, depth: int, limit: int) -> ToolResult:
    lines = list(listing.entries) if listing.entries else [f"({shown} is empty)"]
    if listing.truncated:
        lines.append(
            f"[Listing cut at {limit} entries: list a subfolder, or raise `limit`/lower `depth`.]"
        )
    warnings_text = None
    if listing.warning_count:
        extra = listing.warning_count - len(listing.warnings)
        items = [f"- {text}" for text in listing.warnings]
        if extra:
            items.append(f"- ... and {extra} more")
        warnings_text = "\n".join(items)
        lines.append("Warnings (the listing is incomplete):\n" + warnings_text)
    return ToolResult.from_text(
        "\n".join(lines),
        {
            "path": shown,
            "entries": len(listing.entries),
            "depth": depth,
            "truncated": listing.truncated,
            "warnings": warnings_text,
        },
    )
