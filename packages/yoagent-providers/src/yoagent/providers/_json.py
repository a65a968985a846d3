"""JSON from the wire: parsed without ever raising past a ``ValueError``, read leniently."""

from __future__ import annotations

import json
from typing import Any


def parse_json(text: str | bytes) -> object:
    """``text`` parsed as JSON.

    Raises ``ValueError`` for anything that is not JSON, including a document nested too
    deeply for the parser (which raises ``RecursionError`` on its own): a hostile or
    broken server can then cost one event, never the provider.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


# No ``typing.cast`` in these two: it is a real call at run time, and they run several
# times per streamed chunk (≈ 550 calls per turn of a typical agent run).


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def as_list(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else ``[]``."""
    return value if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]


def as_int(value: object) -> int | None:
    """``value`` when it is an integer (not a boolean), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""
