"""A folder tree walked through held directory descriptors, never by path.

``list_files`` and the Python search engine walk with :class:`FdWalk`: every folder is
opened relative to its parent's descriptor with ``O_NOFOLLOW`` and listed from its own
descriptor, and every file is opened relative to its folder's descriptor. A folder
swapped for a symlink while the walk runs is therefore never followed (its open fails
and is reported), which closes the read escape a check-then-walk by path leaves open.

The walk is iterative (no recursion limit) and holds one descriptor per level, so its
depth is capped (``max_depth``); deeper folders are reported, not entered.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from ._fs import open_dir_nofollow

_DIR_OPEN: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_OPEN: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def open_walk_root(path: str, *, nofollow: bool) -> int:
    """A descriptor of the folder to walk.

    ``nofollow`` (a sandboxed, resolved path): every component is opened without
    following symlinks. Otherwise the caller's spelling is opened as the OS resolves it.
    """
    if nofollow:
        return open_dir_nofollow(path)
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_file_in(folder_fd: int, name: str) -> int:
    """A regular file in a walked folder, opened without following a symlink or blocking.

    Raises :class:`OSError` (``ELOOP`` for a symlink, ``EINVAL`` for a non-regular file).
    """
    fd = os.open(name, _FILE_OPEN, dir_fd=folder_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass(slots=True, frozen=True)
class Entry:
    """One name met by the walk. ``folder_fd`` is valid only during the visit."""

    rel: str  # path from the walked folder, "/"-separated (OS names: surrogateescape)
    name: str
    depth: int  # 1 for the walked folder's own entries
    kind: str  # "dir", "file", "link" or "other"
    folder_fd: int


@dataclass(slots=True)
class _Frame:
    fd: int
    rel: str  # "" or ending in "/"
    depth: int
    names: list[tuple[str, str]]  # (name, kind), sorted
    index: int = 0
    marker: object = None  # what the visitor's enter hook returned, handed back on leave


@dataclass(slots=True)
class FdWalk:
    """A depth-first walk in name order from a held folder descriptor.

    ``visit(entry)`` is called for every entry; for a folder it returns whether to enter
    it. ``enter(fd, rel)`` runs when a folder (also the root, with ``rel=""``) is
    entered and may return a marker handed to ``leave(marker)`` when it is left (used
    to push and pop ``.gitignore`` rules). ``stop()`` is polled before each entry.
    Folders that cannot be opened or read, and folders deeper than ``max_depth``, are
    collected in ``problems``.
    """

    max_depth: int
    stop: Callable[[], bool]
    enter: Callable[[int, str], object] = lambda fd, rel: None
    leave: Callable[[object], None] = lambda marker: None
    problems: list[str] = field(default_factory=list[str])

    def run(self, root_fd: int, visit: Callable[[Entry], bool]) -> None:
        """Walk the folder open as ``root_fd`` (closed by the walk)."""
        stack: list[_Frame] = []
        try:
            names = _list(root_fd)
        except OSError:
            os.close(root_fd)
            raise
        stack.append(_Frame(root_fd, "", 1, names, marker=self.enter(root_fd, "")))
        try:
            while stack:
                frame = stack[-1]
                if frame.index >= len(frame.names) or self.stop():
                    stack.pop()
                    os.close(frame.fd)
                    self.leave(frame.marker)
                    if self.stop():
                        break
                    continue
                name, kind = frame.names[frame.index]
                frame.index += 1
                rel = frame.rel + name
                entry = Entry(rel, name, frame.depth, kind, frame.fd)
                if not visit(entry) or kind != "dir":
                    continue
                if frame.depth >= self.max_depth:
                    self.problems.append(
                        f"{rel}/: deeper than {self.max_depth} folders; not entered"
                    )
                    continue
                child = self._open_child(frame.fd, name, rel)
                if child is not None:
                    fd, names = child
                    marker = self.enter(fd, rel + "/")
                    stack.append(_Frame(fd, rel + "/", frame.depth + 1, names, marker=marker))
        finally:
            for frame in stack:
                os.close(frame.fd)

    def _open_child(
        self, parent: int, name: str, rel: str
    ) -> tuple[int, list[tuple[str, str]]] | None:
        try:
            fd = os.open(name, _DIR_OPEN, dir_fd=parent)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                self.problems.append(f"{rel}/: replaced by a symbolic link or file during the walk")
            else:
                self.problems.append(f"{rel}/: {error.strerror or error}")
            return None
        try:
            return fd, _list(fd)
        except OSError as error:
            os.close(fd)
            self.problems.append(f"{rel}/: {error.strerror or error}")
            return None


def _list(fd: int) -> list[tuple[str, str]]:
    """The names in the folder open as ``fd``, sorted, each with its kind (no symlink followed)."""
    found: list[tuple[str, str]] = []
    with os.scandir(fd) as iterator:
        for entry in iterator:
            try:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
            except OSError:
                kind = "other"
            found.append((entry.name, kind))
    found.sort()
    return found
