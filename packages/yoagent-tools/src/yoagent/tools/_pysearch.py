"""The pure-Python search engine: ripgrep's walk and skip rules, RE2, files streamed.

* The tree is walked through held folder descriptors (:mod:`._walk`), so a folder
  swapped for a symlink mid-walk is never followed; iterative, depth-capped.
* It skips what ripgrep skips, in ripgrep's order: ``glob`` overrides first (a
  matching glob includes even an ignored or hidden path), then ``.gitignore`` rules
  (a ``!`` re-include also un-hides), then hidden names; binary files (a NUL byte in
  the first 8 KiB) are skipped.
* Files are read in 1 MiB chunks and searched a buffer of whole lines at a time with
  RE2 (:mod:`._regex`), linear in the file's size. Memory is bounded: a line longer
  than :data:`MAX_LINE_BYTES` is searched in windows of that size overlapping by
  :data:`WINDOW_OVERLAP` bytes, so in such a line (minified code, data dumps) a match
  longer than the overlap can be missed; nothing else is ever held whole.
* The stop flag and the deadline are checked after every chunk, and RE2 releases the
  GIL, so a timeout or a cancel ends the search within one chunk's work.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Sequence
from typing import Final

from yoagent.core import ToolError

from ._found import MAX_LINE_BYTES as SHOWN_LINE_BYTES
from ._found import Found, show_line
from ._fs import open_for_read
from ._ignore import GitIgnores, GlobFilter
from ._regex import LineMatcher
from ._text import visible_name
from ._walk import Entry, FdWalk, open_file_in, open_walk_root

CHUNK_BYTES: Final = 1 << 20
MAX_LINE_BYTES: Final = 4 << 20
WINDOW_OVERLAP: Final = 64 << 10
MAX_WALK_DEPTH: Final = 100
"""Folders deeper than this below the searched one are reported, not searched."""
BINARY_SNIFF: Final = 8192
MAX_PROBLEMS: Final = 20


class PythonSearch:
    """One search: walk ``root`` (a folder or a file), collect up to ``max_results`` lines."""

    def __init__(
        self,
        matcher: LineMatcher,
        *,
        globs: Sequence[str],
        max_results: int,
        use_gitignore: bool,
        stop: threading.Event,
        deadline: float,
    ) -> None:
        self.matcher = matcher
        self.globs = list(globs)  # compiled by run(), in the worker thread
        self.max_results = max_results
        self.use_gitignore = use_gitignore
        self.stop = stop
        self.deadline = deadline
        self.found = Found()
        self.problems: list[str] = []

    def run(self, shown: str, root: str, *, nofollow: bool) -> Found:
        """Search ``root`` (checked by the sandbox; ``nofollow`` when it was resolved).

        ``shown`` is how the path is named in results and errors: the caller's spelling
        already passed through :func:`visible_name`.
        """
        try:
            st = os.stat(root)
        except OSError as error:
            raise ToolError(f"search: {shown}: {error.strerror or error}") from None
        if stat.S_ISDIR(st.st_mode):
            self._walk(shown, root, GlobFilter(self.globs), nofollow=nofollow)
        elif stat.S_ISREG(st.st_mode):
            fd, _ = open_for_read("search", shown, root, nofollow=nofollow)
            self._search_fd(fd, shown)
        else:
            raise ToolError(f"search: {shown} is not a regular file or folder")
        if self.problems:
            extra = len(self.problems) - MAX_PROBLEMS
            shown_problems = self.problems[:MAX_PROBLEMS]
            if extra > 0:
                shown_problems.append(f"... and {extra} more")
            self.found.warnings = "\n".join(map(visible_name, shown_problems))
        return self.found

    def done(self) -> bool:
        """Whether to stop: cancelled, timed out (recorded as a failure) or enough found."""
        if self.stop.is_set():
            return True
        if time.monotonic() > self.deadline:
            if self.found.failure is None:
                self.found.failure = "the search timed out"
            return True
        return self.found.truncated

    # -- the walk ---------------------------------------------------------------

    def _walk(self, shown: str, root: str, globs: GlobFilter, *, nofollow: bool) -> None:
        try:
            root_fd = open_walk_root(root, nofollow=nofollow)
        except OSError as error:
            raise ToolError(f"search: cannot read {shown}: {error.strerror or error}") from None
        gitignores = (
            GitIgnores.for_walk(root, nofollow=nofollow)
            if self.use_gitignore
            else GitIgnores.disabled()
        )
        prefix = "" if shown in (".", "./") else shown.rstrip("/") + "/"

        def visit(entry: Entry) -> bool:
            if entry.kind not in ("dir", "file"):
                return False  # symlinks are never followed; devices, FIFOs never read
            is_dir = entry.kind == "dir"
            verdict = globs.decide(entry.rel, is_dir)
            if verdict is False:
                return False
            if verdict is None:
                ignored = gitignores.decide(entry.rel, is_dir)
                if ignored is True or (ignored is None and entry.name.startswith(".")):
                    return False
            if is_dir:
                return True
            self._search_in(entry.folder_fd, entry.name, prefix + entry.rel)
            return False

        walk = FdWalk(
            max_depth=MAX_WALK_DEPTH,
            stop=self.done,
            enter=gitignores.enter,
            leave=gitignores.leave,
        )
        try:
            walk.run(root_fd, visit)
        except OSError as error:
            raise ToolError(f"search: cannot read {shown}: {error.strerror or error}") from None
        self.problems += [f"{prefix}{problem}" for problem in walk.problems]
        self.found.notes += [visible_name(f"{prefix}{note}") for note in gitignores.notes]

    def _search_in(self, folder_fd: int, name: str, shown: str) -> None:
        try:
            fd = open_file_in(folder_fd, name)
        except OSError as error:
            self.problems.append(f"{shown}: {error.strerror or error}")
            return
        self._search_fd(fd, shown)

    # -- one file -----------------------------------------------------------------

    def _search_fd(self, fd: int, shown: str) -> None:
        try:
            _FileScan(self, visible_name(shown)).run(fd)
        except OSError as error:
            self.problems.append(f"{shown}: {error.strerror or error}")
        finally:
            os.close(fd)

    def emit(self, shown: str, number: int, text: bytes) -> bool:
        """Record one matching line; ``False`` once ``max_results`` lines are already held."""
        if len(self.found.lines) >= self.max_results:
            self.found.truncated = True
            return False
        self.found.lines.append(f"{shown}:{number}:{show_line(text)}")
        return True


class _FileScan:
    """One file read chunk by chunk; each buffer of whole lines searched in one call."""

    def __init__(self, search: PythonSearch, shown: str) -> None:
        self.search = search
        self.find = search.matcher.find
        self.shown = shown
        self.line = 1  # the number of the line that starts the buffer
        self.mid_line = False  # the buffer starts inside a long line already partly searched
        self.long_head = b""  # the start of that long line (what is shown if it matches)
        self.long_matched = False  # that long line has matched already

    def run(self, fd: int) -> None:
        buffer = os.read(fd, CHUNK_BYTES)
        if b"\0" in buffer[:BINARY_SNIFF]:
            return  # binary, as ripgrep decides
        while True:
            if self.search.done():
                return
            chunk = os.read(fd, CHUNK_BYTES)
            if not chunk:
                if buffer:
                    self._lines(buffer, len(buffer))  # a last line without a newline
                return
            buffer += chunk
            last = buffer.rfind(b"\n")
            if last >= 0:
                if not self._lines(buffer, last + 1):
                    return
                buffer = buffer[last + 1 :]
            elif len(buffer) >= MAX_LINE_BYTES:
                if not self._window(buffer):
                    return
                buffer = buffer[-WINDOW_OVERLAP:]

    def _lines(self, buffer: bytes, end: int) -> bool:
        """Search ``buffer[:end]`` (whole lines, the last one ends at ``end``)."""
        start = 0
        counted = 0  # newlines before ``counted`` are already in self.line
        if self.mid_line:
            first_end = buffer.find(b"\n", 0, end)
            if self.long_matched:
                start = counted = first_end + 1 if first_end >= 0 else end
                self.line += 1 if first_end >= 0 else 0
            else:
                start = 1  # the first byte is context: `^` cannot match inside the line
        ok = True
        while start < end:
            at = self.find(buffer, start, end)
            if at is None:
                break
            line_start = buffer.rfind(b"\n", 0, at) + 1
            line_end = buffer.find(b"\n", at, end)
            line_end = end if line_end < 0 else line_end
            self.line += buffer.count(b"\n", counted, line_start)
            counted = line_start
            if self.mid_line and line_start == 0:
                text = self.long_head
            else:
                text = buffer[line_start : min(line_end, line_start + SHOWN_LINE_BYTES + 2)]
            if not self.search.emit(self.shown, self.line, text):
                ok = False
                break
            start = line_end + 1
        self.line += buffer.count(b"\n", counted, end)
        self.mid_line = False
        self.long_matched = False
        self.long_head = b""
        return ok

    def _window(self, buffer: bytes) -> bool:
        """Search a window of one long line (no newline in ``buffer``)."""
        if not self.mid_line:
            self.long_head = buffer[: SHOWN_LINE_BYTES + 2]
        ok = True
        if not self.long_matched:
            # the last byte is context, searched again at the start of the next window
            at = self.find(buffer, 1 if self.mid_line else 0, len(buffer) - 1)
            if at is not None:
                self.long_matched = True
                ok = self.search.emit(self.shown, self.line, self.long_head)
        self.mid_line = True
        return ok
