"""Server-Sent Events for every provider, decoded here (not by httpx-sse: see below).

The field rules are the WHATWG event-stream's: ``event``, ``data`` (several lines joined
with ``\\n``), ``id`` (kept from event to event, ignored when it holds NUL), ``retry``
(an integer), comments and unknown fields ignored, one leading space stripped from a
value. They are decoded here rather than by httpx-sse (which was fed these lines until
0.1, and stays the oracle: ``tests/test_sse_field_rules.py`` checks every rule against
its ``SSEDecoder`` on random streams), for two measured reasons:

- **Limits.** httpx-sse keeps any line and any event whole, however long. Here the
  bytes of the current event (and so of any one line) are counted as they arrive and
  refused past :attr:`StreamLimits.max_event_bytes` with a ``ProviderError``. Splitting
  is linear: a partial line is kept as a list of pieces joined once (the decoder this
  replaced re-copied its buffer per chunk and took 15 s on a 64 MiB event; see
  ``benchmarks/RESULTS.md``).
- **Speed.** Every streamed delta of the six SSE protocols passes here. A ``data:`` line read
  in the loop itself, no method call per line and no object per event beyond the event,
  costs 1.49 µs per event of the shared bench's replies, against 2.03 µs through
  httpx-sse's ``SSEDecoder`` (and 1.23 µs for httpx-sse's own line and field decoders,
  which check no limit): ``benchmarks/event_path.py``, ``RESULTS.md``.

Lines end in CRLF, LF or a lone CR (also when a CRLF is split between chunks); a UTF-8
byte order mark at the start is skipped; bytes that are not UTF-8 become U+FFFD. An
event without data is not dispatched. Whether the stream ended early is not decided
here: each protocol knows its own terminal event.
"""

from __future__ import annotations

import contextlib
import re

from ._body import DEFAULT_LIMITS, StreamLimits, too_large


class SseEvent:
    """One dispatched event: ``event`` (``message`` by default), ``data``, ``id``, ``retry``."""

    __slots__ = ("data", "event", "id", "retry")

    def __init__(
        self, event: str = "", data: str = "", id: str = "", retry: int | None = None
    ) -> None:
        self.event = event or "message"  # the format's default type
        self.data = data
        self.id = id
        self.retry = retry

    def __repr__(self) -> str:
        retry = "" if self.retry is None else f", retry={self.retry}"
        return f"SseEvent(event={self.event!r}, data={self.data!r}, id={self.id!r}{retry})"


_BOM = "\ufeff"
_BLANK_RUN = re.compile(rb"\n{3,}")


class SseReader:
    """Turns body bytes into events, chunk by chunk, refusing an event past the limit."""

    __slots__ = (
        "_after_cr",
        "_data",
        "_event_size",
        "_event_type",
        "_last_id",
        "_limit",
        "_pending",
        "_pending_bytes",
        "_retry",
        "_start",
    )

    def __init__(self, limits: StreamLimits = DEFAULT_LIMITS) -> None:
        self._event_type = ""  # the fields of the event being read (WHATWG's buffers)
        self._data: list[str] = []
        self._retry: int | None = None
        self._last_id = ""  # kept from event to event, as the format says
        self._limit = limits.max_event_bytes
        self._pending: list[bytes] = []  # the current line's pieces, not yet ended
        self._pending_bytes = 0
        self._event_size = 0  # size of the current event's completed lines
        self._start = True  # at the body's start (a BOM may follow)
        self._after_cr = False  # the last line ended in CR: an LF next belongs to it

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Decode ``chunk`` and return the events it completes."""
        if not chunk:  # nothing, not even the LF a CR before it may be waiting for
            return []
        if self._after_cr:
            self._after_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if b"\r" in chunk:
            chunk = self._normalize(chunk)
        end = chunk.rfind(b"\n") + 1
        if not end:
            if chunk:
                self._keep(chunk)
            return []
        head = chunk if end == len(chunk) else chunk[:end]
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
        lines.pop()  # the empty tail after the last newline
        if self._start:
            self._start = False
            if lines[0].startswith(_BOM):
                lines[0] = lines[0][1:]
        events = self._decode(lines)
        if end < len(chunk):
            self._keep(chunk[end:])
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

    def _decode(self, lines: list[str]) -> list[SseEvent]:
        """The events that whole ``lines`` complete.

        The field rules are the WHATWG event-stream's (as httpx-sse's ``SSEDecoder``
        applies them: ``tests/test_sse_field_rules.py`` checks): ``data`` lines joined
        with ``\\n``, one leading space stripped from a value, ``id`` kept from event to
        event unless it holds NUL, comments and unknown fields ignored."""
        events: list[SseEvent] = []
        data = self._data
        limit = self._limit
        size = self._event_size
        for line in lines:
            if line:
                size += len(line) + 1
                if size > limit:
                    raise too_large("one event", limit, "max_event_bytes")
                if line.startswith("data:"):  # most lines: a field of one kind
                    data.append(line[6:] if line.startswith(" ", 5) else line[5:])
                elif line[0] != ":":  # a comment changes nothing
                    self._field(line)
                continue
            size = 0
            if data:
                joined = "\n".join(data) if len(data) > 1 else data[0]
                if joined:
                    events.append(SseEvent(self._event_type, joined, self._last_id, self._retry))
                data.clear()
            self._event_type = ""
            self._retry = None
        self._event_size = size
        return events

    def _field(self, line: str) -> None:
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event_type = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            with contextlib.suppress(ValueError):  # a rare field: the cost does not matter
                self._retry = int(value)
