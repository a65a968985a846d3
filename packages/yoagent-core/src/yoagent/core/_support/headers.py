"""HTTP header names ignore case: one header per name when sources are merged."""

from __future__ import annotations

from collections.abc import Mapping


def merge_headers(ours: Mapping[str, str], user: Mapping[str, str]) -> dict[str, str]:
    """``ours`` with ``user``'s headers added last: a user header replaces ours of the same
    name in any case (HTTP names are case-insensitive, and httpx would send ``Authorization``
    and ``authorization`` as two headers), keeping the user's spelling."""
    merged: dict[str, tuple[str, str]] = {}
    for name, value in (*ours.items(), *user.items()):
        merged[name.lower()] = (name, value)
    return dict(merged.values())
