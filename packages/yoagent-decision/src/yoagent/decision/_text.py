"""Small text and threshold helpers shared by the gate, the guard and the advisor."""

from __future__ import annotations

import math

from yoagent.core.support import cut_middle


def check_threshold(name: str, value: float) -> float:
    """``value`` if it is a probability in [0, 1]; ``ValueError`` otherwise (NaN included):
    a threshold out of range would silently never (or always) fire."""
    if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def at_or_above(value: float | None, threshold: float) -> bool:
    """``value >= threshold``, where a missing or non-finite value counts as reaching it
    (the denying side)."""
    return value is None or not math.isfinite(value) or value >= threshold


TRUNCATION_MARKER = "\n[truncated {cut} chars]\n"
"""What replaces the middle of a text cut for a decision model (the floor's
:func:`~yoagent.core.support.cut_middle` template): short, since every character counts
against the model's small request budget."""


def truncate_middle(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, its head and tail, around an explicit
    ``[truncated N chars]`` marker."""
    return cut_middle(text, limit, marker=TRUNCATION_MARKER)


def truncate_head(text: str, limit: int) -> str:
    """At most ``limit`` characters from the start, with ``…`` when cut."""
    return text if len(text) <= limit else text[:limit] + "…"


def format_p(value: float | None) -> str:
    """A probability for a message (``unknown`` when missing)."""
    return "unknown" if value is None else f"{value:.2f}"
