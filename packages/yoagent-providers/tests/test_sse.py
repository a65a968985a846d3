"""The SSE decoder follows the event-stream specification exactly."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from yoagent.providers._sse import SseDecoder, SseEvent


def decode(body: bytes) -> tuple[list[SseEvent], bool]:
    decoder = SseDecoder()
    events = decoder.feed(body)
    return events, decoder.close()


def test_lf_crlf_and_lone_cr_line_endings_are_equal() -> None:
    for nl in (b"\n", b"\r\n", b"\r"):
        events, cut = decode(b"event: a" + nl + b"data: x" + nl + nl)
        assert events == [SseEvent(event="a", data="x")]
        assert cut is False


def test_comments_are_ignored_and_one_leading_space_is_stripped() -> None:
    events, _ = decode(b": comment\ndata:  two spaces \ndata:none\n\n")
    assert events == [SseEvent(event="message", data=" two spaces \nnone")]


def test_events_without_data_are_not_dispatched_and_ids_persist() -> None:
    events, _ = decode(b"event: lonely\n\nid: 7\ndata\n\ndata: y\n\n")
    assert events == [
        SseEvent(event="message", data="", id="7"),
        SseEvent(event="message", data="y", id="7"),
    ]


def test_bom_is_skipped_and_unknown_fields_ignored() -> None:
    events, _ = decode(b"\xef\xbb\xbfdata: a\nretry: 10\nfoo: bar\n\n")
    assert events == [SseEvent(event="message", data="a")]


def test_body_ending_inside_an_event_is_reported() -> None:
    assert decode(b"data: complete\n\ndata: half")[1] is True
    assert decode(b"data: complete\n\ndata: no blank line\n")[1] is True
    assert decode(b"data: complete\n\n: trailing comment")[1] is False
    assert decode(b"data: complete\n\n")[1] is False


BODY = (
    b'event: a\r\ndata: {"x": 1}   \r\n\r\n: ping\n\ndata: line1\ndata: line2\n\ndata: [DONE]\r\r'
)


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    """Splitting the body anywhere (even inside CRLF or a UTF-8 character) changes nothing."""
    whole = decode(BODY)
    bounds = sorted({0, len(BODY), *cuts})
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for start, end in itertools.pairwise(bounds):
        events += decoder.feed(BODY[start:end])
    assert (events, decoder.close()) == whole


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    """Any bytes decode to events or nothing; the decoder never raises."""
    events, _ = decode(body)
    assert all(isinstance(e.data, str) for e in events)
