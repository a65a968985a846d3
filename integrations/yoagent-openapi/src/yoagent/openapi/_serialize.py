"""Parameter values on the wire, by the OpenAPI ``style``/``explode`` rules.

The rules are the specification's "Style Values" table: ``simple``, ``label`` and
``matrix`` in paths, ``form``, ``spaceDelimited``, ``pipeDelimited`` and ``deepObject``
in queries, ``simple`` in headers and ``form`` in cookies, each for primitives, arrays
and objects, exploded or not. No client library implements this side (the OpenAPI
libraries parse requests on servers); it is a table, written here as one.

Scalars are written as JSON writes them (``true``, ``false``, ``null`` → empty), a
nested array or object inside an array or object as JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import quote

from ._model import ParameterLocation

DEFAULT_STYLE: Final[dict[str, str]] = {
    "path": "simple",
    "query": "form",
    "header": "simple",
    "cookie": "form",
}


class SerializeProblem(Exception):
    """A value the chosen style cannot carry; the message says which parameter."""


def scalar(value: Any) -> str:
    """One value as text (JSON's spelling for booleans, numbers and null)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def path_value(name: str, value: Any, style: str | None, explode: bool | None) -> str:
    """The text that replaces ``{name}`` in a path template, percent-encoded."""
    style = style or "simple"
    explode = bool(explode)

    def enc(text: str) -> str:
        return quote(text, safe="")

    if style == "simple":
        text = _joined(value, ",", explode, enc, "=")
    elif style == "label":
        separator = "." if explode else ","
        text = "." + _joined(value, separator, explode, enc, "=")
    elif style == "matrix":
        text = _matrix(name, value, explode, enc)
    else:
        raise SerializeProblem(f"path parameter {name!r}: style {style!r} is not a path style")
    if text.strip(".") == "":  # "." or ".." would move the request up the path
        text = text.replace(".", "%2E")
    return text


def query_pairs(
    name: str, value: Any, style: str | None, explode: bool | None
) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs a query parameter adds (the client encodes them)."""
    style = style or "form"
    explode = style == "form" if explode is None else explode
    if style == "deepObject":
        if not isinstance(value, dict):
            raise SerializeProblem(f"query parameter {name!r}: deepObject needs an object")
        items: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [(f"{name}[{key}]", scalar(item)) for key, item in items.items()]
    delimiters = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}
    if style not in delimiters:
        raise SerializeProblem(f"query parameter {name!r}: style {style!r} is not a query style")
    if isinstance(value, list):
        values: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        if explode:
            return [(name, scalar(item)) for item in values]
        return [(name, delimiters[style].join(scalar(item) for item in values))]
    if isinstance(value, dict):
        fields: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if explode:
            return [(key, scalar(item)) for key, item in fields.items()]
        return [(name, ",".join(f"{key},{scalar(item)}" for key, item in fields.items()))]
    return [(name, scalar(value))]


def header_value(name: str, value: Any, explode: bool | None) -> str:
    """A header parameter's value (``simple`` style); line breaks are refused."""
    text = _joined(value, ",", bool(explode), _verbatim, "=")
    if not text.isascii() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise SerializeProblem(
            f"header parameter {name!r}: the value must be printable ASCII "
            "(no line breaks or control characters)"
        )
    return text


def cookie_pairs(name: str, value: Any, explode: bool | None) -> list[tuple[str, str]]:
    """The ``name=value`` pairs a cookie parameter adds (``form`` style), each value
    percent-encoded so that no value can end its cookie early (``a; admin=1``)."""
    return [
        (quote(key, safe=""), quote(text, safe=""))
        for key, text in query_pairs(name, value, "form", explode)
    ]


def content_value(value: Any, media_type: str) -> str:
    """A parameter described by ``content`` (not ``schema``): JSON text for a JSON type."""
    if _is_json(media_type):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return scalar(value)


def location_default_style(location: ParameterLocation) -> str:
    """The style a parameter in ``location`` has when the document names none."""
    return DEFAULT_STYLE[location]


def _verbatim(text: str) -> str:
    return text


def _is_json(media_type: str) -> bool:
    essence = media_type.split(";", 1)[0].strip().lower()
    return essence == "application/json" or essence.endswith("+json")


def _joined(value: Any, separator: str, explode: bool, enc: Callable[[str], str], pair: str) -> str:
    if isinstance(value, list):
        values: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return separator.join(enc(scalar(item)) for item in values)
    if isinstance(value, dict):
        fields: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if explode:
            return separator.join(f"{enc(k)}{pair}{enc(scalar(v))}" for k, v in fields.items())
        return separator.join(f"{enc(k)}{separator}{enc(scalar(v))}" for k, v in fields.items())
    return enc(scalar(value))


def _matrix(name: str, value: Any, explode: bool, enc: Callable[[str], str]) -> str:
    if isinstance(value, list):
        values: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        if explode:
            return "".join(f";{name}={enc(scalar(item))}" for item in values)
        return f";{name}=" + ",".join(enc(scalar(item)) for item in values)
    if isinstance(value, dict):
        fields: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if explode:
            return "".join(f";{enc(k)}={enc(scalar(v))}" for k, v in fields.items())
        return f";{name}=" + ",".join(f"{enc(k)},{enc(scalar(v))}" for k, v in fields.items())
    return f";{name}={enc(scalar(value))}"
