"""The single-writer lease, ``.agent/lease``: who may append to the log right now.

The file holds ``{worker_id, pid, expires_at_ms, host}``. Taking it is an atomic
exclusive create; the same worker renews it in place (write a temporary file, rename);
another worker's lease can be taken only once it has expired — or, on the same host,
once the process that held it is gone (a crashed writer must not lock the repository for
the rest of the lease). A lease file that cannot be read or parsed is an error, never
stolen: without proof of exclusivity nobody writes.

Every change of the file — create, renew, take over, release — is a read-decide-write
made under an exclusive ``flock`` on the ``.agent/`` folder, so two workers can never
both act on what they read: no third worker slips into a takeover, and a renewal cannot
overwrite the lease that replaced it. A takeover replaces the file in one rename (it is
never absent meanwhile), so even a writer that does not take the lock — another GASP
runtime creating it exclusively — cannot get in. The lock lasts one decision, never a
run, and dies with its process. Where ``fcntl`` is missing (Windows) the changes are not
locked.

The lease is a file of the repository itself: the ``.agent/`` folder is opened without
following a symbolic link (a cloned repository could commit one pointing anywhere), and
the file is created, read, replaced and removed relative to that open folder, never
through a link.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yoagent.core.support import atomic_write

from ._errors import GaspError
from .envelope import now_ms

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: lease changes are not locked
    fcntl = None

LEASE_PATH = ".agent/lease"
_LEASE_NAME = "lease"
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_FOLLOW | _CLOEXEC
DEFAULT_TTL = 600.0
"""Seconds a lease lasts without renewal."""


class LeaseError(GaspError, RuntimeError):
    """The lease could not be taken."""


class LeaseHeldError(LeaseError):
    """Another live worker holds the lease."""


class LeaseCorruptError(LeaseError):
    """The lease file cannot be read as a lease; inspect or remove it by hand."""


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """What a lease file says."""

    worker_id: str
    pid: int
    expires_at_ms: int
    host: str | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "worker_id": self.worker_id,
            "pid": self.pid,
            "expires_at_ms": self.expires_at_ms,
        }
        if self.host is not None:
            record["host"] = self.host
        return record

    def describe(self) -> str:
        """For error messages."""
        where = f" on {self.host}" if self.host else ""
        return f"worker `{self.worker_id}` (pid {self.pid}{where}) until {self.expires_at_ms}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists (owned by someone else), or we cannot tell: assume alive
    return True


class Lease:
    """One worker's handle on a repository's lease file."""

    def __init__(self, root: str | Path, worker_id: str, ttl: float = DEFAULT_TTL) -> None:
        if not worker_id.strip():
            raise ValueError("worker_id must not be empty")
        if ttl <= 0:
            raise ValueError("the lease ttl must be positive")
        self.path = Path(root) / LEASE_PATH
        self.worker_id = worker_id
        self.ttl_ms = int(ttl * 1000)
        self._host = socket.gethostname()
        self._expires_at_ms = 0

    def read(self) -> LeaseRecord | None:
        """The lease on file, or ``None`` when there is none."""
        return read_lease(self.path)

    def _fresh(self) -> LeaseRecord:
        return LeaseRecord(self.worker_id, os.getpid(), now_ms() + self.ttl_ms, self._host)

    def _is_stale(self, record: LeaseRecord) -> bool:
        if record.expires_at_ms <= now_ms():
            return True
        same_host = record.host == self._host and record.pid != os.getpid()
        return same_host and not _pid_alive(record.pid)

    def acquire(self) -> None:
        """Take the lease, or renew it when this worker holds it and half its time is gone.

        Raises :class:`LeaseHeldError` when another live worker holds it and
        :class:`LeaseCorruptError` when the file is not a lease.
        """
        if self._expires_at_ms - now_ms() > self.ttl_ms // 2 and self._still_ours():
            return
        with contextlib.suppress(FileExistsError):  # a link there is refused as it is opened
            self.path.parent.mkdir(parents=True)
        with _locked(self.path.parent) as folder:
            name = self._name(folder)
            existing = _read(name, folder, self.path)
            if (
                existing is not None
                and existing.worker_id != self.worker_id
                and not self._is_stale(existing)
            ):
                raise LeaseHeldError(f"the lease is held by {existing.describe()}")
            record = self._fresh()
            payload = json.dumps(record.to_json()).encode()
            if existing is None:
                self._create(name, folder, payload)
            else:  # a renewal, or a takeover of a stale lease
                atomic_write(name, payload, dir_fd=folder)
            self._expires_at_ms = record.expires_at_ms

    def _name(self, folder: int | None) -> str:
        """The lease file's name relative to the open folder (its path without one)."""
        return _LEASE_NAME if folder is not None else str(self.path)

    def _still_ours(self) -> bool:
        record = self.read()
        return record is not None and record.worker_id == self.worker_id

    def _create(self, name: str, folder: int | None, payload: bytes) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC
        try:
            descriptor = os.open(name, flags, 0o644, dir_fd=folder)
        except FileExistsError:
            # created since we looked, by a writer that does not take the lock
            holder = _read(name, folder, self.path)
            held = holder.describe() if holder is not None else "another writer"
            raise LeaseHeldError(f"the lease is held by {held}") from None
        try:
            os.write(descriptor, payload)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def release(self) -> None:
        """Give the lease up if this worker holds it (a corrupt file is an error)."""
        self._expires_at_ms = 0
        if not self.path.parent.is_dir():
            return
        with _locked(self.path.parent) as folder:
            name = self._name(folder)
            record = _read(name, folder, self.path)
            if record is not None and record.worker_id == self.worker_id:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=folder)


@contextmanager
def _locked(folder: Path) -> Generator[int | None]:
    """Hold an exclusive ``flock`` on ``folder``, opened without following a link; yields
    its descriptor (``None`` where there is no ``fcntl``: Windows). Closing it unlocks."""
    if fcntl is None:  # pragma: no cover - Windows
        if folder.is_symlink():
            raise _linked(folder)
        yield None
        return
    try:
        descriptor = os.open(folder, _FOLDER_FLAGS)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and folder.is_symlink():
            raise _linked(folder) from None
        raise
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield descriptor
    finally:
        os.close(descriptor)


def _linked(folder: Path) -> LeaseError:
    return LeaseError(
        f"{folder} is a symbolic link; the lease must be a file of the repository itself "
        "(through the link it would be created, locked and removed elsewhere)"
    )


def read_lease(path: Path) -> LeaseRecord | None:
    """Parse a lease file; ``None`` when absent, :class:`LeaseCorruptError` when it is
    unreadable or a symbolic link."""
    return _read(str(path), None, path)


def _read(name: str, dir_fd: int | None, path: Path) -> LeaseRecord | None:
    """:func:`read_lease` of ``name`` (relative to ``dir_fd`` when given), shown as ``path``."""
    try:
        descriptor = os.open(name, os.O_RDONLY | _NO_FOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LeaseCorruptError(
                f"the lease file {path} is a symbolic link; refusing to read or replace it "
                "(inspect or remove it by hand)"
            ) from None
        raise _unreadable(path, error) from None
    try:
        with os.fdopen(descriptor, "rb") as file:
            raw = file.read()
    except OSError as error:
        raise _unreadable(path, error) from None
    try:
        value = json.loads(raw)
        worker, pid, expires = value["worker_id"], value["pid"], value["expires_at_ms"]
        host = value.get("host")
        if not (
            isinstance(worker, str)
            and isinstance(pid, int)
            and isinstance(expires, int)
            and (host is None or isinstance(host, str))
        ):
            raise TypeError("wrong field types")
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise LeaseCorruptError(
            f"the lease file {path} is corrupt ({type(error).__name__}: {error}); "
            "inspect or remove it by hand"
        ) from None
    return LeaseRecord(worker, pid, expires, host)


def _unreadable(path: Path, error: OSError) -> LeaseCorruptError:
    return LeaseCorruptError(
        f"cannot read the lease {path}: {error.strerror}; refusing to write without "
        "proof of exclusivity"
    )
