"""``atomic_write``: replace a file in one step, so a crash leaves the old file or the new one.

The bytes go to a fresh hidden file beside the target (a unique name, created exclusively
and never through a link), are flushed to disk, take the replaced file's owner, group,
mode bits and extended attributes, and are renamed over the target; the rename is then
flushed too (``fsync`` of the folder). A failure at any step removes the temporary file
and leaves the target as it was. A process killed before the rename leaves the old file
whole, and at most a hidden ``*.yoagent-tmp`` file beside it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from typing import Final

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CREATE_FLAGS: Final = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW | getattr(os, "O_BINARY", 0)
)
_FOLDER_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_TEMP_STEM_BYTES: Final = 100
TEMP_SUFFIX: Final = ".yoagent-tmp"
"""How the name of a temporary file of :func:`atomic_write` ends."""


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    encoding: str = "utf-8",
    mode: int | None = None,
    dir_fd: int | None = None,
) -> bool:
    """Replace (or create) the file at ``path`` with ``data`` in one step; return whether
    the file was created (nothing was at ``path`` before).

    ``data`` is written as it is; text is encoded with ``encoding`` first (an error raises
    before anything is written). An existing regular file keeps its owner and group (as
    far as this process may set them), its mode bits and its extended attributes. A new
    file gets ``mode`` exactly when it is given, else ``0o666`` less the umask.

    A symbolic link at ``path`` is replaced by the new file: the file it points to is not
    written (resolve the path first to write through a link). A directory at ``path``
    raises :class:`IsADirectoryError`. The folder must exist. With ``dir_fd``, ``path`` is
    relative to that open folder, as in :func:`os.open`.

    Blocking (it waits for the disk): from async code, run it in a worker thread
    (``anyio.to_thread.run_sync``).
    """
    payload = data.encode(encoding) if isinstance(data, str) else data
    name = os.fspath(path)
    folder, base = os.path.split(name)
    if not base:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    existing = _lstat(name, dir_fd)
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    temporary = os.path.join(folder, temp_name(base))
    fd = os.open(temporary, _CREATE_FLAGS, 0o666, dir_fd=dir_fd)
    try:
        try:
            if existing is not None and stat.S_ISREG(existing.st_mode):
                _copy_metadata(fd, name, existing, dir_fd)
            elif mode is not None:
                _chmod(fd, mode)
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        _replace(temporary, name, dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise
    _sync_folder(folder, dir_fd)
    return existing is None


def temp_name(name: str) -> str:
    """A fresh hidden name beside ``name`` for the temporary file of an atomic write.

    The stem is cut by *bytes* (a name may be 255 bytes of 4-byte characters), so the
    temporary name stays under the usual 255-byte limit whatever ``name`` is.
    """
    stem = os.fsencode(name)[:_TEMP_STEM_BYTES]
    return f".{os.fsdecode(stem)}.{secrets.token_hex(6)}{TEMP_SUFFIX}"


def _lstat(name: str, dir_fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _replace(temporary: str, name: str, dir_fd: int | None) -> None:
    if dir_fd is None:
        os.replace(temporary, name)
    else:
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _copy_metadata(fd: int, name: str, existing: os.stat_result, dir_fd: int | None) -> None:
    """Give the new file (``fd``) the replaced file's owner, group, mode bits and xattrs.

    Owner and group first (``chown`` clears set-id bits), then the mode, then extended
    attributes (ACLs and capabilities among them, which a mode change could reset). What
    the OS does not allow this process (giving a file away, some ``security.*``
    attributes) is left as the new file has it; the write goes on.
    """
    if hasattr(os, "fchown"):
        try:
            os.fchown(fd, existing.st_uid, existing.st_gid)
        except OSError:
            with contextlib.suppress(OSError):
                os.fchown(fd, -1, existing.st_gid)  # a member of the group may still set it
    _chmod(fd, stat.S_IMODE(existing.st_mode))
    if not hasattr(os, "listxattr"):
        return
    try:
        source = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | _NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return
    try:
        try:
            names = os.listxattr(source)
        except OSError:
            names = []
        for attribute in names:
            with contextlib.suppress(OSError):
                os.setxattr(fd, attribute, os.getxattr(source, attribute))
    finally:
        os.close(source)


def _chmod(fd: int, mode: int) -> None:
    # Where a descriptor's mode cannot be set (Windows before Python 3.13) a file has no
    # mode bits beyond read-only to carry over.
    if os.chmod in os.supports_fd:
        os.chmod(fd, mode)


def _sync_folder(folder: str, dir_fd: int | None) -> None:
    """Flush the rename to disk (best effort: not every system can sync a folder)."""
    try:
        fd = os.open(folder or ".", _FOLDER_FLAGS, dir_fd=dir_fd)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
