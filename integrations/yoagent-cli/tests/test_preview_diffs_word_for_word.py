"""The approval preview word for word: the diff's headers and its two lines of context,
the cut at 80 diff lines and at a new file's 20 lines, the notes on line endings, each
form of an edit's arguments, each reason there is no preview, a file that is not UTF-8,
and the worker thread a cancelled caller leaves behind."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from yoagent.cli import preview as preview_module
from yoagent.cli.preview import preview, preview_lines
from yoagent.tools import PathSandbox


def lines_of(tmp_path: Path, tool: str, **arguments: Any) -> list[str]:
    return preview_lines(tool, {"path": "f.txt", **arguments}, PathSandbox([tmp_path]))


def test_a_diff_has_its_headers_and_two_lines_of_context(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"{n}\n" for n in range(1, 11)))
    content = "".join(f"{'five' if n == 5 else n}\n" for n in range(1, 11))
    assert lines_of(tmp_path, "write_file", content=content) == [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -3,5 +3,5 @@",
        " 3",
        " 4",
        "-5",
        "+five",
        " 6",
        " 7",
    ]


def test_an_edit_diff_names_the_file_and_reads_it_in_its_own_encoding(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"\xff old\n")
    assert lines_of(tmp_path, "edit_file", old_text="old", new_text="new") == [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -1 +1 @@",
        "-ÿ old",
        "+ÿ new",
    ]


def test_a_diff_is_cut_after_80_lines(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("")
    exactly = lines_of(tmp_path, "write_file", content="x\n" * 77)  # 3 headers + 77
    assert len(exactly) == 80
    assert exactly[-1] == "+x"
    over = lines_of(tmp_path, "write_file", content="x\n" * 78)
    assert len(over) == 81
    assert over[-1] == "… 1 more diff lines"


def test_a_new_file_shows_20_lines_then_counts_the_rest(tmp_path: Path) -> None:
    twenty = lines_of(tmp_path, "write_file", content="y\n" * 20)
    assert twenty == ["new file f.txt", *["+y"] * 20]
    more = lines_of(tmp_path, "write_file", content="y\n" * 21)
    assert more == ["new file f.txt", *["+y"] * 20, "… 1 more lines"]


def test_line_endings_are_said_only_between_two_kinds(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\n")
    assert lines_of(tmp_path, "write_file", content="a\nb\n")[0] == (
        "(line endings change: mixed → LF)"
    )
    (tmp_path / "f.txt").write_bytes(b"b\r\n")
    assert lines_of(tmp_path, "write_file", content="a") == [
        "(the file will no longer end with a newline)",
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -1 +1 @@",
        "-b\r",
        "+a",
    ]


def test_an_edit_given_as_a_list_of_edits(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    edits = [{"old_text": "one", "new_text": "1"}, {"old_text": "two", "new_text": "2"}]
    assert lines_of(tmp_path, "edit_file", edits=edits)[-4:] == ["-one", "-two", "+1", "+2"]


def test_edits_that_are_not_a_list_fall_back_to_old_and_new_text(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\n")
    shown = lines_of(tmp_path, "edit_file", edits="junk", old_text="one", new_text="1")
    assert shown[-2:] == ["-one", "+1"]


INCOMPLETE = ["(no preview: the edit's arguments are incomplete)"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"edits": ["not a table"]},
        {"edits": [{"old_text": "one"}]},
        {"edits": [{"new_text": "1"}]},
        {"edits": [{"old_text": "one", "new_text": 1}]},
        {"old_text": "one"},
        {"new_text": "1"},
    ],
)
def test_an_edit_missing_a_part_has_no_preview(tmp_path: Path, arguments: dict[str, Any]) -> None:
    (tmp_path / "f.txt").write_text("one\n")
    assert lines_of(tmp_path, "edit_file", **arguments) == INCOMPLETE


def test_an_edit_that_will_fail_says_why_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abc\n")
    assert lines_of(tmp_path, "edit_file", old_text="zzz", new_text="new") == [
        "(this edit will fail: edit_file: old_text was not found in f.txt. No edit was applied.)"
    ]


def test_a_write_of_text_that_cannot_be_encoded_will_fail(tmp_path: Path) -> None:
    assert lines_of(tmp_path, "write_file", content="a\ud800b") == [
        "(this write will fail: the content is not valid text)"
    ]


def test_only_writes_and_edits_with_a_path_are_previewed(tmp_path: Path) -> None:
    sandbox = PathSandbox([tmp_path])
    assert preview_lines("read_file", {"path": "/etc/hostname"}, sandbox) == []
    assert preview_lines("write_file", {"path": None, "content": "x"}, sandbox) == []


async def test_a_cancelled_preview_leaves_its_worker_thread_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()

    def stalled(*arguments: Any) -> list[str]:
        release.wait(2)
        return []

    monkeypatch.setattr(preview_module, "preview_lines", stalled)
    started = time.monotonic()
    try:
        with anyio.move_on_after(0.05):
            await preview("write_file", {"path": "f", "content": ""}, PathSandbox([Path.cwd()]))
        assert time.monotonic() - started < 1
    finally:
        release.set()
