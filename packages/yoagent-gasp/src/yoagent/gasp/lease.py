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
"""

from __future__ import annotations

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path.parent):
            existing = read_lease(self.path)
            if (
                existing is not None
                and existing.worker_id != self.worker_id
                and not self._is_stale(existing)
            ):
                raise LeaseHeldError(f"the lease is held by {existing.describe()}")
            record = self._fresh()
            payload = json.dumps(record.to_json()).encode()
            if existing is None:
                self._create(payload)
            else:
                atomic_write(self.path, payload)  # a renewal, or a takeover of a stale lease
            self._expires_at_ms = record.expires_at_ms

    def _still_ours(self) -> bool:
        record = self.read()
        return record is not None and record.worker_id == self.worker_id

    def _create(self, payload: bytes) -> None:
        try:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            # created since we looked, by a writer that does not take the lock
            holder = read_lease(self.path)
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
        with _locked(self.path.parent):
            record = self.read()
            if record is not None and record.worker_id == self.worker_id:
                self.path.unlink(missing_ok=True)


@contextmanager
def _locked(folder: Path) -> Generator[None]:
    """Hold an exclusive ``flock`` on ``folder`` (closing the descriptor releases it)."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def read_lease(path: Path) -> LeaseRecord | None:
    """Parse a lease file; ``None`` when absent, :class:`LeaseCorruptError` when unreadable."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise LeaseCorruptError(
            f"cannot read the lease {path}: {error.strerror}; refusing to write without "
            "proof of exclusivity"
        ) from None
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
