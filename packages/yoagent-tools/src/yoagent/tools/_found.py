"""What a search found, whichever engine ran it, and how one matching line is shown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from yoagent.core.support import utf8_decode

MAX_LINE_CHARS: Final = 500
MAX_LINE_BYTES: Final = 4 * MAX_LINE_CHARS
"""Bytes of a matching line kept (enough for the characters shown)."""


@dataclass(slots=True)
class Found:
    """Matching lines (``path:line:text``), and how the search ended."""

    lines: list[str] = field(default_factory=list[str])
    truncated: bool = False
    warnings: str | None = None
    failure: str | None = None  # an abnormal end: with no lines, the call fails
    notes: list[str] = field(default_factory=list[str])  # said whatever was found


def show_line(text: bytes) -> str:
    """A matching line as shown: undecodable bytes as ``\\xNN``, cut at 500 characters
    (or :data:`MAX_LINE_BYTES`); its one line ending is not part of it.

    The engines pass a line without its newline and at most ``MAX_LINE_BYTES + 2`` bytes
    of it: a CRLF line of exactly the bound arrives whole with its ``\\r``, and a longer
    line is still longer once a ``\\r`` of its own at the cut is stripped.
    """
    body = text.removesuffix(b"\n").removesuffix(b"\r")
    line = utf8_decode(body[:MAX_LINE_BYTES])
    if len(line) <= MAX_LINE_CHARS and len(body) <= MAX_LINE_BYTES:
        return line
    return line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"
