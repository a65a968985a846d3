"""``atomic_write``'s edges: a folder refused with a full ``IsADirectoryError``, the
temporary file beside the target and its name, a symbolic link replaced (never followed),
every step relative to ``dir_fd`` when one is given (the temporary file, the replaced
file's attributes, the clean-up after a failure, the folder flushed), the folder that is
flushed, the flags the replaced file is read with, and the steps whose failure is no
error (a group it may not give, attributes it cannot read or set, a folder it cannot
flush). (Added from mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from yoagent.core._support.atomic import TEMP_SUFFIX, temp_name
from yoagent.core.support import atomic_write

_REAL_OPEN = os.open
_REAL_FSYNC = os.fsync


def _xattrs_supported(folder: Path) -> bool:
    probe = folder / "probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.probe", b"1")
    except OSError:
        return False
    finally:
        probe.unlink()
    return True


@pytest.mark.parametrize("how", ["a trailing slash", "a folder"])
def test_a_folder_is_refused_with_the_errno_reason_and_name(tmp_path: Path, how: str) -> None:
    name = f"{tmp_path}/" if how == "a trailing slash" else str(tmp_path)
    with pytest.raises(IsADirectoryError) as raised:
        atomic_write(name, b"x")
    assert raised.value.errno == errno.EISDIR
    assert raised.value.strerror == "Is a directory"
    assert raised.value.filename == name


def test_a_temporary_name_is_hidden_random_and_marked() -> None:
    assert re.fullmatch(
        r"\.notes\.txt\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX), temp_name("notes.txt")
    )


def test_the_temporary_file_is_made_beside_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    target = tmp_path / "target"
    target.mkdir()
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def replace(source: str, destination: str, **folders: int) -> None:
        replaced.append((source, destination))
        real_replace(source, destination, **folders)

    monkeypatch.setattr(os, "replace", replace)
    atomic_write(target / "f.txt", b"new")
    ((source, destination),) = replaced
    assert os.path.dirname(source) == str(target)
    assert destination == str(target / "f.txt")


def test_a_link_to_a_folder_is_replaced_by_the_file_and_the_folder_left_alone(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert atomic_write(link, b"new") is False  # something was there: the link
    assert not link.is_symlink() and link.read_bytes() == b"new"
    assert os.listdir(folder) == []


@pytest.fixture
def in_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Path]]:
    """A folder open as a descriptor, with the working folder somewhere else."""
    folder = tmp_path / "by-fd"
    folder.mkdir()
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    yield fd, folder
    os.close(fd)


def test_with_dir_fd_the_replaced_files_attributes_are_read_through_it(
    in_folder: tuple[int, Path],
) -> None:
    fd, folder = in_folder
    if not _xattrs_supported(folder):
        pytest.skip("no user extended attributes here")
    (folder / "f.txt").write_bytes(b"old")
    os.chmod(folder / "f.txt", 0o640)
    os.setxattr(folder / "f.txt", "user.origin", b"kept")
    assert atomic_write("f.txt", b"new", dir_fd=fd) is False
    assert (folder / "f.txt").read_bytes() == b"new"
    assert os.getxattr(folder / "f.txt", "user.origin") == b"kept"
    assert (folder / "f.txt").stat().st_mode & 0o777 == 0o640
    assert os.listdir(folder.parent / "cwd") == []


def test_with_dir_fd_a_failed_write_leaves_no_temporary_file(
    in_folder: tuple[int, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fd, folder = in_folder

    def fsync(descriptor: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output error"):
        atomic_write("f.txt", b"new", dir_fd=fd)
    assert os.listdir(folder) == []


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inode of every folder flushed."""
    inodes: list[int] = []

    def fsync(descriptor: int) -> None:
        info = os.fstat(descriptor)
        if info.st_mode & 0o170000 == 0o040000:
            inodes.append(info.st_ino)
        _REAL_FSYNC(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    return inodes


def test_the_folder_flushed_is_the_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, synced: list[int]
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    atomic_write(target / "f.txt", b"new")
    assert synced == [target.stat().st_ino]


def test_with_dir_fd_the_folder_flushed_is_the_descriptors(
    in_folder: tuple[int, Path], synced: list[int]
) -> None:
    fd, folder = in_folder
    atomic_write("f.txt", b"new", dir_fd=fd)
    assert synced == [folder.stat().st_ino]


def test_a_folder_that_cannot_be_flushed_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fsync(descriptor: int) -> None:
        if os.path.isdir(f"/proc/self/fd/{descriptor}"):
            raise OSError(errno.EINVAL, "Invalid argument")
        _REAL_FSYNC(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    assert atomic_write(tmp_path / "f.txt", b"new") is True
    assert (tmp_path / "f.txt").read_bytes() == b"new"


def test_a_failed_replace_is_the_error_raised_even_when_the_clean_up_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def replace(*args: object, **folders: object) -> None:
        raise PermissionError(errno.EACCES, "replace refused")

    def unlink(*args: object, **folders: object) -> None:
        raise FileNotFoundError(errno.ENOENT, "already gone")

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(PermissionError, match="replace refused"):
        atomic_write(tmp_path / "f.txt", b"new")


def test_the_replaced_file_is_read_without_following_a_link_or_blocking_on_a_fifo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")
    flags: list[int] = []

    def open_(path: str, how: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == str(target):
            flags.append(how)
        return _REAL_OPEN(path, how, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_)
    atomic_write(target, b"new")
    (read,) = flags
    assert read & os.O_ACCMODE == os.O_RDONLY
    wanted = os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    assert read & wanted == wanted


def test_a_group_it_may_not_give_is_tried_alone_and_a_refusal_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")
    info = target.stat()
    calls: list[tuple[int, int, int]] = []

    def fchown(fd: int, uid: int, gid: int) -> None:
        calls.append((fd, uid, gid))
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", fchown)
    atomic_write(target, b"new")
    fd = calls[0][0]
    assert isinstance(fd, int)
    assert calls == [(fd, info.st_uid, info.st_gid), (fd, -1, info.st_gid)]
    assert target.read_bytes() == b"new"


@pytest.mark.parametrize("failing", ["listxattr", "setxattr"])
def test_attributes_it_cannot_list_or_set_are_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")

    def refuse(*args: object, **options: object) -> None:
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(os, "listxattr", lambda *a, **k: ["user.origin"])  # pyright: ignore[reportUnknownLambdaType]
    monkeypatch.setattr(os, "getxattr", lambda *a, **k: b"kept")  # pyright: ignore[reportUnknownLambdaType]
    monkeypatch.setattr(os, "setxattr", lambda *a, **k: None)  # pyright: ignore[reportUnknownLambdaType]
    monkeypatch.setattr(os, failing, refuse)
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
