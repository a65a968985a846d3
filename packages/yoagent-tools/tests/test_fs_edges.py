"""The file helpers' edges the tools rarely reach: the root folder, a symlink as the last
name, the messages a refusal carries, the OS failures of a write, and the sniffers' exact
bounds. (Added from mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from yoagent.core import ToolError
from yoagent.tools import PathSandbox, _fs
from yoagent.tools._fs import (
    describe_os_error,
    image_type,
    kind_of,
    looks_binary,
    open_dir_nofollow,
    sandboxed_write,
)

# -- names and messages --------------------------------------------------------------------


def test_every_file_type_has_its_name() -> None:
    assert kind_of(stat.S_IFDIR) == "a directory"
    assert kind_of(stat.S_IFIFO) == "a FIFO (named pipe)"
    assert kind_of(stat.S_IFSOCK) == "a socket"
    assert kind_of(stat.S_IFCHR) == "a character device"
    assert kind_of(stat.S_IFBLK) == "a block device"
    assert kind_of(stat.S_IFLNK) == "a symbolic link"
    assert kind_of(stat.S_IFREG) == "not a regular file"


def test_an_os_error_is_named_with_the_tool_the_path_and_the_reason() -> None:
    error = OSError(errno.EACCES, "Permission denied")
    message = str(describe_os_error("read_file", "a.txt", error, checked=True))
    assert message == "read_file: a.txt: Permission denied"
    # a loop met on a path nobody checked is the OS's own reason, not a swap
    loop = OSError(errno.ELOOP, "Too many levels of symbolic links")
    unchecked = str(describe_os_error("read_file", "a.txt", loop, checked=False))
    assert unchecked == "read_file: a.txt: Too many levels of symbolic links"
    checked = str(describe_os_error("read_file", "a.txt", loop, checked=True))
    assert checked == (
        "read_file: a.txt: a symbolic link appeared in the path after it was checked; refused"
    )
    # an error without a strerror still says something
    bare = str(describe_os_error("t", "p", OSError("no reason given"), checked=False))
    assert bare == "t: p: no reason given"


# -- open_dir_nofollow -----------------------------------------------------------------------


def test_the_root_folder_opens_as_a_folder() -> None:
    fd = open_dir_nofollow("/")
    try:
        assert stat.S_ISDIR(os.fstat(fd).st_mode)
        assert os.path.samestat(os.fstat(fd), os.stat("/"))
    finally:
        os.close(fd)


def test_a_folder_opens_and_a_file_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("x")
    fd = open_dir_nofollow(str(tmp_path / "sub"))
    try:
        assert sorted(os.listdir(fd)) == ["f.txt"]
    finally:
        os.close(fd)
    with pytest.raises(NotADirectoryError):
        open_dir_nofollow(str(tmp_path / "sub" / "f.txt"))


def test_a_missing_folder_is_not_made_on_the_way(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_dir_nofollow(str(tmp_path / "missing" / "deeper"))
    assert not (tmp_path / "missing").exists()


def test_a_symlink_as_the_last_name_is_a_loop_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "real")  # a name looked up here instead would not be a link
    with pytest.raises(OSError, match="symbolic link in the path") as caught:
        open_dir_nofollow(str(tmp_path / "link"))
    assert caught.value.errno == errno.ELOOP
    assert caught.value.strerror == "symbolic link in the path"


def test_the_root_is_not_a_file_to_open(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as caught:
        _fs._open_parent_nofollow("/", create=False)  # pyright: ignore[reportPrivateUsage]
    assert caught.value.errno == errno.EISDIR


# -- sandboxed_write's failures --------------------------------------------------------------


def test_a_bare_name_is_written_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = sandboxed_write("write_file", "n.txt", "n.txt", b"hello", nofollow=False)
    assert (outcome.created, outcome.size) == (True, 5)
    assert (tmp_path / "n.txt").read_bytes() == b"hello"


def test_a_missing_folder_without_create_parents_is_named(tmp_path: Path) -> None:
    target = str(tmp_path / "missing" / "f.txt")
    for nofollow in (True, False):
        with pytest.raises(ToolError) as caught:
            sandboxed_write(
                "write_file", "missing/f.txt", target, b"x", nofollow=nofollow, create_parents=False
            )
        assert str(caught.value) == "write_file: the folder for missing/f.txt does not exist"


def test_a_symlink_in_the_folders_is_refused_with_the_tool_and_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ToolError) as caught:
        sandboxed_write(
            "write_file", "link/f.txt", str(tmp_path / "link" / "f.txt"), b"x", nofollow=True
        )
    assert str(caught.value) == (
        "write_file: link/f.txt: a symbolic link appeared in the path after it was checked; refused"
    )
    assert not (tmp_path / "real" / "f.txt").exists()


def test_a_symlink_as_the_target_is_refused_with_the_tool_and_path(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    with pytest.raises(ToolError) as caught:
        sandboxed_write("write_file", "link.txt", str(tmp_path / "link.txt"), b"x", nofollow=True)
    assert str(caught.value) == (
        "write_file: link.txt: a symbolic link appeared in the path after it was checked; refused"
    )
    assert (tmp_path / "real.txt").read_text() == "old"


def test_without_nofollow_a_symlinked_target_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    outcome = sandboxed_write(
        "write_file", "link.txt", str(tmp_path / "link.txt"), b"new", nofollow=False
    )
    assert (outcome.created, outcome.size) == (False, 3)


def test_a_folder_in_the_way_is_named_with_the_tool_and_path(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError) as caught:
        sandboxed_write("write_file", "d", str(tmp_path / "d"), b"x", nofollow=True)
    assert str(caught.value) == "write_file: d is a directory, not a regular file; refused"


@pytest.mark.parametrize("nofollow", [True, False])
def test_a_name_the_os_refuses_is_a_tool_error(tmp_path: Path, nofollow: bool) -> None:
    name = "n" * 300  # longer than any file system's name limit: ENAMETOOLONG from stat
    with pytest.raises(ToolError) as caught:
        sandboxed_write("write_file", "long", str(tmp_path / name), b"x", nofollow=nofollow)
    assert str(caught.value) == f"write_file: long: {os.strerror(errno.ENAMETOOLONG)}"


@pytest.mark.parametrize(
    ("error", "nofollow", "message"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), True, "No space left on device"),
        (
            OSError(errno.ELOOP, "Too many levels of symbolic links"),
            True,
            "a symbolic link appeared in the path after it was checked; refused",
        ),
        (
            OSError(errno.ELOOP, "Too many levels of symbolic links"),
            False,
            "Too many levels of symbolic links",
        ),
    ],
)
def test_a_failed_write_is_a_tool_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: OSError,
    nofollow: bool,
    message: str,
) -> None:
    def failing(*args: object, **kwargs: object) -> bool:
        raise error

    monkeypatch.setattr(_fs, "atomic_write", failing)
    with pytest.raises(ToolError) as caught:
        sandboxed_write("write_file", "f.txt", str(tmp_path / "f.txt"), b"x", nofollow=nofollow)
    assert str(caught.value) == f"write_file: f.txt: {message}"


# -- sniffers --------------------------------------------------------------------------------


def test_only_the_first_8_kib_are_sniffed_for_nul() -> None:
    assert looks_binary(b"a" * 8191 + b"\0")
    assert not looks_binary(b"a" * 8192 + b"\0")


def test_webp_needs_both_riff_and_webp_in_place() -> None:
    webp = b"RIFF\x24\x00\x00\x00WEBPVP8 "
    assert image_type(webp) == "image/webp"
    assert image_type(b"RIFX\x24\x00\x00\x00WEBPVP8 ") is None
    assert image_type(b"RIFF\x24\x00\x00\x00WAVEfmt ") is None
    assert image_type(b"\x00" + webp) is None


# -- the sandbox ---------------------------------------------------------------------------


def test_is_allowed_says_yes_inside_and_no_outside(root: Path) -> None:
    sandbox = PathSandbox([root])
    assert sandbox.is_allowed(str(root / "new.txt")) is True
    assert sandbox.is_allowed(str(root.parent / "outside" / "secret.txt")) is False
