"""JSON as the GASP log writes and compares it: compact UTF-8 lines, strict parsing, and
equality that tells ``1`` from ``1.0`` and ``true`` (as serde_json, the reference, does)."""

from __future__ import annotations

import json
from typing import Any, cast

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> str:
    """``value`` as one compact JSON text (no spaces, UTF-8 kept as is, no NaN)."""
    return _ENCODER.encode(value)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate field `{key}`")
        result[key] = value
    return result


def loads(text: str | bytes) -> Any:
    """Parse JSON, refusing ``NaN``/``Infinity`` (serde_json refuses them too)."""
    return json.loads(text, parse_constant=_reject_constant)


def loads_strict(text: str | bytes) -> Any:
    """:func:`loads`, also refusing an object that repeats a key."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def loads_event(text: str | bytes) -> Any:
    """Parse a log line as the reference deserializes an ``Event``: a key repeated in the
    envelope or in its ``actor`` is an error (serde refuses a repeated field of a typed
    struct), while inside ``payload`` — a ``serde_json::Value`` — the last value wins."""
    repeated: list[tuple[dict[str, Any], str]] = []

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                repeated.append((result, key))
            result[key] = value
        return result

    value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=members)
    envelope = as_object(value)
    if envelope is not None and repeated:
        typed = [envelope]
        actor = as_object(envelope.get("actor"))
        if actor is not None:
            typed.append(actor)
        for owner, key in repeated:
            if any(owner is struct for struct in typed):
                raise ValueError(f"duplicate field `{key}`")
    return value


def as_object(value: object) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else ``None``."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def as_array(value: object) -> list[Any] | None:
    """``value`` when it is a JSON array, else ``None``."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality where ``1``, ``1.0`` and ``true`` are three different values."""
    if type(a) is not type(b):
        return False
    left, right = as_object(a), as_object(b)
    if left is not None and right is not None:
        return left.keys() == right.keys() and all(json_equal(v, right[k]) for k, v in left.items())
    first, second = as_array(a), as_array(b)
    if first is not None and second is not None:
        return len(first) == len(second) and all(map(json_equal, first, second))
    return bool(a == b)


def clone(value: Any) -> Any:
    """A copy of a JSON tree (dicts and lists copied, leaves shared: they are immutable)."""
    source = as_object(value)
    if source is not None:
        return {key: clone(item) for key, item in source.items()}
    items = as_array(value)
    if items is not None:
        return [clone(item) for item in items]
    return value
