"""Two text helpers at their edges: a URL path segment that is a key only once unquoted,
an origin with a port but no host; and the bounds of the undecodable-byte surrogates
(U+DC80..U+DCFF) shown as ``\\xNN``, every other lone surrogate as U+FFFD."""

from __future__ import annotations

import pytest

from yoagent.core._support.surrogates import utf8_safe, utf8_safe_json
from yoagent.core._support.urls import INVALID_URL, display_url

KEY = "sk-ant-api03-" + "A" * 40


def test_a_segment_that_is_a_key_once_unquoted_is_redacted() -> None:
    quoted = KEY.replace("-", "%2D")
    assert display_url(f"https://h.test/v1/{quoted}/x") == "https://h.test/v1/[redacted]/x"


def test_an_origin_with_a_port_and_no_host_is_invalid() -> None:
    assert display_url("http://:8080", path=False) == INVALID_URL


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        (0xDC7F, "\ufffd"),
        (0xDC80, "\\x80"),
        (0xDC81, "\\x81"),
        (0xDCFF, "\\xff"),
        (0xDD00, "\ufffd"),
        (0xD800, "\ufffd"),
    ],
)
def test_only_the_undecodable_byte_surrogates_are_shown_as_bytes(code: int, shown: str) -> None:
    surrogate = chr(code)
    assert utf8_safe(f"a{surrogate}b") == f"a{shown}b"
    in_json = shown.replace("\\", "\\\\")
    assert utf8_safe_json(f'"a{surrogate}b"') == f'"a{in_json}b"'
