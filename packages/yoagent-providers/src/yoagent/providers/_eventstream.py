"""The ``application/vnd.amazon.eventstream`` framing: an incremental decoder and an encoder.

Every frame is ``total_length:u32 headers_length:u32 prelude_crc:u32 headers payload
message_crc:u32`` (big-endian). The prelude CRC covers the first 8 bytes, the message CRC
everything before it; both are CRC-32 (IEEE), which the standard library's ``zlib.crc32``
computes in C. Headers are ``name_len:u8 name type:u8 value`` with ten value types.

Why our own rather than botocore's ``EventStreamBuffer``: the runtime must not depend on
an AWS SDK, and botocore's buffer copies its whole remaining buffer after every frame and
parses headers through a method call per field; this decoder slices a ``memoryview`` and
parses headers in one loop (``benchmarks/eventstream_decode.py`` measures both).

The decoder takes the body in arbitrary chunks (a frame split at any byte, several frames
in one chunk) and raises :class:`EventStreamError` naming what was wrong: a prelude or
message checksum mismatch, an impossible or oversized length, a malformed header, or a body
that ended inside a frame.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterator, Mapping, Sequence
from enum import IntEnum

from ._errors import ProvidersError

MAX_HEADERS_LENGTH = 128 * 1024
"""The largest headers section accepted (the limit the AWS SDKs enforce)."""
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
"""The largest payload accepted (the limit the AWS SDKs enforce)."""
_PRELUDE_LENGTH = 12
_OVERHEAD = _PRELUDE_LENGTH + 4  # prelude + message CRC
MAX_FRAME_LENGTH = _OVERHEAD + MAX_HEADERS_LENGTH + MAX_PAYLOAD_LENGTH
"""The longest frame the AWS limits allow."""

_PRELUDE = struct.Struct(">III")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class HeaderType(IntEnum):
    """The wire type of a header value."""

    BOOL_TRUE = 0
    BOOL_FALSE = 1
    BYTE = 2
    INT16 = 3
    INT32 = 4
    INT64 = 5
    BYTES = 6
    STRING = 7
    TIMESTAMP = 8
    UUID = 9


class Timestamp(int):
    """A ``timestamp`` header value: milliseconds since the Unix epoch (an int64)."""

    __slots__ = ()


HeaderValue = bool | int | bytes | str | uuid.UUID
"""A decoded header value: bool, int (byte/int16/int32/int64, or :class:`Timestamp`),
bytes, str or UUID."""


class EventStreamError(ProvidersError, ValueError):
    """The body is not a well-formed event stream; the message says what was wrong."""


class FrameTooLarge(EventStreamError):
    """A well-formed prelude announced a frame longer than the decoder's ``max_frame_bytes``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame too large: {size} bytes (at most {limit})")
        self.size = size
        self.limit = limit


class Frame:
    """One decoded message: its headers by name and its payload bytes."""

    __slots__ = ("headers", "payload")

    def __init__(self, headers: dict[str, HeaderValue], payload: bytes) -> None:
        self.headers = headers
        self.payload = payload

    def __repr__(self) -> str:
        return f"Frame(headers={self.headers!r}, payload={self.payload[:80]!r})"


def _parse_headers(data: memoryview) -> dict[str, HeaderValue]:
    """The headers section ``data`` (exactly that section: reads past it raise)."""
    headers: dict[str, HeaderValue] = {}
    at = 0
    end = len(data)
    try:
        while at < end:
            name_length = data[at]
            if name_length == 0:
                raise EventStreamError("malformed header: an empty header name")
            raw = data[at + 1 : at + 1 + name_length]
            if len(raw) != name_length:
                raise EventStreamError("malformed headers: a header name is cut short")
            name = str(raw, "utf-8")
            at += 1 + name_length
            kind = data[at]
            at += 1
            value: HeaderValue
            if kind == 7 or kind == 6:  # string, bytes: u16 length + bytes
                size = _U16.unpack_from(data, at)[0]
                raw = data[at + 2 : at + 2 + size]
                if len(raw) != size:
                    raise EventStreamError(f"malformed header {name!r}: its value is cut short")
                value = str(raw, "utf-8") if kind == 7 else bytes(raw)
                at += 2 + size
            elif kind == 0 or kind == 1:
                value = kind == 0
            elif kind == 4:
                value = _I32.unpack_from(data, at)[0]
                at += 4
            elif kind == 2:
                value = _I8.unpack_from(data, at)[0]
                at += 1
            elif kind == 3:
                value = _I16.unpack_from(data, at)[0]
                at += 2
            elif kind == 5:
                value = _I64.unpack_from(data, at)[0]
                at += 8
            elif kind == 8:
                value = Timestamp(_I64.unpack_from(data, at)[0])
                at += 8
            elif kind == 9:
                raw = data[at : at + 16]
                if len(raw) != 16:
                    raise EventStreamError(f"malformed header {name!r}: its value is cut short")
                value = uuid.UUID(bytes=bytes(raw))
                at += 16
            else:
                raise EventStreamError(f"malformed header {name!r}: unknown value type {kind}")
            if name in headers:
                raise EventStreamError(f"malformed headers: {name!r} appears twice")
            headers[name] = value
    except (IndexError, struct.error):
        raise EventStreamError("malformed headers: a header is cut short") from None
    except UnicodeDecodeError:
        raise EventStreamError("malformed header: a name or string is not UTF-8") from None
    return headers


class EventStreamDecoder:
    """Turns body bytes into :class:`Frame` values, chunk by chunk.

    Iterating what ``feed`` returns yields each frame as soon as it is complete and checked,
    so a caller that stops after the final frame never sees an error in bytes after it.
    A frame whose prelude announces more than ``max_frame_bytes`` raises
    :class:`FrameTooLarge` before its bytes are kept (the AWS SDKs' own limits, 128 KiB of
    headers and 24 MiB of payload, always apply).
    """

    __slots__ = ("_buffer", "_max_frame", "_need", "_parts", "_size", "_start")

    def __init__(self, max_frame_bytes: int = MAX_FRAME_LENGTH) -> None:
        self._max_frame = max_frame_bytes
        self._reset()

    def _reset(self) -> None:
        self._buffer = b""
        self._start = 0
        # Chunks of a frame still incomplete are kept apart and joined once, when enough
        # bytes arrived: a large frame in many chunks is copied once, not once per chunk.
        self._parts: list[bytes] = []
        self._size = 0
        self._need = _PRELUDE_LENGTH

    @property
    def pending(self) -> int:
        """How many bytes of an unfinished frame are buffered."""
        return len(self._buffer) - self._start + self._size

    def feed(self, chunk: bytes) -> Iterator[Frame]:
        """Add ``chunk``; iterate the result for every frame now complete."""
        left = len(self._buffer) - self._start
        if left + self._size + len(chunk) < self._need:
            if left:
                self._parts.append(self._buffer[self._start :])
                self._size += left
                self._buffer = b""
                self._start = 0
            self._parts.append(bytes(chunk))
            self._size += len(chunk)
            return iter(())
        if self._parts:
            head = [self._buffer[self._start :]] if left else []
            self._buffer = b"".join([*head, *self._parts, chunk])
            self._parts = []
            self._size = 0
        elif left:
            self._buffer = self._buffer[self._start :] + chunk
        else:
            self._buffer = bytes(chunk)
        self._start = 0
        return self._frames()

    def _frames(self) -> Iterator[Frame]:
        buffer = self._buffer
        view = memoryview(buffer)
        size = len(buffer)
        start = self._start
        crc32 = zlib.crc32
        cache = _HEADER_CACHE
        self._need = _PRELUDE_LENGTH
        while size - start >= _PRELUDE_LENGTH:
            total, headers_length, prelude_crc = _PRELUDE.unpack_from(buffer, start)
            prelude_sum = crc32(view[start : start + 8])
            if prelude_sum != prelude_crc:
                raise EventStreamError(
                    f"Prelude checksum mismatch: expected {prelude_crc:#010x}, "
                    f"computed {prelude_sum:#010x}"
                )
            if total < _OVERHEAD or headers_length > total - _OVERHEAD:
                raise EventStreamError(
                    f"malformed prelude: a {total}-byte frame cannot hold "
                    f"{headers_length} bytes of headers"
                )
            if headers_length > MAX_HEADERS_LENGTH:
                raise EventStreamError(
                    f"frame too large: {headers_length} bytes of headers "
                    f"(at most {MAX_HEADERS_LENGTH})"
                )
            if total - _OVERHEAD - headers_length > MAX_PAYLOAD_LENGTH:
                raise EventStreamError(
                    f"frame too large: a {total - _OVERHEAD - headers_length}-byte payload "
                    f"(at most {MAX_PAYLOAD_LENGTH})"
                )
            if total > self._max_frame:
                raise FrameTooLarge(total, self._max_frame)
            end = start + total
            if end > size:
                self._need = total
                break
            message_crc = _U32.unpack_from(buffer, end - 4)[0]
            message_sum = crc32(view[start + 8 : end - 4], prelude_sum)
            if message_sum != message_crc:
                raise EventStreamError(
                    f"Message checksum mismatch: expected {message_crc:#010x}, "
                    f"computed {message_sum:#010x}"
                )
            headers_start = start + _PRELUDE_LENGTH
            headers_end = headers_start + headers_length
            if headers_length > _CACHED_HEADERS_LENGTH:
                headers = _parse_headers(view[headers_start:headers_end])
            elif headers_length:
                # Streams repeat the same few header sections (event type, content type,
                # message type) frame after frame: parse each distinct one once.
                section = buffer[headers_start:headers_end]
                parsed = cache.get(section)
                if parsed is None:
                    parsed = _parse_headers(memoryview(section))
                    if len(cache) >= _HEADER_CACHE_SIZE:
                        cache.clear()
                    cache[section] = parsed
                headers = parsed.copy()
            else:
                headers = {}
            payload = buffer[headers_end : end - 4]
            start = end
            self._start = start
            yield Frame(headers, payload)
        self._start = start

    def close(self) -> None:
        """End of body: raise :class:`EventStreamError` if it ended inside a frame."""
        left = self.pending
        self._reset()
        if left:
            raise EventStreamError(f"the body ended inside a frame ({left} bytes left over)")


_CACHED_HEADERS_LENGTH = 256
_HEADER_CACHE_SIZE = 64
_HEADER_CACHE: dict[bytes, dict[str, HeaderValue]] = {}


_INT_FORMATS = {
    HeaderType.BYTE: _I8,
    HeaderType.INT16: _I16,
    HeaderType.INT32: _I32,
    HeaderType.INT64: _I64,
    HeaderType.TIMESTAMP: _I64,
}


def _encode_value(kind: HeaderType, value: HeaderValue) -> bytes:
    if kind in (HeaderType.BOOL_TRUE, HeaderType.BOOL_FALSE):
        return b""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, int):
        return _INT_FORMATS[kind].pack(value)
    raw = value.encode() if isinstance(value, str) else value
    return _U16.pack(len(raw)) + raw


def _typed(value: HeaderValue) -> tuple[HeaderType, HeaderValue]:
    if isinstance(value, bool):
        return (HeaderType.BOOL_TRUE if value else HeaderType.BOOL_FALSE), value
    if isinstance(value, Timestamp):
        return HeaderType.TIMESTAMP, value
    if isinstance(value, int):
        return HeaderType.INT64, value
    if isinstance(value, str):
        return HeaderType.STRING, value
    if isinstance(value, uuid.UUID):
        return HeaderType.UUID, value
    return HeaderType.BYTES, value


def encode_frame(
    headers: Mapping[str, HeaderValue] | Sequence[tuple[str, HeaderType, HeaderValue]],
    payload: bytes = b"",
) -> bytes:
    """One frame. Headers are ``name → value`` (ints as int64) or ``(name, type, value)``."""
    typed = (
        [(name, *_typed(value)) for name, value in headers.items()]
        if isinstance(headers, Mapping)
        else list(headers)
    )
    encoded = b"".join(
        bytes([len(name.encode())]) + name.encode() + bytes([kind]) + _encode_value(kind, value)
        for name, kind, value in typed
    )
    total = _OVERHEAD + len(encoded) + len(payload)
    prelude = struct.pack(">II", total, len(encoded))
    prelude += _U32.pack(zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + _U32.pack(zlib.crc32(message))
