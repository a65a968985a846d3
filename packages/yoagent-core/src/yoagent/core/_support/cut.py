"""Middle-cutting: a long text shortened to its head and tail around a visible marker."""

from __future__ import annotations

from typing import Final

CUT_MARKER: Final = "\n\n[... {cut} characters truncated{detail} ...]\n\n"
"""What replaces the middle of a cut text: ``{cut}`` is how many characters went,
``{detail}`` is ``"; "`` and the caller's detail, or nothing."""


def cut_middle(
    text: str,
    limit: int | None,
    *,
    detail: str = "",
    marker: str = CUT_MARKER,
    fit: bool = False,
) -> str:
    """``text`` cut to its first and last ``limit`` characters in all (the head gets the
    smaller half), with ``marker`` between them saying how many went.

    ``limit=None`` or a text that fits returns ``text`` unchanged; the marker is not
    counted in ``limit``. ``detail`` adds a note inside the marker (where the whole
    text was kept, say). ``marker`` is a template with ``{cut}`` and ``{detail}``, for a
    caller whose readers were taught another spelling.

    With ``fit``, the marker is counted: the result is at most ``limit`` characters, so
    cutting it again leaves it alone (a context that is compacted twice keeps its
    prefix). When not even the marker fits, the result is the first ``limit`` characters.
    """
    if limit is None or len(text) <= limit:
        return text
    if limit < 0:
        raise ValueError(f"limit must be None or at least 0, got {limit}")
    extra = f"; {detail}" if detail else ""
    room = limit
    if fit:  # the marker as long as it can be: its count has at most len(text)'s digits
        room -= len(marker.format(cut=len(text), detail=extra))
        if room <= 0:
            return text[:limit]
    head = room // 2
    tail = room - head
    note = marker.format(cut=len(text) - room, detail=extra)
    return f"{text[:head]}{note}{text[len(text) - tail :]}"
