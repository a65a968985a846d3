"""The SSE reader follows the event-stream format, within limits, in linear time."""

from __future__ import annotations

import gzip
import itertools
import time
import tracemalloc
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yoagent.core import ErrorKind, ProviderError
from yoagent.providers._body import StreamLimits, bounded_body
from yoagent.providers._sse import SseReader


def decode(body: bytes, limits: StreamLimits | None = None) -> list[tuple[str, str, str]]:
    reader = SseReader(limits or StreamLimits())
    return [(e.event, e.data, e.id) for e in reader.feed(body)]


def test_lf_crlf_and_lone_cr_line_endings_are_equal() -> None:
    for nl in (b"\n", b"\r\n", b"\r"):
        assert decode(b"event: a" + nl + b"data: x" + nl + nl) == [("a", "x", "")]


def test_comments_are_ignored_and_one_leading_space_is_stripped() -> None:
    assert decode(b": comment\ndata:  two spaces \ndata:none\n\n") == [
        ("message", " two spaces \nnone", "")
    ]


def test_events_without_data_are_not_dispatched_and_ids_persist() -> None:
    assert decode(b"event: lonely\n\nid: 7\ndata\n\ndata: y\n\n") == [("message", "y", "7")]


def test_bom_is_skipped_and_unknown_fields_ignored() -> None:
    assert decode(b"\xef\xbb\xbfdata: a\nretry: 10\nfoo: bar\n\n") == [("message", "a", "")]


def test_an_unfinished_event_is_not_dispatched() -> None:
    """Whether a cut body lost anything is the protocol's call (its terminal event)."""
    assert decode(b"data: complete\n\ndata: half") == [("message", "complete", "")]
    assert decode(b"data: complete\n\ndata: no blank line\n") == [("message", "complete", "")]


BODY = (
    b'event: a\r\ndata: {"x": 1}   \r\n\r\n: ping\n\ndata: line1\ndata: line2\n\n'
    b"data: caf\xc3\xa9\r\rdata: [DONE]\r\r"
)


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    """Splitting the body anywhere (even inside CRLF or a UTF-8 character) changes nothing."""
    whole = decode(BODY)
    assert len(whole) == 4
    bounds = sorted({0, len(BODY), *cuts})
    reader = SseReader()
    events = []
    for start, end in itertools.pairwise(bounds):
        events += [(e.event, e.data, e.id) for e in reader.feed(BODY[start:end])]
    assert events == whole


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    """Any bytes decode to events or nothing; the reader never raises under the limits."""
    assert all(isinstance(data, str) for _, data, _ in decode(body))


def feed_in_pieces(reader: SseReader, body: bytes, size: int) -> None:
    for start in range(0, len(body), size):
        reader.feed(body[start : start + size])


def test_an_event_over_the_limit_is_refused_whole_or_in_pieces() -> None:
    limits = StreamLimits(max_event_bytes=1000)
    assert decode(b"data: " + b"x" * 900 + b"\n\n", limits)  # under the limit
    for body in (
        b"data: " + b"x" * 2000 + b"\n\n",  # one long line
        b"data: xxxxxxxxxx\n" * 200 + b"\n",  # many short lines, one event
        b": " + b"c" * 2000,  # a line that never ends
    ):
        with pytest.raises(ProviderError) as caught:
            feed_in_pieces(SseReader(limits), body, 64)
        assert caught.value.kind is ErrorKind.API
        assert "max_event_bytes" in caught.value.message


def test_sse_decoder_is_linear_and_bounded_on_a_64_mib_event() -> None:
    """Issue 10.6: a 64 MiB event took 15 s (each chunk re-copied the whole buffer)."""
    size = 64 * 1024 * 1024
    line = b"data: " + b"x" * size + b"\n\n"
    reader = SseReader(StreamLimits(max_event_bytes=size + 1024))
    started = time.perf_counter()
    events = []
    for start in range(0, len(line), 65536):
        events += reader.feed(line[start : start + 65536])
    elapsed = time.perf_counter() - started
    assert [len(e.data) for e in events] == [size]
    # Linear is well under a second here; the quadratic decoder took 15 s. Generous for load.
    assert elapsed < 8, elapsed


async def _collect(raw: list[bytes], encoding: str, limits: StreamLimits) -> int:
    async def source():
        for piece in raw:
            yield piece

    total = 0
    async for piece in bounded_body(source(), encoding, limits):
        assert len(piece) <= 64 * 1024
        total += len(piece)
    return total


async def test_sse_decoder_caps_a_gzip_bomb_without_inflating_it() -> None:
    """Issue 10.6: 0.5 MB of gzip inflated to 3.1 GB in memory; now it stops at the cap."""
    bomb = gzip.compress(b"\n" * (96 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 128 * 1024
    pieces = [bomb[i : i + 65536] for i in range(0, len(bomb), 65536)]
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as caught:
            await _collect(pieces, "gzip", StreamLimits(max_body_bytes=32 * 1024 * 1024))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.kind is ErrorKind.API
    assert "max_body_bytes" in caught.value.message
    assert peak < 16 * 1024 * 1024, peak


async def test_gzip_and_both_deflate_forms_are_inflated() -> None:
    text = b"data: hello\n\n" * 1000
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    for encoding, body in (
        ("gzip", gzip.compress(text)),
        ("deflate", zlib.compress(text)),
        ("deflate", raw_deflate.compress(text) + raw_deflate.flush()),
        ("", text),
    ):
        assert await _collect([body[:10], body[10:]], encoding, StreamLimits()) == len(text)


async def test_a_corrupt_or_unknown_encoding_is_a_clear_error() -> None:
    with pytest.raises(ProviderError, match="corrupt"):
        await _collect([b"not gzip at all"], "gzip", StreamLimits())
    with pytest.raises(ProviderError, match="unsupported content-encoding 'br'"):
        await _collect([b"x"], "br", StreamLimits())
