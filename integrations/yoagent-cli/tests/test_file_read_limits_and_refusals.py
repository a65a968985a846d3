"""Reading a file before a change, at its edges: each refusal word for word, the size
limit at exactly ``limit`` bytes, how much is asked of each read (never more than
``limit + 1`` in all, whatever the file says its size is), and the limit in words."""

from __future__ import annotations

import os
import stat
import types
from pathlib import Path

import pytest

from yoagent.cli import file_read
from yoagent.cli.file_read import Unreadable, kind_of, read_regular, resolve_inside
from yoagent.tools import PathSandbox


def refusal(path: str, limit: int = 100, shown: str = "f") -> str:
    with pytest.raises(Unreadable) as raised:
        read_regular(path, limit, shown)
    return str(raised.value)


def test_an_unreadable_file_keeps_what_was_shown_and_why() -> None:
    error = Unreadable("data", "is a FIFO, not a regular file")
    assert error.args == ("data", "is a FIFO, not a regular file")
    assert (error.shown, error.reason) == ("data", "is a FIFO, not a regular file")
    assert str(error) == "data is a FIFO, not a regular file"


def test_a_kind_without_a_name_is_a_special_file() -> None:
    assert kind_of(stat.S_IFLNK) == "a special file"
    assert kind_of(stat.S_IFIFO) == "a FIFO"


def test_a_path_outside_or_unresolvable_is_said_with_where_it_leads(tmp_path: Path) -> None:
    sandbox = PathSandbox([tmp_path])
    with pytest.raises(Unreadable) as outside:
        resolve_inside(sandbox, "/etc/hostname")
    assert str(outside.value) == "/etc/hostname is outside the allowed paths"
    with pytest.raises(Unreadable) as via:
        resolve_inside(sandbox, "../elsewhere")
    assert str(via.value) == (
        f"../elsewhere resolves to {tmp_path.parent / 'elsewhere'}, outside the allowed paths"
    )
    with pytest.raises(Unreadable) as bad:
        resolve_inside(sandbox, "a\x00b")
    assert str(bad.value) == "a\x00b cannot be resolved (sandbox: path contains a NUL byte)"
    assert resolve_inside(sandbox, "inside.txt") == str(tmp_path / "inside.txt")


def test_a_path_through_a_file_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    assert refusal(str(tmp_path / "file.txt" / "sub")) == "f cannot be read (Not a directory)"


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux's /proc")
def test_a_read_that_fails_is_said_by_its_error() -> None:
    # A regular file by fstat, whose read at offset 0 fails (EIO).
    assert refusal("/proc/self/mem") == "f cannot be read (Input/output error)"


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ten"
    path.write_bytes(b"0123456789")
    assert read_regular(str(path), 10, "ten") == b"0123456789"
    assert refusal(str(path), 9, "ten") == "ten is larger than 9 bytes"


class Reads:
    """``os`` for file_read, with a file that says it has ``size`` bytes and gives
    ``content`` at most ``most`` bytes a read; keeps each read's request."""

    def __init__(self, content: bytes, size: int, most: int) -> None:
        self.content, self.size, self.most = content, size, most
        self.asked: list[int] = []
        self.at = 0

    def fstat(self, fd: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(st_mode=stat.S_IFREG | 0o644, st_size=self.size)

    def read(self, fd: int, count: int) -> bytes:
        self.asked.append(count)
        chunk = self.content[self.at : self.at + min(count, self.most)]
        self.at += len(chunk)
        return chunk


def faked(monkeypatch: pytest.MonkeyPatch, reads: Reads) -> None:
    fake = types.SimpleNamespace(open=os.open, close=os.close, fstat=reads.fstat, read=reads.read)
    monkeypatch.setattr(file_read, "os", fake)


def test_short_reads_are_joined_asking_only_what_is_left_of_limit_plus_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_bytes(b"")
    reads = Reads(b"0123456789", size=10, most=4)
    faked(monkeypatch, reads)
    assert read_regular(str(tmp_path / "f"), 10, "f") == b"0123456789"
    assert reads.asked == [11, 7, 3, 1]  # the last finds the end


def test_a_file_that_grew_since_its_size_was_taken_is_refused_after_limit_plus_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_bytes(b"")
    reads = Reads(b"x" * 50, size=5, most=50)
    faked(monkeypatch, reads)
    assert refusal(str(tmp_path / "f"), 10) == "f is larger than 10 bytes"
    assert reads.asked == [11]


@pytest.mark.parametrize(
    ("limit", "said"),
    [
        (1024 * 1024, "1 MB"),
        (1024 * 1024 - 1, "1048575 bytes"),
        (5 * 1024 * 1024 // 2, "2.5 MB"),
        (2 * 1024 * 1024 - 1024, "1.99902 MB"),
    ],
)
def test_the_limit_in_words(tmp_path: Path, limit: int, said: str) -> None:
    path = tmp_path / "big"
    with path.open("wb") as file:
        file.truncate(limit + 1)
    assert refusal(str(path), limit) == f"f is larger than {said}"
