"""The eventstream decoder: aws-sdk-go's vectors, every split point, botocore as an oracle."""

from __future__ import annotations

import base64
import json
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_helpers import REPO

from yoagent.providers._eventstream import (
    MAX_HEADERS_LENGTH,
    MAX_PAYLOAD_LENGTH,
    EventStreamDecoder,
    EventStreamError,
    Frame,
    FrameTooLarge,
    HeaderType,
    HeaderValue,
    Timestamp,
    encode_frame,
)

VECTORS = REPO.parent / "shared" / "corpus" / "eventstream" / "aws-sdk-go"
BEDROCK = REPO.parent / "shared" / "corpus" / "providers" / "bedrock" / "pydantic-ai"
NO_VECTORS = pytest.mark.skipif(
    not VECTORS.is_dir(), reason=f"aws-sdk-go eventstream vectors not found at {VECTORS}"
)


def vector_names(kind: str) -> list[str]:
    folder = VECTORS / "encoded" / kind
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else ["absent"]


def decode_all(chunks: list[bytes]) -> list[Frame]:
    decoder = EventStreamDecoder()
    frames = [frame for chunk in chunks for frame in decoder.feed(chunk)]
    decoder.close()
    return frames


def as_tuples(frames: list[Frame]) -> list[tuple[dict[str, HeaderValue], bytes]]:
    return [(frame.headers, frame.payload) for frame in frames]


def expected_header(header: dict[str, Any]) -> tuple[HeaderType, HeaderValue]:
    """A decoded-vector header as (type, value): strings/bytes/uuids are base64 there."""
    kind = HeaderType(header["type"])
    raw = header["value"]
    if kind in (HeaderType.STRING, HeaderType.BYTES, HeaderType.UUID):
        data = base64.b64decode(raw)
        if kind is HeaderType.STRING:
            return kind, data.decode()
        return kind, (uuid.UUID(bytes=data) if kind is HeaderType.UUID else data)
    if kind is HeaderType.TIMESTAMP:
        return kind, Timestamp(raw)
    return kind, raw


@NO_VECTORS
@pytest.mark.parametrize("name", vector_names("positive"))
def test_every_positive_vector_decodes_to_its_headers_and_payload(name: str) -> None:
    encoded = (VECTORS / "encoded" / "positive" / name).read_bytes()
    decoded = json.loads((VECTORS / "decoded" / "positive" / name).read_text())
    (frame,) = decode_all([encoded])
    expected = {h["name"]: expected_header(h) for h in decoded["headers"]}
    assert frame.headers == {name: value for name, (_, value) in expected.items()}
    for header_name, (kind, _) in expected.items():
        value = frame.headers[header_name]
        if kind is HeaderType.TIMESTAMP:
            assert isinstance(value, Timestamp)
        elif kind in (HeaderType.BOOL_TRUE, HeaderType.BOOL_FALSE):
            assert value is (kind is HeaderType.BOOL_TRUE)
    assert frame.payload == base64.b64decode(decoded["payload"])
    total, headers_length, prelude_crc = struct.unpack_from(">IIi", encoded)
    assert (total, headers_length, prelude_crc) == (
        decoded["total_length"],
        decoded["headers_length"],
        decoded["prelude_crc"],
    )
    assert struct.unpack(">i", encoded[-4:])[0] == decoded["message_crc"]


@NO_VECTORS
@pytest.mark.parametrize("name", vector_names("positive"))
def test_the_encoder_reproduces_every_positive_vector_byte_for_byte(name: str) -> None:
    encoded = (VECTORS / "encoded" / "positive" / name).read_bytes()
    decoded = json.loads((VECTORS / "decoded" / "positive" / name).read_text())
    headers = [(h["name"], *expected_header(h)) for h in decoded["headers"]]
    assert encode_frame(headers, base64.b64decode(decoded["payload"])) == encoded


@NO_VECTORS
@pytest.mark.parametrize("name", vector_names("negative"))
def test_every_negative_vector_fails_with_its_checksum_error(name: str) -> None:
    encoded = (VECTORS / "encoded" / "negative" / name).read_bytes()
    expected = (VECTORS / "decoded" / "negative" / name).read_text().strip()
    with pytest.raises(EventStreamError, match=f"^{expected}"):
        decode_all([encoded])


@NO_VECTORS
@pytest.mark.parametrize("name", vector_names("positive"))
def test_each_vector_split_at_every_byte_decodes_the_same(name: str) -> None:
    encoded = (VECTORS / "encoded" / "positive" / name).read_bytes()
    whole = as_tuples(decode_all([encoded]))
    for cut in range(len(encoded) + 1):
        assert as_tuples(decode_all([encoded[:cut], encoded[cut:]])) == whole, cut
    assert as_tuples(decode_all([encoded[i : i + 1] for i in range(len(encoded))])) == whole


@NO_VECTORS
def test_all_vectors_back_to_back_split_anywhere_decode_in_order() -> None:
    names = vector_names("positive")
    bodies = [(VECTORS / "encoded" / "positive" / n).read_bytes() for n in names]
    joined = b"".join(bodies)
    expected = [t for body in bodies for t in as_tuples(decode_all([body]))]
    for cut in range(0, len(joined) + 1, 7):
        for second in (cut + 1, cut + 13, cut + 200):
            pieces = [joined[:cut], joined[cut:second], joined[second:]]
            assert as_tuples(decode_all(pieces)) == expected


def bedrock_streams() -> list[Any]:
    files = sorted(BEDROCK.glob("*.eventstream")) if BEDROCK.is_dir() else []
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {BEDROCK}"))]
    return [pytest.param(p, id=p.name) for p in files]


@pytest.mark.parametrize("path", bedrock_streams())
def test_recorded_bedrock_bodies_decode_exactly_as_botocore_decodes_them(path: Path) -> None:
    eventstream = pytest.importorskip("botocore.eventstream", reason="botocore (dev only)")
    body = path.read_bytes()
    oracle = eventstream.EventStreamBuffer()
    oracle.add_data(body)
    expected = [(dict(m.headers), m.payload) for m in oracle]
    assert expected
    assert as_tuples(decode_all([body])) == expected
    # Fed in odd-sized chunks it decodes the same.
    assert as_tuples(decode_all([body[i : i + 37] for i in range(0, len(body), 37)])) == expected


def frame_with_prelude(total: int, headers_length: int, rest: bytes = b"") -> bytes:
    prelude = struct.pack(">II", total, headers_length)
    return prelude + struct.pack(">I", zlib.crc32(prelude)) + rest


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (frame_with_prelude(15, 0), "cannot hold"),
        (frame_with_prelude(20, 8), "cannot hold"),
        (frame_with_prelude(16 + MAX_HEADERS_LENGTH + 1, MAX_HEADERS_LENGTH + 1), "too large"),
        (frame_with_prelude(16 + MAX_PAYLOAD_LENGTH + 1, 0), "too large"),
    ],
    ids=["shorter than a frame", "headers past the end", "headers too long", "payload too long"],
)
def test_impossible_or_oversized_preludes_are_refused_before_buffering(
    body: bytes, message: str
) -> None:
    with pytest.raises(EventStreamError, match=message):
        decode_all([body])


def test_a_frame_over_the_decoders_cap_is_refused_from_its_prelude_alone() -> None:
    decoder = EventStreamDecoder(max_frame_bytes=1024)
    small = encode_frame({":event-type": "messageStop"}, b"{}")
    big = encode_frame({":event-type": "metadata"}, b"x" * 2048)
    assert len(list(decoder.feed(small))) == 1
    with pytest.raises(FrameTooLarge) as caught:
        list(decoder.feed(big[:12]))  # the prelude is enough to refuse it
    assert (caught.value.size, caught.value.limit) == (len(big), 1024)
    assert "frame too large" in str(caught.value)


def test_a_body_ending_inside_a_frame_names_the_leftover_bytes() -> None:
    frame = encode_frame({":event-type": "messageStop"}, b"{}")
    decoder = EventStreamDecoder()
    assert list(decoder.feed(frame + frame[:10])) != []
    assert decoder.pending == 10
    with pytest.raises(EventStreamError, match="ended inside a frame"):
        decoder.close()


def raw_frame(headers: bytes, payload: bytes = b"") -> bytes:
    total = 16 + len(headers) + len(payload)
    prelude = struct.pack(">II", total, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        (b"\x01a\x0a", "unknown value type 10"),
        (b"\x00\x07\x00\x00", "empty header name"),
        (b"\x01a\x07\x00\x09abc", "cut short"),
        (b"\x01a\x04\x00\x01", "cut short"),
        (b"\x01a\x09\x00\x01\x02", "cut short"),
        (b"\x05ab", "cut short"),
        (b"\x02\xff\xfe\x00", "not UTF-8"),
        (b"\x01a\x07\x00\x02\xc3\x28", "not UTF-8"),
        (b"\x01a\x00\x01a\x01", "appears twice"),
    ],
    ids=[
        "unknown type",
        "empty name",
        "string past the end",
        "int32 past the end",
        "uuid past the end",
        "name past the end",
        "non-UTF-8 name",
        "non-UTF-8 string",
        "duplicate",
    ],
)
def test_malformed_headers_are_named(headers: bytes, message: str) -> None:
    with pytest.raises(EventStreamError, match=message):
        decode_all([raw_frame(headers, b"{}")])


def test_a_caller_that_stops_after_a_frame_never_sees_the_bad_bytes_after_it() -> None:
    good = encode_frame({":event-type": "metadata"}, b"{}")
    bad = bytearray(encode_frame({":event-type": "junk"}, b"{}"))
    bad[-1] ^= 0xFF
    frames = EventStreamDecoder().feed(good + bytes(bad))
    assert next(frames).headers == {":event-type": "metadata"}
    with pytest.raises(EventStreamError, match="Message checksum mismatch"):
        next(frames)


HEADER_VALUES = st.one_of(
    st.booleans().map(lambda b: (HeaderType.BOOL_TRUE if b else HeaderType.BOOL_FALSE, b)),
    st.integers(-(2**7), 2**7 - 1).map(lambda v: (HeaderType.BYTE, v)),
    st.integers(-(2**15), 2**15 - 1).map(lambda v: (HeaderType.INT16, v)),
    st.integers(-(2**31), 2**31 - 1).map(lambda v: (HeaderType.INT32, v)),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: (HeaderType.INT64, v)),
    st.binary(max_size=40).map(lambda v: (HeaderType.BYTES, v)),
    st.text(max_size=40).map(lambda v: (HeaderType.STRING, v)),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: (HeaderType.TIMESTAMP, Timestamp(v))),
    st.uuids().map(lambda v: (HeaderType.UUID, v)),
)
HEADER_NAMES = st.text(min_size=1, max_size=20).filter(lambda n: len(n.encode()) < 256)
FRAMES = st.lists(
    st.tuples(st.dictionaries(HEADER_NAMES, HEADER_VALUES, max_size=6), st.binary(max_size=200)),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(frames=FRAMES, cuts=st.lists(st.integers(0, 3000), max_size=6))
def test_any_frames_split_anywhere_round_trip(
    frames: list[tuple[dict[str, tuple[HeaderType, HeaderValue]], bytes]], cuts: list[int]
) -> None:
    body = b"".join(
        encode_frame([(n, kind, value) for n, (kind, value) in headers.items()], payload)
        for headers, payload in frames
    )
    points = sorted({min(c, len(body)) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    decoded = decode_all(pieces)
    assert [(f.headers, f.payload) for f in decoded] == [
        ({n: v for n, (_, v) in headers.items()}, payload) for headers, payload in frames
    ]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_garbage_only_ever_raises_an_eventstream_error(data: bytes) -> None:
    """Random bytes decode to frames or fail with EventStreamError, never anything else."""
    outcome: list[Frame] | EventStreamError
    try:
        outcome = decode_all([data])
    except EventStreamError as error:
        outcome = error
    assert isinstance(outcome, EventStreamError) or all(isinstance(f, Frame) for f in outcome)
    assert not isinstance(outcome, EventStreamError) or str(outcome)
