"""The SSE reader's field rules against httpx-sse's ``SSEDecoder`` (the decoder it
replaced, kept as the oracle): on any stream of lines, the same events with the same
type, data, id and retry, and nothing dispatched that carries no data."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yoagent.providers._sse import SseEvent, SseReader

decoders = pytest.importorskip("httpx_sse._decoders", reason="httpx-sse is the oracle")

Event = tuple[str, str, str, int | None]

FIELD_NAMES = ["data", "event", "id", "retry", "", "dat", "data ", "Data", "ignored"]
VALUES = ["", " ", "  x", "x", " 12", "12", "+3", "-1", "1_0", "a\0b", ": not a field", "é"]


@st.composite
def lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["field", "bare", "comment", "blank"]))
    if kind == "blank":
        return ""
    if kind == "comment":
        return ":" + draw(st.sampled_from(VALUES))
    name = draw(st.sampled_from(FIELD_NAMES))
    if kind == "bare":  # a field name with no colon: an empty value
        return name or "data"
    return f"{name}:{draw(st.sampled_from(VALUES))}"


def oracle(stream: list[str]) -> list[Event]:
    decoder = decoders.SSEDecoder()
    out: list[Event] = []
    for line in stream:
        event = decoder.decode(line)
        if event is not None and event.data:
            out.append((event.event, event.data, event.id, event.retry))
    return out


def ours(body: bytes) -> list[Event]:
    return [(e.event, e.data, e.id, e.retry) for e in SseReader().feed(body)]


@given(st.lists(lines(), max_size=40))
def test_every_line_stream_gives_the_events_httpx_sse_gives(stream: list[str]) -> None:
    body = "".join(line + "\n" for line in stream).encode()
    assert ours(body) == oracle(stream)


@given(st.lists(lines(), max_size=30), st.integers(min_value=1, max_value=7))
def test_the_fields_of_an_event_carry_over_between_chunks(stream: list[str], size: int) -> None:
    body = "".join(line + "\r\n" for line in stream).encode()
    reader = SseReader()
    got: list[Event] = []
    for start in range(0, len(body), size):
        got += [(e.event, e.data, e.id, e.retry) for e in reader.feed(body[start : start + size])]
    assert got == oracle(stream)


def test_an_empty_chunk_between_a_cr_and_its_lf_changes_nothing() -> None:
    """The LF after a CR is the same line end, however many empty chunks come between."""
    reader = SseReader()
    got = [reader.feed(piece) for piece in (b"data: a\r", b"", b"\ndata: b\r", b"", b"\n\n")]
    assert [[(e.event, e.data) for e in events] for events in got] == [
        [],
        [],
        [],
        [],
        [("message", "a\nb")],
    ]


def test_the_rules_one_by_one() -> None:
    body = (
        b"event: first\nid: 7\nretry: 250\ndata: a\ndata:b\n\n"  # two data lines joined
        b"data:  two spaces\n\n"  # one space stripped; type, retry reset, id kept
        b"id: bad\0id\nevent\ndata\ndata\n\n"  # NUL: id ignored; bare fields are empty
        b"event: lonely\nretry: x\n\n"  # no data: nothing dispatched
        b"data: after\n\n"  # the lonely event's type does not leak into the next
    )
    assert ours(body) == [
        ("first", "a\nb", "7", 250),
        ("message", " two spaces", "7", None),
        ("message", "\n", "7", None),
        ("message", "after", "7", None),
    ]


def test_an_event_is_built_with_the_format_s_default_type() -> None:
    assert SseEvent(data="x").event == "message"
    assert SseEvent(event="", data="x").event == "message"
    assert repr(SseEvent(event="e", data="d", id="1")) == "SseEvent(event='e', data='d', id='1')"
    assert (
        repr(SseEvent(data="d", retry=5)) == "SseEvent(event='message', data='d', id='', retry=5)"
    )
