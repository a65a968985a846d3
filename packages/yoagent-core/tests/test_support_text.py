"""The floor's text helpers: URL display, the surrogate policy, middle-cutting, warn_once."""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yoagent.core.support import (
    CUT_MARKER,
    Scrubber,
    cut_middle,
    display_url,
    html_summary,
    reset_warn_once,
    split_url,
    utf8_decode,
    utf8_safe,
    utf8_safe_json,
    warn_once,
)

# --- URL display ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://api.example/v1", "https://api.example/v1"),
        (
            "https://user:hunter2@prices.example/api.json?token=s3cret",
            "https://prices.example/api.json?…",
        ),
        ("https://u:p@Host.example:8443/a/b?c=d#e", "https://host.example:8443/a/b?…"),
        ("https://h/mcp/sk-abcdef123456/x#frag", "https://h/mcp/[redacted]/x"),
        ("http://[::1]:9/mcp", "http://[::1]:9/mcp"),
        ("http://127.0.0.1:99999/api.json", "http://127.0.0.1:99999/api.json"),  # as written
        ("http:///api.json", "http:///api.json"),
        ("  https://h/x  ", "https://h/x"),
        ("http://[::1", "<invalid URL>"),
    ],
)
def test_a_url_is_shown_without_credentials_query_fragment_or_key_like_segments(
    url: str, shown: str
) -> None:
    assert display_url(url) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("not a url", "<invalid URL>"),
        ("http:///api.json", "<invalid URL>"),
    ],
)
def test_text_that_is_not_a_url_has_no_origin(url: str, shown: str) -> None:
    assert display_url(url, path=False) == shown


def url_origin(url: str) -> str:
    return display_url(url, path=False)


# Moved from yoagent-mcp's tests with its copy of the URL display.
def test_the_origin_drops_userinfo_path_query_and_fragment() -> None:
    assert url_origin("https://u:p@Host.example:8443/a/b?c=d#e") == "https://host.example:8443"
    assert url_origin("http://[::1]:9/mcp") == "http://[::1]:9"


def test_the_text_for_what_is_not_a_url_is_the_callers() -> None:
    assert display_url("not a url", path=False, invalid="the server") == "the server"


@pytest.mark.parametrize("char", ["/", "?", "#", "@"])
@pytest.mark.parametrize("password", ["hunter2{c}secret", "1234{c}5678-long", "a{c}b{c}c-long"])
def test_a_password_holding_an_unencoded_delimiter_is_never_shown_nor_left_unscrubbed(
    password: str, char: str
) -> None:
    """A URL parser ends the authority at the first ``/ ? #``: the rest of such a password
    would read as a path, a query or a fragment. The user information runs to the last
    ``@`` before the host; where that is a guess, the display says so."""
    secret = password.format(c=char)
    url = f"https://admin:{secret}@db.example:5432/app"
    shown, origin = display_url(url), display_url(url, path=False)
    if char == "@":  # only the last @ before the host ends the user information
        assert (shown, origin) == ("https://db.example:5432/app", "https://db.example:5432")
    else:
        assert shown == "https://[redacted]@db.example:5432/app"
        assert origin == "https://[redacted]@db.example:5432"
    scrubber = Scrubber(urls=[url])
    assert scrubber.scrub(f"connect to {url} failed") == "connect to [redacted] failed"
    assert scrubber.scrub(f"password {secret}!") == "password [redacted]!"


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://registry.example/@scope/pkg", "https://registry.example"),
        ("https://api.example/users/me@example.com", "https://api.example"),
        ("http://[::1]:9/@handle", "http://[::1]:9"),
        ("https://h.example/find?email=me@example.com", "https://h.example"),
        ("https://h.example:8080/a/b@c", "https://h.example:8080"),
    ],
)
def test_an_at_sign_in_a_path_or_query_is_not_taken_for_user_information(
    url: str, origin: str
) -> None:
    assert display_url(url) == url.partition("?")[0] + ("?…" if "?" in url else "")
    assert display_url(url, path=False) == origin
    assert Scrubber(urls=[url]).scrub(f"see {url}") == f"see {url}"


def test_split_url_keeps_the_user_information_apart_and_says_when_it_guessed() -> None:
    parts, userinfo, guessed = split_url("https://admin:hunter2/secret@db.example:5432/app?x=1")
    assert (parts.scheme, parts.netloc, parts.path, parts.query) == (
        "https",
        "db.example:5432",
        "/app",
        "x=1",
    )
    assert (userinfo, guessed) == ("admin:hunter2/secret", True)
    assert split_url("http://u:p@h:8080/x#f") == (
        urlsplit("http://h:8080/x#f"),
        "u:p",
        False,
    )
    assert split_url("https://registry.example/@scope/pkg").userinfo == ""
    assert split_url("not a url") == (urlsplit("not a url"), "", False)
    with pytest.raises(ValueError, match="Invalid IPv6 URL"):
        split_url("http://[::1")


# --- the surrogate policy ------------------------------------------------------------------


def test_valid_text_is_returned_as_is() -> None:
    text = "fine é 😀 \\x41"
    assert utf8_safe(text) is text
    assert utf8_safe_json(text) is text


def test_an_undecodable_os_byte_shows_as_its_escape_and_any_other_surrogate_as_fffd() -> None:
    import os

    name = os.fsdecode(b"report-\xff.txt")
    assert utf8_safe(name) == "report-\\xff.txt"
    assert utf8_safe("open \ud800 and \udc00") == "open \ufffd and \ufffd"
    assert utf8_decode(b"a\xffb") == "a\\xffb" == utf8_safe(os.fsdecode(b"a\xffb"))


def test_in_json_the_escape_reads_as_text_or_round_trips() -> None:
    text = json.dumps({"name": "bad \udcff and \ud800"}, ensure_ascii=False)
    sent = utf8_safe_json(text)
    sent.encode()
    assert json.loads(sent) == {"name": "bad \\xff and \ufffd"}
    stored = utf8_safe_json(text, lossless=True)
    stored.encode()
    assert json.loads(stored) == {"name": "bad \udcff and \ud800"}


# Any text, lone surrogates (OS bytes and others) included.
any_text = st.lists(
    st.one_of(st.characters(), st.sampled_from(["\ud800", "\udbff", "\udc00", "\udc80", "\udcff"]))
).map("".join)


@given(any_text)
def test_any_text_becomes_encodable(text: str) -> None:
    """Invariant: the policy's output always encodes as UTF-8, and valid text is unchanged."""
    safe = utf8_safe(text)
    safe.encode()
    try:
        text.encode()
    except UnicodeEncodeError:
        return
    assert safe == text


@given(any_text)
def test_lossless_json_round_trips_any_text(text: str) -> None:
    """Invariant: stored JSON reads back as the text does through JSON's own escapes
    (exactly the text, but for a high surrogate followed by a low one, which JSON reads
    as the one character the pair encodes)."""
    line = utf8_safe_json(json.dumps(text, ensure_ascii=False), lossless=True)
    line.encode()
    assert json.loads(line) == json.loads(json.dumps(text))
    if not any("\ud800" <= char <= "\udbff" for char in text):
        assert json.loads(line) == text


# --- middle-cutting ------------------------------------------------------------------------


def test_a_long_text_keeps_its_head_and_tail_around_the_marker() -> None:
    text = "a" * 500 + "b" * 500
    assert (
        cut_middle(text, 100) == "a" * 50 + "\n\n[... 900 characters truncated ...]\n\n" + "b" * 50
    )


def test_the_detail_goes_inside_the_marker() -> None:
    text = "x" * 200
    detail = "the full output is in shared state under 'tool-output-c1'"
    assert cut_middle(text, 10, detail=detail) == (
        "xxxxx\n\n[... 190 characters truncated; the full output is in shared state under "
        "'tool-output-c1' ...]\n\nxxxxx"
    )


def test_a_text_that_fits_or_no_limit_is_unchanged() -> None:
    assert cut_middle("short", 5) == "short"
    assert cut_middle("short", None) == "short"
    with pytest.raises(ValueError, match="limit"):
        cut_middle("long enough", -1)


def test_a_caller_may_keep_its_own_marker_spelling() -> None:
    assert cut_middle("abcdefghij", 4, marker="\n[truncated {cut} chars]\n") == (
        "ab\n[truncated 6 chars]\nij"
    )
    assert "{cut}" in CUT_MARKER and "{detail}" in CUT_MARKER


@given(st.text(), st.integers(min_value=0, max_value=50))
def test_a_cut_keeps_exactly_limit_characters_of_the_text(text: str, limit: int) -> None:
    """Invariant: head + tail is ``limit`` characters of the text, in order; the head gets
    the smaller half, and the marker counts what went."""
    out = cut_middle(text, limit)
    if len(text) <= limit:
        assert out == text
        return
    head, tail = limit // 2, limit - limit // 2
    marker = CUT_MARKER.format(cut=len(text) - limit, detail="")
    assert out == text[:head] + marker + text[len(text) - tail :]


@given(st.text(), st.integers(min_value=0, max_value=120), st.text(max_size=10))
def test_a_fitting_cut_counts_its_marker_and_is_left_alone_the_second_time(
    text: str, limit: int, detail: str
) -> None:
    """Invariant (``fit=True``, compaction's tool outputs): the result is at most ``limit``
    characters, marker included: the text's head and tail, the head the smaller half,
    around a marker counting what went; a marker that does not fit leaves the head alone.
    Cutting the result again changes nothing."""
    out = cut_middle(text, limit, detail=detail, fit=True)
    assert len(out) <= limit or out == text
    assert cut_middle(out, limit, detail=detail, fit=True) == out
    if len(text) <= limit:
        assert out == text
        return
    note = CUT_MARKER.format(cut=len(text), detail=f"; {detail}" if detail else "")
    room = limit - len(note)
    if room <= 0:
        assert out == text[:limit]
        return
    kept = CUT_MARKER.format(cut=len(text) - room, detail=f"; {detail}" if detail else "")
    assert out == text[: room // 2] + kept + text[len(text) - (room - room // 2) :]


def test_a_fitting_cut_of_a_tool_output() -> None:
    output = "line 0\n" + "x" * 1_000 + "o" * 100  # 1107 characters
    marker = "\n[... {cut} characters of tool output truncated{detail} ...]\n"  # 52 here
    out = cut_middle(output, 120, marker=marker, fit=True)
    assert out == (  # 68 characters of the text: 34 of its head, 34 of its tail
        "line 0\n" + "x" * 27 + "\n[... 1039 characters of tool output truncated ...]\n" + "o" * 34
    )
    assert len(out) == 120


# --- warn_once ------------------------------------------------------------------------------


def test_a_condition_is_logged_once_per_logger_until_reset(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = logging.getLogger("yoagent.test_floor.first")
    second = logging.getLogger("yoagent.test_floor.second")
    reset_warn_once()
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            warn_once(first, "k", "first %s", 1)
            warn_once(second, "k", "second %s", 2)
        reset_warn_once(first)
        warn_once(first, "k", "first again")
        warn_once(second, "k", "second again")
        reset_warn_once()
        warn_once(second, "k", "second after a full reset")
    assert [record.getMessage() for record in caplog.records] == [
        "first 1",
        "second 2",
        "first again",
        "second after a full reset",
    ]


# -- html_summary -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content_type", "summary"),
    [
        (
            "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>",
            "",
            "an HTML page (title: 404 Not Found)",
        ),
        (
            "  <HTML><head><TITLE lang=en>\n  Bad &amp; Gateway \n</TITLE></head></HTML>",
            "",
            "an HTML page (title: Bad & Gateway)",
        ),
        ('<?xml version="1.0"?>\n<!doctype html><p>x', "", "an HTML page"),
        ("<p>no page start</p>", "text/html; charset=utf-8", "an HTML page"),
        ("<p>no page start</p>", "", None),
        ('{"error": "<html>"}', "application/json", None),
        ("", "", None),
    ],
)
def test_html_summary_names_a_web_page_by_its_title(
    text: str, content_type: str, summary: str | None
) -> None:
    assert html_summary(text, content_type) == summary


def test_html_summary_cuts_a_long_title() -> None:
    summary = html_summary(f"<html><title>{'t' * 500}</title></html>")
    assert summary == f"an HTML page (title: {'t' * 120}…)"
