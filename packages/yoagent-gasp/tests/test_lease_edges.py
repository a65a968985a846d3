"""The lease at its edges: what the file says, when it counts as stale, when a renewal
writes, what is corrupt, and what the errors name (pinned from a mutation run of
``yoagent.gasp.lease``, docs/mutation.md)."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import yoagent.gasp.lease as lease_module
from yoagent.gasp import Lease, LeaseCorruptError, LeaseError, LeaseHeldError
from yoagent.gasp.lease import LeaseRecord, read_lease

NOW = 1_000_000_000
posix_only = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX file modes, links, errors and signals"
)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lease's clock, in milliseconds, set by the test."""
    now = [NOW]
    monkeypatch.setattr(lease_module, "now_ms", lambda: now[0])
    return now


def _lease_file(root: Path) -> Path:
    return root / ".agent" / "lease"


def _on_file(root: Path) -> dict[str, object]:
    return json.loads(_lease_file(root).read_bytes())


def _write_record(root: Path, record: dict[str, object]) -> None:
    _lease_file(root).parent.mkdir(parents=True, exist_ok=True)
    _lease_file(root).write_text(json.dumps(record))


def _around_reads(
    monkeypatch: pytest.MonkeyPatch,
    *,
    before: Callable[[int], object] = lambda n: None,
    after: Callable[[int], object] = lambda n: None,
) -> list[LeaseRecord | None]:
    """The lease's reads of its file, each with ``before(n)`` and ``after(n)`` (``n``: the
    reads done so far) around it: what another process does meanwhile. Returns what each
    read found."""
    real_read = lease_module._read  # pyright: ignore[reportPrivateUsage]
    found: list[LeaseRecord | None] = []

    def read(name: str, folder: int | None, path: Path) -> LeaseRecord | None:
        before(len(found))
        record = real_read(name, folder, path)
        after(len(found))
        found.append(record)
        return record

    monkeypatch.setattr(lease_module, "_read", read)
    return found


def _link_agent_folder_to(repo: Path, outside: Path) -> None:
    """Swap ``repo/.agent`` (kept as ``.agent-locked``) for a link to ``outside``."""
    (repo / ".agent").rename(repo / ".agent-locked")
    (repo / ".agent").symlink_to(outside, target_is_directory=True)


def _dead_pid() -> int:
    """The id of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# -- the handle and the record -----------------------------------------------------------


@pytest.mark.parametrize("worker_id", ["", " ", "\t\n"])
def test_a_blank_worker_id_is_refused(tmp_path: Path, worker_id: str) -> None:
    with pytest.raises(ValueError, match=r"^worker_id must not be empty$"):
        Lease(tmp_path, worker_id)


@pytest.mark.parametrize("ttl", [0, 0.0, -1.0])
def test_a_ttl_that_is_not_positive_is_refused(tmp_path: Path, ttl: float) -> None:
    with pytest.raises(ValueError, match=r"^the lease ttl must be positive$"):
        Lease(tmp_path, "w", ttl=ttl)


def test_the_file_holds_the_worker_its_pid_host_and_expiry_in_whole_milliseconds(
    tmp_path: Path, clock: list[int]
) -> None:
    lease = Lease(tmp_path / "not" / "yet" / "there", "w", ttl=1.5)
    assert lease.path == tmp_path / "not" / "yet" / "there" / ".agent" / "lease"
    assert lease.ttl_ms == 1500
    lease.acquire()  # creates the repository folder and .agent/ as it goes
    assert _on_file(lease.path.parents[1]) == {
        "worker_id": "w",
        "pid": os.getpid(),
        "expires_at_ms": NOW + 1500,
        "host": socket.gethostname(),
    }
    assert lease.read() == LeaseRecord("w", os.getpid(), NOW + 1500, socket.gethostname())


@posix_only
def test_a_created_lease_file_is_readable_by_all_and_writable_by_its_owner(
    tmp_path: Path,
) -> None:
    umask = os.umask(0)
    try:
        Lease(tmp_path, "w").acquire()
    finally:
        os.umask(umask)
    assert stat.S_IMODE(_lease_file(tmp_path).stat().st_mode) == 0o644


def test_a_record_without_a_host_leaves_it_out_of_the_file_and_the_description() -> None:
    record = LeaseRecord("w", 7, 99)
    assert record.to_json() == {"worker_id": "w", "pid": 7, "expires_at_ms": 99}
    assert record.describe() == "worker `w` (pid 7) until 99"
    hosted = LeaseRecord("w", 7, 99, "box")
    assert hosted.to_json() == {"worker_id": "w", "pid": 7, "expires_at_ms": 99, "host": "box"}
    assert hosted.describe() == "worker `w` (pid 7 on box) until 99"


# -- who holds it --------------------------------------------------------------------------


def test_a_lease_expiring_this_millisecond_is_stale_and_one_a_millisecond_later_is_not(
    tmp_path: Path, clock: list[int]
) -> None:
    other = {"worker_id": "other", "pid": os.getpid(), "host": "elsewhere"}
    _write_record(tmp_path, {**other, "expires_at_ms": NOW + 1})
    with pytest.raises(LeaseHeldError) as held:
        Lease(tmp_path, "me").acquire()
    assert str(held.value) == (
        f"the lease is held by worker `other` (pid {os.getpid()} on elsewhere) until {NOW + 1}"
    )
    _write_record(tmp_path, {**other, "expires_at_ms": NOW})
    Lease(tmp_path, "me").acquire()
    assert _on_file(tmp_path)["worker_id"] == "me"


def test_a_live_lease_of_a_dead_process_on_this_host_is_taken(
    tmp_path: Path, clock: list[int]
) -> None:
    _write_record(
        tmp_path,
        {
            "worker_id": "crashed",
            "pid": _dead_pid(),
            "expires_at_ms": NOW + 60_000,
            "host": socket.gethostname(),
        },
    )
    lease = Lease(tmp_path, "me")
    lease.acquire()
    assert _on_file(tmp_path)["worker_id"] == "me"
    assert _on_file(tmp_path)["expires_at_ms"] == NOW + lease.ttl_ms


@posix_only
def test_a_live_process_on_this_host_keeps_its_lease_and_is_not_signalled(
    tmp_path: Path, clock: list[int]
) -> None:
    """Checking that the holder lives sends it nothing: signal 0 only asks."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = {
            "worker_id": "alive",
            "pid": holder.pid,
            "expires_at_ms": NOW + 1,
            "host": socket.gethostname(),
        }
        _write_record(tmp_path, record)
        with pytest.raises(LeaseHeldError, match="alive"):
            Lease(tmp_path, "me").acquire()
        assert _on_file(tmp_path) == record
        assert holder.poll() is None  # not hung up on, not killed
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_pid_on_another_host_or_no_host_proves_nothing(
    tmp_path: Path, clock: list[int]
) -> None:
    dead = _dead_pid()
    for host in ("another-host", None):
        record: dict[str, object] = {"worker_id": "far", "pid": dead, "expires_at_ms": NOW + 1}
        if host is not None:
            record["host"] = host
        _write_record(tmp_path, record)
        with pytest.raises(LeaseHeldError, match="far"):
            Lease(tmp_path, "me").acquire()
        assert _on_file(tmp_path) == record


def test_another_worker_of_this_process_holds_its_lease(tmp_path: Path, clock: list[int]) -> None:
    """Same host, same pid, another worker id: the process is alive (it is this one)."""
    Lease(tmp_path, "first").acquire()
    with pytest.raises(LeaseHeldError, match="first"):
        Lease(tmp_path, "second").acquire()


def test_a_process_that_cannot_be_signalled_counts_as_alive(
    tmp_path: Path, clock: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's process (``EPERM``), or one whose state cannot be told: the lease is
    not taken from it before it expires."""
    for error in (PermissionError(errno.EPERM, "not yours"), OSError(errno.EINVAL, "?")):
        record = {
            "worker_id": "theirs",
            "pid": 4242,
            "expires_at_ms": NOW + 1,
            "host": socket.gethostname(),
        }
        _write_record(tmp_path, record)

        def kill(pid: int, signal: int, error: OSError = error) -> None:
            assert (pid, signal) == (4242, 0)
            raise error

        with monkeypatch.context() as patch:
            patch.setattr(lease_module.os, "kill", kill)
            with pytest.raises(LeaseHeldError, match="theirs"):
                Lease(tmp_path, "me").acquire()
        assert _on_file(tmp_path) == record


# -- renewal ------------------------------------------------------------------------------


def test_a_renewal_writes_only_once_half_the_lease_is_gone(
    tmp_path: Path, clock: list[int]
) -> None:
    lease = Lease(tmp_path, "w", ttl=10)
    lease.acquire()
    assert _on_file(tmp_path)["expires_at_ms"] == NOW + 10_000
    clock[0] = NOW + 4_999  # 5001 ms left: more than half
    lease.acquire()
    assert _on_file(tmp_path)["expires_at_ms"] == NOW + 10_000
    clock[0] = NOW + 5_000  # exactly half left: renewed
    lease.acquire()
    assert _on_file(tmp_path)["expires_at_ms"] == NOW + 15_000


def test_a_renewal_notices_the_lease_was_taken_or_removed_meanwhile(
    tmp_path: Path, clock: list[int]
) -> None:
    lease = Lease(tmp_path, "w", ttl=10)
    lease.acquire()
    other = {"worker_id": "thief", "pid": os.getpid(), "expires_at_ms": NOW + 60_000}
    _write_record(tmp_path, other)
    with pytest.raises(LeaseHeldError, match="thief"):
        lease.acquire()  # still "fresh" by its own clock, but no longer its lease
    _lease_file(tmp_path).unlink()
    lease.acquire()
    assert _on_file(tmp_path)["worker_id"] == "w"


def test_release_gives_up_only_its_own_lease_and_forgets_its_expiry(
    tmp_path: Path, clock: list[int]
) -> None:
    mine, theirs = Lease(tmp_path, "mine"), Lease(tmp_path, "theirs")
    mine.release()  # no .agent/ folder: nothing to do, nothing created
    assert not (tmp_path / ".agent").exists()
    theirs.acquire()
    mine.release()
    assert _on_file(tmp_path)["worker_id"] == "theirs"
    theirs.release()
    assert not _lease_file(tmp_path).exists()
    theirs.release()  # released twice: no file, no error
    mine.acquire()
    mine.release()
    # a release forgets the expiry: the next acquire writes the file again at once
    mine.acquire()
    assert _on_file(tmp_path)["worker_id"] == "mine"


# -- a writer that does not take the lock ---------------------------------------------------


def test_a_lease_created_meanwhile_without_the_lock_is_held_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = {"worker_id": "racer", "pid": 1, "expires_at_ms": 5, "host": "h"}
    # the exclusive create follows the first read: another runtime gets there first
    reads = _around_reads(monkeypatch, after=lambda n: n or _write_record(tmp_path, theirs))
    with pytest.raises(LeaseHeldError) as held:
        Lease(tmp_path, "me").acquire()
    assert str(held.value) == "the lease is held by worker `racer` (pid 1 on h) until 5"
    assert reads == [None, LeaseRecord("racer", 1, 5, "h")]
    assert _on_file(tmp_path) == theirs


def test_a_lease_created_and_gone_again_meanwhile_is_held_by_another_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    racer = {"worker_id": "racer", "pid": 1, "expires_at_ms": 5}
    # created before the exclusive create, and gone again by the re-read
    reads = _around_reads(
        monkeypatch,
        before=lambda n: n and _lease_file(tmp_path).unlink(),
        after=lambda n: n or _write_record(tmp_path, racer),
    )
    with pytest.raises(LeaseHeldError) as held:
        Lease(tmp_path, "me").acquire()
    assert str(held.value) == "the lease is held by another writer"
    assert reads == [None, None]


# -- files that are not a lease ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("{not json", "JSONDecodeError"),
        ("[1, 2]", "TypeError"),
        ('"text"', "TypeError"),
        ("null", "TypeError"),
        ('{"pid": 1, "expires_at_ms": 2}', "KeyError: 'worker_id'"),
        ('{"worker_id": "w", "expires_at_ms": 2}', "KeyError: 'pid'"),
        ('{"worker_id": "w", "pid": 1}', "KeyError: 'expires_at_ms'"),
        ('{"worker_id": 1, "pid": 1, "expires_at_ms": 2}', "TypeError: wrong field types"),
        ('{"worker_id": "w", "pid": "1", "expires_at_ms": 2}', "TypeError: wrong field types"),
        ('{"worker_id": "w", "pid": 1, "expires_at_ms": 2.5}', "TypeError: wrong field types"),
        (
            '{"worker_id": "w", "pid": 1, "expires_at_ms": 2, "host": 3}',
            "TypeError: wrong field types",
        ),
        ('{"worker_id": "\xc3("}', "UnicodeDecodeError"),
    ],
)
def test_a_file_that_is_not_a_lease_is_corrupt_and_says_why(
    tmp_path: Path, content: str, error: str
) -> None:
    _lease_file(tmp_path).parent.mkdir()
    _lease_file(tmp_path).write_bytes(content.encode("latin-1"))
    with pytest.raises(LeaseCorruptError) as corrupt:
        read_lease(_lease_file(tmp_path))
    assert f"the lease file {_lease_file(tmp_path)} is corrupt ({error}" in str(corrupt.value)
    assert str(corrupt.value).endswith("; inspect or remove it by hand")
    with pytest.raises(LeaseCorruptError) as on_acquire:
        Lease(tmp_path, "me").acquire()
    assert str(on_acquire.value) == str(corrupt.value)
    assert _lease_file(tmp_path).read_bytes() == content.encode("latin-1")


@posix_only
def test_a_lease_that_is_a_folder_is_unreadable_not_stolen(tmp_path: Path) -> None:
    _lease_file(tmp_path).mkdir(parents=True)
    with pytest.raises(LeaseCorruptError) as unreadable:
        read_lease(_lease_file(tmp_path))
    assert str(unreadable.value) == (
        f"cannot read the lease {_lease_file(tmp_path)}: Is a directory; refusing to write "
        "without proof of exclusivity"
    )
    with pytest.raises(LeaseCorruptError, match="cannot read the lease"):
        Lease(tmp_path, "me").acquire()
    assert _lease_file(tmp_path).is_dir()


@posix_only
def test_a_lease_path_that_cannot_be_opened_is_unreadable(tmp_path: Path) -> None:
    """Not absent, not a link: another error opening it (``.agent`` a file) says so."""
    (tmp_path / ".agent").write_text("a file, not a folder")
    with pytest.raises(LeaseCorruptError) as unreadable:
        read_lease(_lease_file(tmp_path))
    assert str(unreadable.value).startswith(
        f"cannot read the lease {_lease_file(tmp_path)}: Not a directory;"
    )


@posix_only
def test_an_agent_path_that_is_a_file_fails_as_itself_not_as_a_link(tmp_path: Path) -> None:
    (tmp_path / ".agent").write_text("a file, not a folder")
    lease = Lease(tmp_path, "me")
    with pytest.raises(NotADirectoryError) as error:
        lease.acquire()
    assert not isinstance(error.value, LeaseError)
    lease.release()  # .agent/ is not a folder: nothing to release
    assert (tmp_path / ".agent").read_text() == "a file, not a folder"


@posix_only
def test_an_agent_folder_that_is_a_link_is_refused_with_why(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".agent").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LeaseError) as linked:
        Lease(repo, "me").acquire()
    assert str(linked.value) == (
        f"{repo / '.agent'} is a symbolic link; the lease must be a file of the repository "
        "itself (through the link it would be created, locked and removed elsewhere)"
    )
    assert list(elsewhere.iterdir()) == []


def test_a_corrupt_lease_created_meanwhile_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another runtime creates it, and is still writing it, by the re-read
    _around_reads(monkeypatch, after=lambda n: n or _lease_file(tmp_path).write_text("garbage"))
    with pytest.raises(LeaseCorruptError) as corrupt:
        Lease(tmp_path, "me").acquire()
    assert str(corrupt.value).startswith(f"the lease file {_lease_file(tmp_path)} is corrupt (")
    assert _lease_file(tmp_path).read_text() == "garbage"


def test_releasing_a_corrupt_lease_is_an_error_naming_it(tmp_path: Path) -> None:
    _lease_file(tmp_path).parent.mkdir()
    _lease_file(tmp_path).write_text("garbage")
    with pytest.raises(LeaseCorruptError) as corrupt:
        Lease(tmp_path, "me").release()
    assert str(corrupt.value).startswith(f"the lease file {_lease_file(tmp_path)} is corrupt (")
    assert _lease_file(tmp_path).read_text() == "garbage"


def test_a_lease_gone_between_the_read_and_the_removal_is_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = Lease(tmp_path, "me")
    lease.acquire()
    _around_reads(monkeypatch, after=lambda n: _lease_file(tmp_path).unlink())  # by hand
    lease.release()
    assert not _lease_file(tmp_path).exists()


@posix_only
def test_release_removes_the_lease_of_the_folder_it_locked_never_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.agent/`` swapped for a link after it was opened: the release removes the file in
    the folder it opened and locked, not the one the link points to."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lease").write_text("not yours")
    repo = tmp_path / "repo"
    lease = Lease(repo, "me")
    lease.acquire()
    _around_reads(monkeypatch, after=lambda n: _link_agent_folder_to(repo, outside))
    lease.release()
    assert (outside / "lease").read_text() == "not yours"
    assert not (repo / ".agent-locked" / "lease").exists()


@posix_only
def test_a_lease_file_that_is_a_link_is_refused_with_why(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("not a lease")
    _lease_file(tmp_path).parent.mkdir()
    _lease_file(tmp_path).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LeaseCorruptError) as linked:
        read_lease(_lease_file(tmp_path))
    assert str(linked.value) == (
        f"the lease file {_lease_file(tmp_path)} is a symbolic link; refusing to read or "
        "replace it (inspect or remove it by hand)"
    )


def test_without_flock_the_lease_is_still_the_repositorys_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``fcntl`` is missing (Windows) nothing is locked, and the file is named by its
    whole path: never relative to the working folder."""
    monkeypatch.setattr(lease_module, "fcntl", None)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    repo = tmp_path / "repo"
    lease, other = Lease(repo, "me"), Lease(repo, "other")
    lease.acquire()
    assert _on_file(repo)["worker_id"] == "me"
    with pytest.raises(LeaseHeldError, match="me"):
        other.acquire()
    lease.release()
    assert not _lease_file(repo).exists()
    assert list(elsewhere.iterdir()) == []


@posix_only
def test_acquire_writes_the_lease_into_the_folder_it_locked_never_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.agent/`` swapped for a link after it was opened: the lease is created in the
    folder opened and locked, nothing is written where the link points."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    (repo / ".agent").mkdir(parents=True)
    _around_reads(monkeypatch, after=lambda n: n or _link_agent_folder_to(repo, outside))
    Lease(repo, "me").acquire()
    assert list(outside.iterdir()) == []
    assert json.loads((repo / ".agent-locked" / "lease").read_bytes())["worker_id"] == "me"
