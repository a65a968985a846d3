"""Turning a tool call's streamed argument text into the arguments object, or refusing it."""

from __future__ import annotations

from typing import Any, cast

from ._json import parse_json


def parse_tool_arguments(raw: str) -> dict[str, Any] | None:
    """The arguments as a dict, or ``None`` when ``raw`` is not one complete JSON object.

    Empty text (a tool without parameters) and ``null`` mean ``{}``. Truncated, invalid or
    too deeply nested JSON is refused rather than run on ``{}``: a tool must never run on
    arguments the model did not finish.
    """
    text = raw.strip()
    if not text:
        return {}
    try:
        value = parse_json(text)
    except ValueError:
        return None
    if value is None:
        return {}
    if isinstance(value, dict):
        return cast(dict[str, Any], value)
    return None
