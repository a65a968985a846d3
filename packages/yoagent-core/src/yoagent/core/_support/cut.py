"""Middle-cutting: a long text shortened to its head and tail around a visible marker."""

from __future__ import annotations

from typing import Final

CUT_MARKER: Final = "\n\n[... {cut} characters truncated{detail} ...]\n\n"
"""What replaces the middle of a cut text: ``{cut}`` is how many characters went,
``{detail}`` is ``"; "`` and the caller's detail, or nothing."""


def cut_middle(text: str, limit: int | None, *, detail: str = "", marker: str = CUT_MARKER) -> str:
    """``text`` cut to its first and last ``limit`` characters in all (the head gets the
    smaller half), with ``marker`` between them saying how many went.

    ``limit=None`` or a text that fits returns ``text`` unchanged; the marker is not
    counted in ``limit``. ``detail`` adds a note inside the marker (where the whole
    text was kept, say). ``marker`` is a template with ``{cut}`` and ``{detail}``, for a
    caller whose readers were taught another spelling.
    """
    if limit is None or len(text) <= limit:
        return text
    if limit < 0:
        raise ValueError(f"limit must be None or at least 0, got {limit}")
    head = limit // 2
    tail = limit - head
    cut = len(text) - limit
    note = marker.format(cut=cut, detail=f"; {detail}" if detail else "")
    return f"{text[:head]}{note}{text[len(text) - tail :]}"
