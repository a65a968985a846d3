"""Reading a file the agent is about to change (for a preview or an undo snapshot) safely.

A project can hold things that are not files under a file's name: a FIFO (opening it waits
for a writer that never comes), a symlink to ``/dev/zero`` (it reports size 0 and reads
without end), a device. The path is first resolved by the file tools' own
:class:`~yoagent.tools.PathSandbox`, and what lies outside it is never read (the tool will
refuse the call anyway). Then it is opened with ``O_NONBLOCK`` (a FIFO cannot block the
open) and ``O_NOFOLLOW`` (a symlink swapped in after the resolution is refused), the open
descriptor must be a regular file, and at most ``limit + 1`` bytes are read. Callers run
this in a worker thread their cancellation abandons, so even a read that stalls (a hung
network mount) leaves the event loop and its signal handlers running.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

from yoagent.tools import PathSandbox, SandboxError

from ._errors import CliError

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_CHUNK = 1024 * 1024

_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class Unreadable(CliError, OSError):
    """A file that is not read: ``str(error)`` is ``shown`` and the ``reason`` (``data is
    a FIFO, not a regular file``)."""

    def __init__(self, shown: str, reason: str) -> None:
        super().__init__(shown, reason)
        self.shown = shown
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.shown} {self.reason}"


def kind_of(mode: int) -> str:
    """What a file that is not regular is, in words (``a FIFO``)."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def resolve_inside(sandbox: PathSandbox, shown: str) -> str:
    """``shown`` (a tool's ``path`` argument) resolved as the file tools resolve it.

    Raises :class:`Unreadable` saying where it leads when that is outside ``sandbox``, or
    why it cannot be resolved.
    """
    try:
        resolved = sandbox.resolve(shown)
    except SandboxError as error:
        raise Unreadable(shown, f"cannot be resolved ({error})") from None
    if not sandbox.contains(resolved):
        via = "is" if resolved == shown else f"resolves to {resolved},"
        raise Unreadable(shown, f"{via} outside the allowed paths")
    return resolved


def read_regular(path: str, limit: int, shown: str) -> bytes | None:
    """The bytes of the regular file at the resolved ``path``; ``None`` when there is none.

    Raises :class:`Unreadable` (naming it ``shown``) when it is something else, larger than
    ``limit`` bytes, or cannot be read. Never blocks on a FIFO or device and never reads
    more than ``limit + 1`` bytes.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW met a link the resolution did not see
            raise Unreadable(shown, "became a symbolic link") from None
        raise Unreadable(shown, f"cannot be read ({error.strerror or error})") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise Unreadable(shown, f"is {kind_of(status.st_mode)}, not a regular file")
        too_large = Unreadable(shown, f"is larger than {_size(limit)}")
        if status.st_size > limit:
            raise too_large
        chunks: list[bytes] = []
        total = 0
        while total <= limit:  # it may have grown since fstat: read no more than this
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise too_large
        return b"".join(chunks)
    except Unreadable:
        raise
    except OSError as error:
        raise Unreadable(shown, f"cannot be read ({error.strerror or error})") from None
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    mb = limit / (1024 * 1024)
    return f"{mb:g} MB" if mb >= 1 else f"{limit} bytes"
