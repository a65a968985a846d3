"""``atomic_write``: the one way the project replaces a file, so no file is ever torn."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from yoagent.core.support import atomic_write

OLD = b"old content\n" * 1000
NEW = b"new content\n" * 1000


def _names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_a_new_file_is_created_with_the_umasks_mode(tmp_path: Path, umask_022: None) -> None:
    target = tmp_path / "f.txt"
    assert atomic_write(target, b"data") is True
    assert target.read_bytes() == b"data"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert _names(tmp_path) == ["f.txt"]


def test_text_is_encoded_and_written_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, "héllo\r\nwörld\n")
    assert target.read_bytes() == "héllo\r\nwörld\n".encode()
    atomic_write(target, "héllo", encoding="latin-1")
    assert target.read_bytes() == b"h\xe9llo"


def test_a_given_mode_is_exact_for_a_new_file_and_ignored_for_an_existing_one(
    tmp_path: Path,
) -> None:
    previous = os.umask(0o077)  # would turn 0o640 into 0o600
    try:
        created = tmp_path / "new"
        atomic_write(created, b"x", mode=0o640)
        assert stat.S_IMODE(created.stat().st_mode) == 0o640
        existing = tmp_path / "existing"
        existing.write_bytes(b"x")
        existing.chmod(0o604)
        atomic_write(existing, b"y", mode=0o600)
        assert stat.S_IMODE(existing.stat().st_mode) == 0o604
    finally:
        os.umask(previous)


def test_a_replaced_file_keeps_its_mode_owner_and_xattrs_in_a_new_inode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_bytes(OLD)
    as_root = os.geteuid() == 0
    if as_root:
        os.chown(target, 1234, 5678)
    target.chmod(0o2751 if as_root else 0o751)
    try:
        os.setxattr(target, "user.origin", b"kept")
        has_xattr = True
    except (OSError, AttributeError):
        has_xattr = False
    before = target.stat()
    assert atomic_write(target, NEW) is False
    after = target.stat()
    assert target.read_bytes() == NEW
    assert after.st_ino != before.st_ino
    assert after.st_mode == before.st_mode
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    if has_xattr:
        assert os.getxattr(target, "user.origin") == b"kept"
    assert _names(tmp_path) == ["run.sh"]


def test_a_symlink_is_replaced_and_the_file_it_points_to_left_alone(tmp_path: Path) -> None:
    """Decided: the link is replaced (as ``os.replace`` does), never written through — a
    link planted in a folder the caller writes to cannot send the write elsewhere."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(OLD)
    outside.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(outside)
    assert atomic_write(link, NEW) is False
    assert not link.is_symlink()
    assert link.read_bytes() == NEW
    assert outside.read_bytes() == OLD


def test_a_directory_in_the_way_raises_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "inside").write_bytes(b"x")
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path / "d", b"data")
    with pytest.raises(IsADirectoryError):
        atomic_write(f"{tmp_path}/", b"data")
    assert _names(tmp_path) == ["d"]
    assert _names(tmp_path / "d") == ["inside"]


def test_a_missing_folder_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "missing" / "f", b"data")
    assert _names(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to any folder")
def test_an_unwritable_folder_raises_and_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(OLD)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(PermissionError):
            atomic_write(target, NEW)
    finally:
        tmp_path.chmod(0o755)
    assert target.read_bytes() == OLD
    assert _names(tmp_path) == ["f"]


def test_a_full_disk_raises_and_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f"
    target.write_bytes(OLD)
    real_write = os.write
    calls = 0

    def write(fd: int, data: bytes | memoryview) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:  # a short write first: the rest must still be written
            return real_write(fd, bytes(data)[:100])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, NEW)
    monkeypatch.undo()
    assert calls == 2
    assert target.read_bytes() == OLD
    assert _names(tmp_path) == ["f"]


def test_a_failed_rename_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f"
    target.write_bytes(OLD)

    def refuse(source: object, destination: object) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="I/O error"):
        atomic_write(target, NEW)
    monkeypatch.undo()
    assert target.read_bytes() == OLD
    assert _names(tmp_path) == ["f"]


def test_text_that_cannot_be_encoded_raises_before_anything_is_created(tmp_path: Path) -> None:
    with pytest.raises(UnicodeEncodeError):
        atomic_write(tmp_path / "f", "lone \ud800 surrogate")
    assert _names(tmp_path) == []


def test_the_file_and_then_its_folder_are_flushed_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        mode = os.fstat(fd).st_mode
        synced.append("folder" if stat.S_ISDIR(mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    atomic_write(tmp_path / "f", b"data")
    assert synced == ["file", "folder"]


def test_with_dir_fd_the_path_is_relative_to_the_open_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert atomic_write("sub/f", b"one", dir_fd=folder) is True
        assert atomic_write("sub/f", b"two", dir_fd=folder) is False
    finally:
        os.close(folder)
    assert (tmp_path / "sub" / "f").read_bytes() == b"two"
    assert _names(tmp_path / "sub") == ["f"]


@pytest.mark.parametrize("name", ["😀" * 60 + ".txt", "中" * 85, "é" * 127 + "x"])
def test_names_of_up_to_255_bytes_get_a_temporary_name_that_fits(tmp_path: Path, name: str) -> None:
    assert len(name.encode()) in range(240, 256)
    atomic_write(tmp_path / name, b"data")
    assert _names(tmp_path) == [name]


# -- a kill between write and rename ------------------------------------------------------

_PAUSE_BEFORE_RENAME = """
import os, sys, time
from yoagent.core.support import atomic_write

def paused(source, destination, **options):
    print("renaming", flush=True)
    time.sleep(60)

os.replace = paused
atomic_write(sys.argv[1], bytes.fromhex(sys.argv[2]))
"""


def _temporaries(folder: Path, name: str) -> list[Path]:
    return [path for path in folder.iterdir() if path.name != name]


def test_a_kill_between_write_and_rename_leaves_the_old_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(OLD)
    child = subprocess.Popen(
        [sys.executable, "-c", _PAUSE_BEFORE_RENAME, str(target), NEW.hex()],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "renaming\n"  # written and synced, not yet renamed
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert target.read_bytes() == OLD
    left = _temporaries(tmp_path, "f")
    assert len(left) == 1 and left[0].name.startswith(".f.")
    assert left[0].read_bytes() == NEW  # the new file is wholly there, under its hidden name


_WRITE_FOREVER = """
import sys
from yoagent.core.support import atomic_write

target, contents = sys.argv[1], [bytes([65 + i]) * 300_000 for i in range(2)]
print("writing", flush=True)
i = 0
while True:
    atomic_write(target, contents[i % 2])
    i += 1
"""


def test_a_kill_at_any_moment_never_leaves_a_torn_file(tmp_path: Path) -> None:
    """Invariant: whenever the writer dies, the target holds one whole version."""
    target = tmp_path / "f"
    versions = {b"A" * 300_000, b"B" * 300_000}
    target.write_bytes(b"A" * 300_000)
    for delay in (0.05, 0.13, 0.21, 0.34):
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITE_FOREVER, str(target)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "writing\n"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        assert target.read_bytes() in versions
        for temporary in _temporaries(tmp_path, "f"):
            # what a killed writer leaves behind is hidden and never the target itself
            assert temporary.name.startswith(".f.") and temporary.name.endswith(".yoagent-tmp")
            temporary.unlink()
