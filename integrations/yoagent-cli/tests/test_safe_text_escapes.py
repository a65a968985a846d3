"""``safe_text`` in-process: each character's visible form at the edges of its range, the
parts a renderer marks, the defaults (loose unless asked), and ``write_inert``."""

from __future__ import annotations

import io

import pytest

from yoagent.cli.safe_text import escape_char, inert, inert_parts, write_inert


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\t", "\\t"),
        ("\r", "\\r"),
        ("\n", "\\n"),
        ("\x1b", "\\x1b"),
        ("\xfe", "\\xfe"),
        ("\xff", "\\xff"),
        ("\u0100", "\\u0100"),
        ("\ufffe", "\\ufffe"),
        ("\uffff", "\\uffff"),
        ("\U00010000", "\\U00010000"),
        ("\U000e0001", "\\U000e0001"),
    ],
)
def test_each_character_has_its_visible_form(char: str, shown: str) -> None:
    assert escape_char(char) == shown


def test_inert_is_loose_unless_asked() -> None:
    text = "a\u200bb\tc\x1bd"  # a zero-width space (Cf): escaped only when strict
    assert inert(text) == "a\u200bb\tc\\x1bd"
    assert inert(text, strict=True) == "a\\u200bb\\tc\\x1bd"


def test_the_parts_mark_escapes_apart_from_plain_text() -> None:
    assert inert_parts("ab\x1b[2Jc\u202ed") == [
        ("ab", False),
        ("\\x1b", True),
        ("[2Jc", False),
        ("\\u202e", True),
        ("d", False),
    ]
    assert inert_parts("x\u200b\ty") == [("x\u200b\ty", False)]
    assert inert_parts("x\u200b\ty", strict=True) == [
        ("x", False),
        ("\\u200b", True),
        ("\\t", True),
        ("y", False),
    ]
    assert inert_parts("\x07") == [("\\x07", True)]


def test_write_inert_writes_one_inert_line() -> None:
    stream = io.StringIO()
    write_inert(stream, "bad\x1b]0;title\x07 name")
    assert stream.getvalue() == "bad\\x1b]0;title\\x07 name\n"
