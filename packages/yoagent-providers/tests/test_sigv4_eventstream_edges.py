"""SigV4's and the eventstream codec's edges the conformance suites do not reach: a local
time zone, repeated header names, the headers handed back, an unnormalized path; each
malformed header's message, boolean headers, a frame's repr. (Added from mutation
testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest

from yoagent.providers._eventstream import (
    MAX_HEADERS_LENGTH,
    MAX_PAYLOAD_LENGTH,
    EventStreamDecoder,
    EventStreamError,
    Frame,
    FrameTooLarge,
    encode_frame,
)
from yoagent.providers._sigv4 import (
    AwsCredentials,
    Signature,
    amz_date,
    canonical_headers,
    canonical_query,
    sign,
)

# -- SigV4 -----------------------------------------------------------------------------------


@pytest.fixture
def tokyo_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("tokyo_local_time")
def test_the_date_is_utc_whatever_the_local_time_zone() -> None:
    when = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=5)))
    assert amz_date(when) == "20240101T220405Z"
    assert amz_date(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)) == "20240102T030405Z"


def test_a_repeated_header_is_one_line_of_comma_joined_values() -> None:
    block, signed = canonical_headers([("X-A", " 1 "), ("x-a", "2  3"), ("Host", "h")])
    assert block == "host:h\nx-a:1,2 3\n"
    assert signed == "host;x-a"


def _signature(**options: object) -> Signature:
    return sign(
        method="GET",
        path=str(options.pop("path", "/")),
        query="",
        headers=[("host", "example.amazonaws.com")],
        payload_sha256="0" * 64,
        credentials=options.pop(
            "credentials", AwsCredentials("AKID", "secret", session_token="tok")
        ),
        region="us-east-1",
        service="bedrock",
        when=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        **options,  # type: ignore[arg-type]
    )


def _signed(**options: object) -> tuple[str, dict[str, str]]:
    signature = _signature(**options)
    return signature.canonical_request, signature.headers


def test_the_headers_to_send_are_named_in_lower_case() -> None:
    _, headers = _signed()
    assert sorted(headers) == ["authorization", "x-amz-date", "x-amz-security-token"]
    assert headers["x-amz-date"] == "20240102T030405Z"
    assert headers["x-amz-security-token"] == "tok"


def test_a_path_is_normalized_unless_asked_not_to() -> None:
    normalized, _ = _signed(path="/a/./b/../c")
    assert normalized.splitlines()[1] == "/a/c"
    kept, _ = _signed(path="/a/./b/../c", normalize_path=False)
    assert kept.splitlines()[1] == "/a/./b/../c"


# -- the eventstream codec -------------------------------------------------------------------


def _frame_with_raw_headers(raw: bytes, payload: bytes = b"{}") -> bytes:
    total = 16 + len(raw) + len(payload)
    prelude = struct.pack(">II", total, len(raw))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw + payload
    return message + struct.pack(">I", zlib.crc32(message))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x00", "malformed header: an empty header name"),
        (b"\x05ab", "malformed headers: a header name is cut short"),
        (b"\x01a", "malformed headers: a header is cut short"),
        (b"\x01a\x04\x00\x00", "malformed headers: a header is cut short"),
        (b"\x01\xff\x00", "malformed header: a name or string is not UTF-8"),
        (b"\x01a\x07\x00\x01\xff", "malformed header: a name or string is not UTF-8"),
    ],
)
def test_each_malformed_header_is_named(raw: bytes, message: str) -> None:
    decoder = EventStreamDecoder()
    with pytest.raises(EventStreamError) as caught:
        list(decoder.feed(_frame_with_raw_headers(raw)))
    assert str(caught.value) == message


def test_boolean_headers_keep_their_value() -> None:
    frame = encode_frame({"yes": True, "no": False}, b"x")
    [decoded] = EventStreamDecoder().feed(frame)
    assert decoded.headers == {"yes": True, "no": False}
    assert decoded.payload == b"x"


def test_a_frame_without_a_payload_has_an_empty_one() -> None:
    [decoded] = EventStreamDecoder().feed(encode_frame({":event-type": "ping"}))
    assert decoded.payload == b""


def test_a_frames_repr_shows_the_first_80_bytes_of_its_payload() -> None:
    frame = Frame({"a": 1}, bytes(range(100)))
    assert repr(frame) == f"Frame(headers={{'a': 1}}, payload={bytes(range(80))!r})"


def _prelude(total: int, headers_length: int) -> bytes:
    prelude = struct.pack(">II", total, headers_length)
    return prelude + struct.pack(">I", zlib.crc32(prelude))


def test_the_size_limits_are_inclusive() -> None:
    """A prelude at a limit is accepted (the decoder waits for the frame's bytes); one byte
    over is refused from the prelude alone."""
    at_headers = _prelude(16 + MAX_HEADERS_LENGTH, MAX_HEADERS_LENGTH)
    at_payload = _prelude(16 + 10 + MAX_PAYLOAD_LENGTH, 10)
    for prelude in (at_headers, at_payload):
        decoder = EventStreamDecoder()
        assert list(decoder.feed(prelude)) == []
        assert decoder.pending == 12
    over = _prelude(16 + 10 + MAX_PAYLOAD_LENGTH + 1, 10)
    with pytest.raises(EventStreamError) as caught:
        list(EventStreamDecoder().feed(over))
    assert str(caught.value) == (
        f"frame too large: a {MAX_PAYLOAD_LENGTH + 1}-byte payload (at most {MAX_PAYLOAD_LENGTH})"
    )
    small = EventStreamDecoder(max_frame_bytes=100)
    assert list(small.feed(_prelude(100, 0))) == []
    with pytest.raises(FrameTooLarge):
        list(EventStreamDecoder(max_frame_bytes=100).feed(_prelude(101, 0)))


def test_the_decoder_goes_on_after_a_chunk_that_ends_inside_a_frame() -> None:
    first, second = encode_frame({"n": 1}, b"one"), encode_frame({"n": 2}, b"two")
    decoder = EventStreamDecoder()
    seen: list[tuple[bytes, int]] = []
    for frame in decoder.feed(first + second[:5]):
        seen.append((frame.payload, decoder.pending))  # read between frames
    assert seen == [(b"one", 5)]
    assert [f.payload for f in decoder.feed(second[5:])] == [b"two"]
    decoder.close()


def test_an_empty_query_pair_is_skipped_not_the_end() -> None:
    assert canonical_query("b=2&&a=1&") == "a=1&b=2"


def test_an_unsigned_session_token_is_still_sent() -> None:
    canonical, headers = _signed(sign_session_token=False)
    assert headers["x-amz-security-token"] == "tok"
    assert "x-amz-security-token" not in canonical
    _, without_token = _signed(sign_session_token=False, credentials=AwsCredentials("A", "s"))
    assert sorted(without_token) == ["authorization", "x-amz-date"]


def test_the_string_to_sign_is_kept() -> None:
    signature = _signature(credentials=AwsCredentials("AKID", "secret"))
    assert signature.string_to_sign.startswith(
        "AWS4-HMAC-SHA256\n20240102T030405Z\n20240102/us-east-1/bedrock/aws4_request\n"
    )
