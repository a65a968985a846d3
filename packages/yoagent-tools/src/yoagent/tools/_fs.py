"""File-system helpers shared by the file tools: safe opening, atomic writes, text codecs.

When the sandbox is restricted, files are opened by walking the resolved path one
component at a time from ``/`` with ``O_NOFOLLOW`` (``openat`` through directory
file descriptors). The resolved path has no symlink in it, so a symlink met on the
way means something was swapped after the check: the open fails instead of
following it out of the allowed folders.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import Final

from yoagent.core import ToolError
from yoagent.core.support import atomic_write

_DIR_FLAGS: Final = os.O_DIRECTORY | getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC
_NOFOLLOW: Final = os.O_NOFOLLOW

IGNORED_DIRS: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "target",
        "dist",
        "build",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".next",
        ".gradle",
        ".idea",
        "*.egg-info",
    }
)
"""Folders that ``list_files`` and the ``search`` fallback skip by default."""


def is_ignored_dir(name: str, ignored: frozenset[str] = IGNORED_DIRS) -> bool:
    """Whether a folder name is one of the skipped ones (``*.egg-info`` by suffix)."""
    return name in ignored or ("*.egg-info" in ignored and name.endswith(".egg-info"))


def kind_of(mode: int) -> str:
    """A person's name for a file type."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def describe_os_error(tool: str, shown: str, error: OSError, *, checked: bool) -> ToolError:
    """A ToolError naming the path and what the OS said.

    ``checked``: the path was resolved by the sandbox, so a symlink met now was
    swapped in after the check.
    """
    if checked and error.errno == errno.ELOOP:
        return ToolError(
            f"{tool}: {shown}: a symbolic link appeared in the path after it was checked; refused"
        )
    reason = error.strerror or str(error)
    return ToolError(f"{tool}: {shown}: {reason}")


def require_regular_file(tool: str, shown: str, st: os.stat_result) -> None:
    """Refuse anything but a regular file (FIFO, device, socket, directory)."""
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{tool}: {shown} is {kind_of(st.st_mode)}, not a regular file; refused")


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def _open_parent_nofollow(path: str, *, create: bool) -> tuple[int, str]:
    """Open the folder holding ``path`` (absolute, resolved) without following symlinks.

    Returns the folder's descriptor and the final name. With ``create``, missing
    folders are made on the way (each with ``mkdir`` relative to its parent's fd).
    """
    parts = _split(path)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "is the root folder")
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                next_fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except NotADirectoryError:
                # O_DIRECTORY | O_NOFOLLOW on a symlink says ENOTDIR: say what it is
                if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "symbolic link in the path") from None
                raise
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                next_fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def open_dir_nofollow(path: str) -> int:
    """A readable descriptor of the folder ``path`` (absolute, resolved), no symlink followed.

    Raises :class:`OSError`; ``ELOOP`` when a symlink was met on the way.
    """
    if not _split(path):
        return os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    parent, name = _open_parent_nofollow(path, create=False)
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | _NOFOLLOW, dir_fd=parent)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, "symbolic link in the path") from None
        raise
    finally:
        os.close(parent)


def open_for_read(
    tool: str, shown: str, path: str, *, nofollow: bool
) -> tuple[int, os.stat_result]:
    """Open a regular file for reading; refuse anything else without ever blocking.

    The file is checked with ``stat`` (following symlinks) before it is opened, opened
    with ``O_NONBLOCK`` (so a FIFO swapped in cannot block), then checked again with
    ``fstat``. With ``nofollow`` the path (already resolved) is walked without
    following any symlink.
    """
    try:
        if nofollow:
            parent, name = _open_parent_nofollow(path, create=False)
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise OSError(errno.ELOOP, "symbolic link")
                require_regular_file(tool, shown, st)
                fd = os.open(
                    name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | _NOFOLLOW, dir_fd=parent
                )
            finally:
                os.close(parent)
        else:
            st = os.stat(path)
            require_regular_file(tool, shown, st)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ToolError(f"{tool}: {shown} does not exist") from None
    except NotADirectoryError:
        raise ToolError(f"{tool}: {shown}: a parent in the path is not a folder") from None
    except OSError as error:
        raise describe_os_error(tool, shown, error, checked=nofollow) from None
    try:
        fst = os.fstat(fd)
        require_regular_file(tool, shown, fst)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, fst


def read_all(fd: int, limit: int | None = None) -> bytes:
    """Read a descriptor to its end (or ``limit`` bytes) and close it."""
    chunks: list[bytes] = []
    size = 0
    try:
        while limit is None or size < limit:
            want = 1 << 20 if limit is None else min(1 << 20, limit - size)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


@dataclass(slots=True, frozen=True)
class WriteOutcome:
    """What an atomic write did."""

    created: bool
    size: int


def sandboxed_write(
    tool: str, shown: str, path: str, data: bytes, *, nofollow: bool, create_parents: bool = True
) -> WriteOutcome:
    """Replace (or create) the file at ``path`` with ``data``, atomically, or raise a ToolError.

    The folder is opened first (with ``nofollow``, by the walk that refuses a symlink
    swapped in after the check), and the write is the floor's
    :func:`~yoagent.core.support.atomic_write` inside it: a crash leaves the old file or
    the new one, never half a file, and the replaced file's owner, group, mode bits and
    extended attributes are carried over. An existing target must be a regular file.
    ``path`` must be the final target (symlinks already resolved by the caller).
    """
    try:
        if nofollow:
            parent, name = _open_parent_nofollow(path, create=create_parents)
        else:
            folder, name = os.path.split(path)
            folder = folder or "."
            if create_parents:
                os.makedirs(folder, exist_ok=True)
            parent = os.open(folder, _DIR_FLAGS)
    except FileNotFoundError:
        raise ToolError(f"{tool}: the folder for {shown} does not exist") from None
    except NotADirectoryError:
        raise ToolError(f"{tool}: {shown}: a parent in the path is not a folder") from None
    except FileExistsError:
        raise ToolError(f"{tool}: {shown}: a parent in the path is not a folder") from None
    except OSError as error:
        raise describe_os_error(tool, shown, error, checked=nofollow) from None
    try:
        return _write_in(tool, shown, parent, name, data, nofollow=nofollow)
    finally:
        os.close(parent)


def _write_in(
    tool: str, shown: str, parent: int, name: str, data: bytes, *, nofollow: bool
) -> WriteOutcome:
    try:
        existing = os.stat(name, dir_fd=parent, follow_symlinks=not nofollow)
    except FileNotFoundError:
        existing = None
    except OSError as error:
        raise describe_os_error(tool, shown, error, checked=nofollow) from None
    if existing is not None:
        if nofollow and stat.S_ISLNK(existing.st_mode):
            raise describe_os_error(
                tool, shown, OSError(errno.ELOOP, "symbolic link"), checked=True
            )
        require_regular_file(tool, shown, existing)
    try:
        created = atomic_write(name, data, dir_fd=parent)
    except OSError as error:
        raise describe_os_error(tool, shown, error, checked=nofollow) from None
    return WriteOutcome(created=created, size=len(data))


class _PathLock:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


_path_locks: dict[str, _PathLock] = {}
_path_locks_guard = threading.Lock()


@contextlib.contextmanager
def write_lock(path: str) -> Generator[None]:
    """Hold the process-wide lock of ``path`` (resolved): one read-modify-write at a time.

    Without it, two ``edit_file`` calls on one file both read the old content and the
    second rename silently drops the first edit. Locks are made on demand and dropped
    when nobody holds or waits for them.
    """
    with _path_locks_guard:
        entry = _path_locks.get(path)
        if entry is None:
            entry = _path_locks[path] = _PathLock()
        entry.users += 1
    try:
        with entry.lock:
            yield
    finally:
        with _path_locks_guard:
            entry.users -= 1
            if entry.users == 0:
                del _path_locks[path]


# -- text -----------------------------------------------------------------------

UTF8_BOM: Final = b"\xef\xbb\xbf"


@dataclass(slots=True, frozen=True)
class Decoded:
    """Text decoded from bytes, and how to encode it back byte for byte."""

    text: str
    encoding: str  # "utf-8", "utf-8-sig" or "latin-1"

    def encode(self, text: str) -> bytes:
        """Encode ``text`` the way the original was encoded."""
        if self.encoding == "utf-8-sig":
            return UTF8_BOM + text.encode("utf-8")
        return text.encode(self.encoding)


def decode_text(data: bytes) -> Decoded:
    """UTF-8 (with or without BOM), else latin-1 (which round-trips every byte)."""
    if data.startswith(UTF8_BOM):
        try:
            return Decoded(data[len(UTF8_BOM) :].decode("utf-8"), "utf-8-sig")
        except UnicodeDecodeError:
            return Decoded(data.decode("latin-1"), "latin-1")
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return Decoded(data.decode("latin-1"), "latin-1")


def looks_binary(sample: bytes) -> bool:
    """A NUL byte in the first 8 KiB marks a binary file (as git and ripgrep do)."""
    return b"\0" in sample[:8192]


IMAGE_TYPES: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP file, from its first bytes."""
    for magic, mime in IMAGE_TYPES:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None
