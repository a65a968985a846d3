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
    EventStreamDecoder,
    EventStreamError,
    Frame,
    encode_frame,
)
from yoagent.providers._sigv4 import AwsCredentials, amz_date, canonical_headers, sign

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


def _signed(**options: object) -> tuple[str, dict[str, str]]:
    signature = sign(
        method="GET",
        path=str(options.pop("path", "/")),
        query="",
        headers=[("host", "example.amazonaws.com")],
        payload_sha256="0" * 64,
        credentials=AwsCredentials("AKID", "secret", session_token="tok"),
        region="us-east-1",
        service="bedrock",
        when=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        **options,  # type: ignore[arg-type]
    )
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
