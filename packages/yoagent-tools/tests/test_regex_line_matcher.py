"""The Python engine's patterns (RE2): the options they are compiled with, the range a find
looks in, and the error a bad pattern gives, word for word."""

from __future__ import annotations

import pytest

from yoagent.core import ToolError
from yoagent.tools._regex import LineMatcher, _message


def test_a_pattern_is_a_case_sensitive_regex_unless_asked() -> None:
    assert LineMatcher("A").find(b"a", 0, 1) is None
    assert LineMatcher("A", ignore_case=True).find(b"xa", 0, 2) == 1
    assert LineMatcher("a.c").find(b"xabc", 0, 4) == 1
    assert LineMatcher("a.c", literal=True).find(b"xabc", 0, 4) is None
    assert LineMatcher("a.c", literal=True).find(b"xa.c", 0, 4) == 1


def test_no_match_crosses_a_newline() -> None:
    assert LineMatcher(r"a\sb").find(b"a\nb", 0, 3) is None
    assert LineMatcher("a[^x]b").find(b"a\nb", 0, 3) is None
    assert LineMatcher(r"a\sb").find(b"a b", 0, 3) == 0


def test_a_find_stops_at_the_end_of_its_range() -> None:
    matcher = LineMatcher("c")
    assert matcher.find(b"abcabc", 0, 2) is None
    assert matcher.find(b"abcabc", 3, 6) == 5


def test_a_bad_pattern_is_a_tool_error_and_writes_nothing_to_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(ToolError) as info:
        LineMatcher("a(b")
    assert str(info.value) == (
        "search: invalid regular expression 'a(b': missing ): (?m)a(b "
        "(the syntax is ripgrep's: no look-around or back-references)"
    )
    assert capfd.readouterr().err == ""


def test_re2s_error_text_is_decoded_or_named() -> None:
    assert _message(Exception(b"bad \xff byte")) == "bad \ufffd byte"
    assert _message(Exception("already text")) == "already text"
    assert _message(Exception()) == "not a valid pattern"
    assert _message(Exception(b"")) == "not a valid pattern"
