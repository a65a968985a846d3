"""The file helpers' edges the tools rarely reach: the root folder, a symlink as the last
name, the messages a refusal carries, the OS failures of a write, and the sniffers' exact
bounds. (Added from mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from yoagent.core import ToolError
from yoagent.tools import PathSandbox, SandboxError, _fs
from yoagent.tools._fs import (
    decode_text,
    describe_os_error,
    image_type,
    kind_of,
    looks_binary,
    open_dir_nofollow,
    open_for_read,
    read_all,
    sandboxed_write,
    write_lock,
)
from yoagent.tools.sandbox import resolve_path

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


def test_a_symlink_among_the_folders_is_a_loop_error(tmp_path: Path) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OSError, match="symbolic link in the path") as caught:
        open_dir_nofollow(str(tmp_path / "link" / "sub"))
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


def test_missing_folders_are_made_with_the_usual_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    target = tmp_path / "a" / "b" / "f.txt"
    sandboxed_write("write_file", "a/b/f.txt", str(target), b"x", nofollow=True)
    for folder in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask
    assert target.read_bytes() == b"x"


def test_a_folder_made_by_someone_else_meanwhile_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def racing_mkdir(name: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real_mkdir(name, mode, dir_fd=dir_fd)  # another writer got there first
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(os, "mkdir", racing_mkdir)
    target = tmp_path / "new" / "f.txt"
    sandboxed_write("write_file", "new/f.txt", str(target), b"x", nofollow=True)
    assert target.read_bytes() == b"x"


def test_a_symlink_swapped_in_for_a_new_folder_is_not_followed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = root.parent / "outside"

    def swapping_mkdir(name: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        os.symlink(str(outside), name, dir_fd=dir_fd)  # made, then swapped for a link

    monkeypatch.setattr(os, "mkdir", swapping_mkdir)
    with pytest.raises(ToolError):
        sandboxed_write("write_file", "new/f.txt", str(root / "new" / "f.txt"), b"x", nofollow=True)
    assert not (outside / "f.txt").exists()


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


# -- open_for_read ---------------------------------------------------------------------------


@pytest.mark.parametrize("nofollow", [True, False])
def test_a_folder_is_refused_with_the_tool_and_path(tmp_path: Path, nofollow: bool) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError) as caught:
        open_for_read("read_file", "d", str(tmp_path / "d"), nofollow=nofollow)
    assert str(caught.value) == "read_file: d is a directory, not a regular file; refused"


def test_the_root_folder_is_not_a_file_to_read() -> None:
    with pytest.raises(ToolError) as caught:
        open_for_read("read_file", "/", "/", nofollow=True)
    assert str(caught.value) == "read_file: /: is the root folder"


@pytest.mark.parametrize("nofollow", [True, False])
def test_a_file_used_as_a_folder_is_named(tmp_path: Path, nofollow: bool) -> None:
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ToolError) as caught:
        open_for_read("read_file", "f.txt/x", str(tmp_path / "f.txt" / "x"), nofollow=nofollow)
    assert str(caught.value) == "read_file: f.txt/x: a parent in the path is not a folder"


@pytest.mark.parametrize("nofollow", [True, False])
def test_a_name_too_long_to_read_is_a_tool_error(tmp_path: Path, nofollow: bool) -> None:
    with pytest.raises(ToolError) as caught:
        open_for_read("read_file", "long", str(tmp_path / ("n" * 300)), nofollow=nofollow)
    assert str(caught.value) == f"read_file: long: {os.strerror(errno.ENAMETOOLONG)}"


def test_reading_a_missing_file_makes_no_folder(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        open_for_read("read_file", "a/b/f.txt", str(tmp_path / "a" / "b" / "f.txt"), nofollow=True)
    assert not (tmp_path / "a").exists()


def test_a_symlink_to_a_folder_as_the_last_name_is_refused_as_a_link(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "d")
    with pytest.raises(ToolError) as caught:
        open_for_read("read_file", "link", str(tmp_path / "link"), nofollow=True)
    assert "a symbolic link appeared in the path after it was checked" in str(caught.value)


def test_the_descriptor_is_blocking_once_checked(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    for nofollow in (True, False):
        fd, _ = open_for_read("read_file", "f.txt", str(tmp_path / "f.txt"), nofollow=nofollow)
        try:
            assert os.get_blocking(fd)
        finally:
            os.close(fd)


def _swap_after_the_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """Run ``swap`` right after the first regular-file check: the window between the
    path's check and its open."""
    original = _fs.require_regular_file
    swapped: list[bool] = []

    def check_then_swap(tool: str, shown: str, st: os.stat_result) -> None:
        original(tool, shown, st)
        if not swapped:
            swapped.append(True)
            swap()

    monkeypatch.setattr(_fs, "require_regular_file", check_then_swap)


def test_a_symlink_swapped_in_after_the_stat_is_not_followed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.txt"
    target.write_text("inside\n")

    def swap() -> None:
        target.unlink()
        target.symlink_to(root.parent / "outside" / "secret.txt")

    _swap_after_the_check(monkeypatch, swap)
    with pytest.raises(ToolError, match="symbolic link appeared"):
        open_for_read("read_file", "f.txt", str(target), nofollow=True)


@pytest.mark.parametrize("nofollow", [True, False])
def test_a_fifo_swapped_in_after_the_stat_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nofollow: bool
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("x")

    def swap() -> None:
        target.unlink()
        os.mkfifo(target)

    _swap_after_the_check(monkeypatch, swap)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            fd, _ = open_for_read("read_file", "f.txt", str(target), nofollow=nofollow)
            os.close(fd)
            outcome.append(None)
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # the open blocked on the FIFO: let it go, then fail
        os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("opening a FIFO swapped in blocked")
    [error] = outcome
    assert isinstance(error, ToolError)
    assert str(error) == "read_file: f.txt is a FIFO (named pipe), not a regular file; refused"


# -- read_all --------------------------------------------------------------------------------


def test_read_all_stops_at_the_limit_across_chunks(tmp_path: Path) -> None:
    data = bytes(range(256)) * (3 * 4096)  # 3 MiB: several of read_all's 1 MiB chunks
    (tmp_path / "big").write_bytes(data)
    limit = 3 * (1 << 19)  # 1.5 MiB: one whole chunk and half of the next
    fd = os.open(tmp_path / "big", os.O_RDONLY)
    assert read_all(fd, limit) == data[:limit]
    fd = os.open(tmp_path / "big", os.O_RDONLY)
    assert read_all(fd, 5) == data[:5]
    fd = os.open(tmp_path / "big", os.O_RDONLY)
    assert read_all(fd) == data


# -- locks and codecs ------------------------------------------------------------------------


def test_a_path_lock_is_dropped_once_nobody_holds_it(tmp_path: Path) -> None:
    path = str(tmp_path / "f.txt")
    with write_lock(path):
        assert path in _fs._path_locks  # pyright: ignore[reportPrivateUsage]
    assert path not in _fs._path_locks  # pyright: ignore[reportPrivateUsage]


def test_a_bom_is_remembered_and_a_bad_body_after_it_is_latin_1() -> None:
    with_bom = decode_text(b"\xef\xbb\xbfhi")
    assert (with_bom.text, with_bom.encoding) == ("hi", "utf-8-sig")
    bad = decode_text(b"\xef\xbb\xbf\xff")
    assert (bad.text, bad.encoding) == ("\xef\xbb\xbf\xff", "latin-1")  # every byte kept
    assert bad.encode(bad.text) == b"\xef\xbb\xbf\xff"


# -- the sandbox's root and io_path ----------------------------------------------------------


def test_a_sandbox_rooted_at_slash_allows_everything() -> None:
    sandbox = PathSandbox(["/"])
    assert sandbox.check("/etc/hostname") == "/etc/hostname"
    assert sandbox.is_allowed("/")


def test_io_path_names_the_sandbox_by_default(root: Path) -> None:
    with pytest.raises(SandboxError, match=r"^sandbox: "):
        PathSandbox([root]).io_path(str(root.parent / "outside" / "secret.txt"))


def test_unrestricted_io_path_anchors_relative_paths_at_cwd(tmp_path: Path) -> None:
    sandbox = PathSandbox(cwd=tmp_path)
    assert sandbox.io_path("a.txt") == os.path.join(tmp_path, "a.txt")
    assert sandbox.io_path("/abs/x.txt") == "/abs/x.txt"


# -- the sandbox's messages and resolution edges ---------------------------------------------


def test_the_sandboxs_refusals_say_what_and_name_it(root: Path) -> None:
    other = root.parent / "other"
    other.mkdir()
    sandbox = PathSandbox([root, other])
    with pytest.raises(SandboxError) as nul:
        sandbox.check("a\0b")
    assert str(nul.value) == "sandbox: path contains a NUL byte"
    with pytest.raises(SandboxError) as empty:
        sandbox.resolve("")
    assert str(empty.value) == "sandbox: the path is empty"
    outside = str(root.parent / "outside" / "secret.txt")
    with pytest.raises(SandboxError) as as_given:
        sandbox.check(outside)  # given as it resolves: no "it resolves to"
    assert str(as_given.value) == (
        f"sandbox: {outside} is outside the allowed paths ({root}, {other})"
    )
    with pytest.raises(SandboxError) as relative:
        sandbox.check("../outside/secret.txt")
    assert str(relative.value) == (
        f"sandbox: ../outside/secret.txt is outside the allowed paths ({root}, {other})"
        f" (it resolves to {outside})"
    )


def test_an_allowed_path_that_loops_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(SandboxError) as caught:
        PathSandbox([tmp_path / "loop"])
    assert str(caught.value) == f"allowed path {tmp_path / 'loop'}: too many symbolic links"


def test_the_paths_note_says_where_relative_paths_lead(root: Path, tmp_path: Path) -> None:
    other = root.parent / "other"
    other.mkdir()
    assert PathSandbox().paths_note() == (
        "Relative paths are resolved against the current working folder."
    )
    assert PathSandbox([root, other]).paths_note() == (
        f"Relative paths are resolved against {root} (the first allowed folder)."
        f" Only paths inside {root}, {other} can be used."
    )
    assert PathSandbox([root], cwd=other).paths_note() == (
        f"Relative paths are resolved against {other}. Only paths inside {root} can be used."
    )
    assert PathSandbox(cwd=tmp_path).paths_note() == (
        f"Relative paths are resolved against {tmp_path}."
    )


def test_the_repr_shows_the_roots_and_cwd(root: Path) -> None:
    assert repr(PathSandbox([root])) == f"PathSandbox([{str(root)!r}], cwd={str(root)!r})"


def test_a_relative_path_without_cwd_is_anchored_at_the_process_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_path("x/y") == str(tmp_path.resolve() / "x" / "y")


def test_a_link_that_cannot_be_read_is_kept_as_written_and_resolution_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    base = tmp_path.resolve()

    def vanished(path: str) -> str:
        raise FileNotFoundError(errno.ENOENT, "vanished", path)

    monkeypatch.setattr(os, "readlink", vanished)
    assert resolve_path(str(base / "link" / "x" / "y")) == str(base / "link" / "x" / "y")
