"""A response body read within limits: decompressed in bounded steps, and capped.

httpx inflates a whole network chunk at once (a 64 KiB gzip chunk can grow to 64 MiB),
and nothing caps the total, so a small compressed body could take gigabytes (issue 10.6:
0.5 MB of gzip grew to 3.1 GB). Here the raw bytes are inflated at most
:data:`INFLATE_STEP` bytes at a time and the decompressed total is capped: by
:attr:`StreamLimits.max_body_bytes` for a stream, by the caller's limit for an error
body or a token reply (:func:`read_prefix`). Only ``gzip`` and ``deflate`` are accepted, and
they are all the request advertises (``accept-encoding: gzip, deflate``).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass

from yoagent.core import ErrorKind, ProviderError

MIB = 1024 * 1024
INFLATE_STEP = 64 * 1024
"""The most bytes one decompression step may produce."""
ACCEPT_ENCODING = "gzip, deflate"


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamLimits:
    """How large a streamed reply may get before it is refused with a ``ProviderError``,
    and how long it may go without an event.

    Both are far above any real reply (a 128k-token answer streams ≈ 30 MiB of events,
    its largest event is the final copy of the whole reply); they stop a broken or
    hostile server from taking the process's memory or time (reading 256 MiB of events
    costs seconds of CPU, see ``benchmarks/RESULTS.md``).
    """

    max_event_bytes: int = 32 * MIB
    """The most bytes between two event boundaries (one event, or one unbroken line)."""
    max_body_bytes: int = 256 * MIB
    """The most bytes of decompressed body."""
    max_idle_seconds: float | None = 300.0
    """The longest an SSE stream may go without an event (``None``: no limit). Comments
    and blank lines (``: ping``) do not count: they reset the read timeout, so a server
    sending only those would otherwise hold a turn open forever. Past it the stream ends
    with a ``NETWORK`` error. As generous as the read timeout: reasoning models can
    think for minutes before their first event."""


DEFAULT_LIMITS = StreamLimits()


def too_large(what: str, limit: int, field: str) -> ProviderError:
    """The error for a stream that went past one of its :class:`StreamLimits`."""
    size = f"{limit / MIB:g} MiB" if limit >= MIB else f"{limit} bytes"
    return ProviderError(
        ErrorKind.API,
        f"the stream was refused: {what} went past {size} (StreamLimits.{field})",
    )


class _Inflater:
    """gzip / deflate decompression that never produces more than one step at a time."""

    def __init__(self, encoding: str) -> None:
        self._deflate = encoding == "deflate"
        self._decoder = zlib.decompressobj(zlib.MAX_WBITS | (0 if self._deflate else 16))
        self._started = False

    def steps(self, data: bytes) -> Iterator[bytes]:
        """Decompress ``data`` lazily, in pieces of at most :data:`INFLATE_STEP` bytes."""
        pending = data
        while True:
            try:
                out = self._decoder.decompress(pending, INFLATE_STEP)
            except zlib.error:
                if self._deflate and not self._started:
                    # Some servers send raw deflate without the zlib header.
                    self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._deflate = False
                    continue
                raise ProviderError(
                    ErrorKind.API, "malformed stream: the compressed body is corrupt"
                ) from None
            self._started = True
            if out:
                yield out
            pending = self._decoder.unconsumed_tail
            if not pending and len(out) < INFLATE_STEP:
                return


def _inflater_for(content_encoding: str) -> _Inflater | None:
    """The inflater for a ``content-encoding`` (``None``: identity); an ``API`` error for
    one that was not asked for."""
    encoding = content_encoding.strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Inflater("deflate" if encoding == "deflate" else "gzip")
    if encoding in ("", "identity"):
        return None
    raise ProviderError(
        ErrorKind.API,
        f"the server sent an unsupported content-encoding {content_encoding!r} "
        f"(asked for {ACCEPT_ENCODING})",
    )


async def read_prefix(raw: AsyncIterator[bytes], content_encoding: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the decompressed body of ``raw``, for an error message.

    Never raises for the body itself: a corrupt one gives what was read before the
    damage, an unsupported encoding gives nothing (the status still says what failed).
    """
    parts: list[bytes] = []
    size = 0
    try:
        inflater = _inflater_for(content_encoding)
        async for chunk in raw:
            for piece in inflater.steps(chunk) if inflater is not None else (chunk,):
                parts.append(piece)
                size += len(piece)
                if size >= limit:
                    return b"".join(parts)[:limit]
    except ProviderError:  # an encoding not asked for, or corrupt compressed data
        pass
    return b"".join(parts)


async def bounded_body(
    raw: AsyncIterator[bytes], content_encoding: str, limits: StreamLimits
) -> AsyncGenerator[bytes]:
    """The decompressed body of ``raw``, refused once it passes ``limits.max_body_bytes``."""
    inflater = _inflater_for(content_encoding)
    total = 0
    async for chunk in raw:
        for piece in inflater.steps(chunk) if inflater is not None else (chunk,):
            total += len(piece)
            if total > limits.max_body_bytes:
                raise too_large("the decompressed body", limits.max_body_bytes, "max_body_bytes")
            yield piece
