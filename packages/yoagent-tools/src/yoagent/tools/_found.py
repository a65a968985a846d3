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
    (or :data:`MAX_LINE_BYTES`); its line ending is not part of it."""
    body = text.rstrip(b"\r\n")
    line = utf8_decode(body[:MAX_LINE_BYTES])
    if len(line) <= MAX_LINE_CHARS and len(body) <= MAX_LINE_BYTES:
        return line
    return line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"
