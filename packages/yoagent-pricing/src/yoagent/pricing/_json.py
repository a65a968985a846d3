"""Decoded JSON, narrowed for the type checker."""

from __future__ import annotations

from typing import Any, cast


def as_object(value: object) -> dict[str, Any] | None:
    """``value`` when it is a JSON object (keys are always strings in decoded JSON)."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def as_array(value: object) -> list[Any] | None:
    """``value`` when it is a JSON array."""
    return cast("list[Any]", value) if isinstance(value, list) else None
