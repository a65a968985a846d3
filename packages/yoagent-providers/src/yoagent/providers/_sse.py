"""Server-Sent Events for every provider: httpx-sse's decoder, fed lines within limits.

The field rules (``event``/``data``/``id``, comments, one leading space stripped, several
``data:`` lines joined with ``\\n``) are httpx-sse's ``SSEDecoder``. The lines it is fed
are split here, from bytes, for two measured reasons:

- **Limits.** httpx-sse keeps any line and any event whole, however long. Here the
  bytes of the current event (and so of any one line) are counted as they arrive and
  refused past :attr:`StreamLimits.max_event_bytes` with a ``ProviderError``. Splitting
  is linear: a partial line is kept as a list of pieces joined once (the decoder this
  replaced re-copied its buffer per chunk and took 15 s on a 64 MiB event; see
  ``benchmarks/RESULTS.md``).
- **Speed.** ``EventSource.aiter_sse`` goes through ``aiter_text`` and one async
  generator step per event; decoding each chunk's complete lines in one call and
  dispatching in a plain loop costs ≈ 20 % less per event (measured on 400 events:
  1.39 ms against 1.71 ms), which keeps a whole provider turn within the raw
  httpx + httpx-sse loop.

Lines end in CRLF, LF or a lone CR (also when a CRLF is split between chunks); a UTF-8
byte order mark at the start is skipped; bytes that are not UTF-8 become U+FFFD. An
event without data is not dispatched. Whether the stream ended early is not decided
here: each protocol knows its own terminal event.
"""

from __future__ import annotations

import re

from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder  # pyright: ignore[reportPrivateUsage]

from ._body import DEFAULT_LIMITS, StreamLimits, too_large

SseEvent = ServerSentEvent
"""One dispatched event: ``event`` (``message`` by default), ``data``, ``id``."""

_BOM = "\ufeff"
_BLANK_RUN = re.compile(rb"\n{3,}")


class SseReader:
    """Turns body bytes into events, chunk by chunk, refusing an event past the limit."""

    __slots__ = (
        "_after_cr",
        "_decoder",
        "_event_size",
        "_limit",
        "_pending",
        "_pending_bytes",
        "_start",
    )

    def __init__(self, limits: StreamLimits = DEFAULT_LIMITS) -> None:
        self._decoder = SSEDecoder()
        self._limit = limits.max_event_bytes
        self._pending: list[bytes] = []  # the current line's pieces, not yet ended
        self._pending_bytes = 0
        self._event_size = 0  # size of the current event's completed lines
        self._start = True  # at the body's start (a BOM may follow)
        self._after_cr = False  # the last line ended in CR: an LF next belongs to it

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Decode ``chunk`` and return the events it completes."""
        if self._after_cr:
            self._after_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if not chunk:
            return []
        if b"\r" in chunk:
            chunk = self._normalize(chunk)
        end = chunk.rfind(b"\n")
        if end < 0:
            self._keep(chunk)
            return []
        head = chunk[: end + 1]
        if b"\n\n\n" in head:
            # Extra blank lines do nothing (nothing is left to dispatch after the first):
            # a flood of them costs one C-level pass, not a Python step per line.
            head = _BLANK_RUN.sub(b"\n\n", head)
        if self._pending:
            self._pending.append(head)
            head = b"".join(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
        lines = head.decode("utf-8", "replace").split("\n")
        del head  # a large event is held once, not twice
        events = self._lines(lines)
        if end + 1 < len(chunk):
            self._keep(chunk[end + 1 :])
        return events

    def _normalize(self, chunk: bytes) -> bytes:
        """``chunk`` with CRLF and lone CR made LF; a final CR may be half of a CRLF."""
        if chunk.endswith(b"\r"):
            self._after_cr = True
        return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def _keep(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_bytes += len(piece)
        if self._event_size + self._pending_bytes > self._limit:
            raise too_large("one event", self._limit, "max_event_bytes")

    def _lines(self, lines: list[str]) -> list[SseEvent]:
        """Decode whole lines (the last element is the empty tail after the final newline)."""
        lines.pop()
        if self._start and lines:
            self._start = False
            if lines[0].startswith(_BOM):
                lines[0] = lines[0][1:]
        events: list[SseEvent] = []
        decode = self._decoder.decode
        size = self._event_size
        for line in lines:
            if line:
                size += len(line) + 1
                if size > self._limit:
                    raise too_large("one event", self._limit, "max_event_bytes")
                if line[0] != ":":  # a comment changes nothing
                    decode(line)
                continue
            size = 0
            event = decode(line)
            if event is not None and event.data:
                events.append(event)
        self._event_size = size
        return events
