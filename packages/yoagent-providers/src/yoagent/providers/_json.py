"""Lenient reads of decoded JSON: the expected type, or an empty/absent stand-in."""

from __future__ import annotations

from typing import Any, cast


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else ``[]``."""
    return cast(list[Any], value) if isinstance(value, list) else []


def as_int(value: object) -> int | None:
    """``value`` when it is an integer (not a boolean), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""
