"""Matching a request against recorded ones: what is compared, and where two first differ."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from yoagent.core import ErrorKind, ProviderError

from ._codec import JsonObject
from ._errors import TestingError

Normalizer = Callable[[JsonObject], JsonObject]


@dataclass(slots=True, kw_only=True, frozen=True)
class Match:
    """Which parts of a request must equal the recorded one for the recording to serve it.

    Each flag is ``True`` when that part is compared. By default everything the model sees
    is compared; message timestamps (never sent to a model) and the endpoint (base URL and
    headers: where the request went, not what it said) are not. ``normalize`` gets a
    copy of each request's JSON form (recorded and live alike, after the flags applied) and
    returns what to compare, for anything else to ignore.
    """

    model: bool = True
    """The model's protocol, vendor, id, default output limit and reasoning flag."""
    endpoint: bool = False
    """The base URL and headers (credentials are redacted on both sides either way)."""
    timestamps: bool = False
    """Each message's ``timestamp``."""
    tool_call_ids: bool = True
    """Tool-call ids; when ``False``, ids are compared by order of appearance instead."""
    cache: bool = True
    """The prompt-caching hints (``CacheConfig``: on or off, and the session key)."""
    normalize: Normalizer | None = None

    @classmethod
    def exact(cls) -> Match:
        """Compare everything a request records, timestamps and endpoint included."""
        return cls(endpoint=True, timestamps=True)

    def apply(self, request: JsonObject) -> JsonObject:
        """The part of ``request`` (a JSON form; left unchanged) that is compared."""
        out = dict(request)
        if not self.model:
            out.pop("model", None)
        if not self.endpoint:
            out.pop("endpoint", None)
        if not self.cache:
            out.pop("cache", None)
        if not (self.timestamps and self.tool_call_ids) and isinstance(out.get("messages"), list):
            ids: dict[str, str] = {}
            out["messages"] = [
                self._message(message, ids) for message in cast(list[Any], out["messages"])
            ]
        if self.normalize is not None:
            out = self.normalize(copy.deepcopy(out))
        return out

    def _message(self, message: Any, ids: dict[str, str]) -> Any:
        if not isinstance(message, dict):
            return message
        out = dict(cast(JsonObject, message))
        if not self.timestamps:
            out.pop("timestamp", None)
        if not self.tool_call_ids:

            def renamed(call_id: Any) -> Any:
                if not isinstance(call_id, str):
                    return call_id
                return ids.setdefault(call_id, f"call_{len(ids) + 1}")

            if "tool_call_id" in out:
                out["tool_call_id"] = renamed(out["tool_call_id"])
            if isinstance(out.get("content"), list):
                out["content"] = [
                    _renamed_call(block, renamed) for block in cast(list[Any], out["content"])
                ]
        return out


def _renamed_call(block: Any, renamed: Callable[[Any], Any]) -> Any:
    if not isinstance(block, dict):
        return block
    fields = cast(JsonObject, block)
    if fields.get("type") != "tool_call":
        return fields
    return {**fields, "id": renamed(fields.get("id"))}


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()
"""Stands for a field or item one side does not have."""

Path = tuple[str | int, ...]


@dataclass(slots=True, frozen=True)
class Difference:
    """Where two JSON values first differ: the path to it and each side's value there
    (:data:`MISSING` where a side has no such field or item)."""

    path: Path
    recorded: Any
    actual: Any

    @property
    def where(self) -> str:
        """The path as an expression, e.g. ``messages[0].content[0].text``."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out or "the request"

    def describe(self, recorded: JsonObject | None = None, actual: JsonObject | None = None) -> str:
        """A few lines saying which field differs (naming the message, given the requests
        the path is in) and both values."""
        where = self.where
        if len(self.path) >= 2 and self.path[0] == "messages" and isinstance(self.path[1], int):
            role = _role_at(recorded, self.path[1]) or _role_at(actual, self.path[1])
            where += f" (message {self.path[1]}" + (f", {role})" if role else ")")
        return (
            f"{where} differs\n  recorded: {_show(self.recorded)}\n  got:      {_show(self.actual)}"
        )


def first_difference(recorded: Any, actual: Any, path: Path = ()) -> Difference | None:
    """The first place (depth first, in field order) where two JSON values differ;
    ``None`` exactly when their :func:`canonical_json` texts are equal."""
    if isinstance(recorded, dict) and isinstance(actual, dict):
        left, right = cast(JsonObject, recorded), cast(JsonObject, actual)
        for key in [*left, *(key for key in right if key not in left)]:
            if key not in left or key not in right:
                return Difference((*path, key), left.get(key, MISSING), right.get(key, MISSING))
            found = first_difference(left[key], right[key], (*path, key))
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(actual, list):
        left_items, right_items = cast(list[Any], recorded), cast(list[Any], actual)
        for index, (a, b) in enumerate(zip(left_items, right_items, strict=False)):
            found = first_difference(a, b, (*path, index))
            if found is not None:
                return found
        if len(left_items) != len(right_items):
            index = min(len(left_items), len(right_items))
            return Difference(
                (*path, index),
                left_items[index] if index < len(left_items) else MISSING,
                right_items[index] if index < len(right_items) else MISSING,
            )
        return None
    return None if _same(recorded, actual) else Difference(path, recorded, actual)


def canonical_json(value: Any) -> str:
    """``value`` as JSON text with sorted keys: two JSON values are the same request part
    exactly when these texts are equal (``true`` is not ``1``, ``1`` is not ``1.0``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _same(a: Any, b: Any) -> bool:
    """Equal as :func:`canonical_json` sees them: same type, same value (NaN is NaN)."""
    if type(a) is not type(b):
        return False
    return a == b or (isinstance(a, float) and a != a and b != b)


def _role_at(request: JsonObject | None, index: int) -> str | None:
    messages = request.get("messages") if request else None
    if isinstance(messages, list) and 0 <= index < len(cast(list[Any], messages)):
        message = cast(list[Any], messages)[index]
        if isinstance(message, dict):
            role = cast(JsonObject, message).get("role")
            return role if isinstance(role, str) else None
    return None


_SHOWN = 300


def _show(value: Any) -> str:
    if value is MISSING:
        return "(nothing)"
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


class RequestMismatch(TestingError, ProviderError):
    """A request that no recorded call serves. ``difference`` is where it first departs
    from the call it was compared with (``None`` when the cassette had no call left)."""

    def __init__(
        self,
        message: str,
        *,
        request: int,
        call: int | None = None,
        difference: Difference | None = None,
    ) -> None:
        super().__init__(ErrorKind.OTHER, message)
        self.request = request
        """The request's number, from 0, in the order the provider was asked."""
        self.call = call
        """The recorded call it was compared with."""
        self.difference = difference
