"""An exact, incremental Server-Sent Events decoder (the WHATWG event-stream format).

It takes the body in arbitrary byte chunks and yields whole events. It follows the
specification to the letter: lines end in CRLF, LF or a lone CR; lines starting with ``:``
are comments; a ``data:`` value loses exactly one leading space (padding after the JSON is
kept, so the caller's JSON parser sees it); several ``data:`` lines join with ``\\n``; a
blank line dispatches; an event without data is not dispatched. Unlike most decoders it
also says whether the body ended inside an event, which a provider reports as a network
failure rather than silently dropping.
"""

from __future__ import annotations

from dataclasses import dataclass

_BOM = "\ufeff"


@dataclass(slots=True)
class SseEvent:
    """One dispatched event: its type (``message`` by default), data and last event id."""

    event: str
    data: str
    id: str = ""


class SseDecoder:
    """Turns body bytes into :class:`SseEvent` values, chunk by chunk."""

    __slots__ = ("_buffer", "_data", "_event", "_first_line", "_has_data", "_last_id", "_skip_lf")

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._has_data = False
        self._event = ""
        self._last_id = ""
        self._first_line = True
        self._skip_lf = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Decode ``chunk`` and return the events it completes."""
        if not chunk:
            return []
        buffer = self._buffer + chunk if self._buffer else chunk
        start = 0
        if self._skip_lf:
            # The previous chunk ended in CR; an LF here is the second half of that CRLF.
            self._skip_lf = False
            if buffer[:1] == b"\n":
                start = 1
        events: list[SseEvent] = []
        length = len(buffer)
        while start < length:
            lf = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start, lf if lf >= 0 else length)
            if cr >= 0:
                end = cr
                if cr == length - 1:
                    nxt = length
                    self._skip_lf = True
                elif buffer[cr + 1] == 0x0A:
                    nxt = cr + 2
                else:
                    nxt = cr + 1
            elif lf >= 0:
                end = lf
                nxt = lf + 1
            else:
                break
            event = self._line(buffer[start:end])
            if event is not None:
                events.append(event)
            start = nxt
        self._buffer = buffer[start:]
        return events

    def close(self) -> bool:
        """End of body. True when it ended inside an event (data not yet dispatched)."""
        buffer = self._buffer
        pending = self._has_data or (bool(buffer) and not buffer.startswith(b":"))
        self._buffer = b""
        self._data = []
        self._has_data = False
        self._event = ""
        self._skip_lf = False
        return pending

    def _line(self, raw: bytes) -> SseEvent | None:
        line = raw.decode("utf-8", errors="replace")
        if self._first_line:
            self._first_line = False
            if line.startswith(_BOM):
                line = line[1:]
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        colon = line.find(":")
        if colon < 0:
            name, value = line, ""
        else:
            name = line[:colon]
            value = line[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id" and "\x00" not in value:
            self._last_id = value
        # `retry` only matters to reconnecting clients; other fields are ignored by the spec.
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._has_data:
            self._event = ""
            return None
        event = SseEvent(
            event=self._event or "message", data="\n".join(self._data), id=self._last_id
        )
        self._data = []
        self._has_data = False
        self._event = ""
        return event
