"""Fitting a tool call's arguments into what a decision model can read.

A call is judged whole, in one request. When its arguments are over the character budget
or the state over the backend's token limits, the longest strings are shortened to one
per-string cap (at least 400 characters, head and tail kept around a marker), the largest
cap that fits is found by binary search, and every cut is listed by JSON pointer in
``tool_call.omitted``. A "full view" (``bash`` ``/command`` by default) is never cut.

Two ways of cutting are tried at each cap, since a marker and an ``omitted`` entry can
outweigh a small cut and no one rule suits both limits: first only the cuts that shrink
the whole state (the token limits), then every cut that shrinks the arguments (the char
budget). A call that fits neither way at the smallest cap is denied.

Sizes are computed arithmetically from each string's JSON size (no re-serialisation per
trial), then the chosen view is built once and checked again.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, cast

from ._questions import BYTES_PER_TOKEN, Capabilities, json_size
from ._text import truncate_middle

logger = logging.getLogger("yoagent.decision")

MIN_CAP = 400
"""The shortest a string is ever cut to."""
MAX_REQUEST_CHARS = 8_000
"""Characters of the user's request sent (head and tail kept)."""


class _Rule(Enum):
    STATE = "state"
    """Only cuts that shrink the whole state, ``omitted`` entry included (chars and bytes)."""
    ARGUMENTS = "arguments"
    """Every cut that shrinks the serialized arguments."""


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass(slots=True, frozen=True)
class _Leaf:
    pointer: str
    path: tuple[str | int, ...]
    text: str
    chars: int
    size: int
    entry_chars: int
    entry_size: int


def _leaves(value: object, path: tuple[str | int, ...] = ()) -> list[_Leaf]:
    """Every string in ``value`` (document order) with its JSON pointer and sizes."""
    if isinstance(value, str):
        pointer = "".join(f"/{_escape(str(part))}" for part in path)
        encoded = _dumps(value)
        entry = _dumps(pointer) + ","
        return [
            _Leaf(
                pointer,
                path,
                value,
                len(encoded),
                len(encoded.encode()),
                len(entry),
                len(entry.encode()),
            )
        ]
    if isinstance(value, Mapping):
        items = cast("Mapping[str, object]", value).items()
        return [leaf for key, item in items for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        items = cast("list[object]", value)
        return [leaf for index, item in enumerate(items) for leaf in _leaves(item, (*path, index))]
    return []


def _replace_at(value: object, path: tuple[str | int, ...], text: str) -> object:
    if not path:
        return text
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        mapping = dict(cast("Mapping[str, object]", value))
        mapping[str(head)] = _replace_at(mapping[str(head)], rest, text)
        return mapping
    items = list(cast("list[object]", value))
    index = int(head)
    items[index] = _replace_at(items[index], rest, text)
    return items


def gate_state(
    user_request: str, tool: str, arguments: object, omitted: Sequence[str] = ()
) -> dict[str, Any]:
    """The state a tool gate sends: ``user_request`` and ``tool_call`` (tool, arguments, and
    the pointers of any shortened string under ``omitted``)."""
    call: dict[str, Any] = {"tool": tool, "arguments": arguments}
    if omitted:
        call["omitted"] = list(omitted)
    return {"user_request": truncate_middle(user_request, MAX_REQUEST_CHARS), "tool_call": call}


@dataclass(slots=True, frozen=True)
class FitLimits:
    """What the state must fit: the arguments' character budget and the token limits of
    every backend that may judge it (``question_tokens``: each question's estimate)."""

    max_argument_chars: int
    capabilities: Capabilities
    question_tokens: tuple[int, ...]

    def tokens_problem(self, state_bytes: int) -> str | None:
        """Why a state of ``state_bytes`` exceeds the token limits, or ``None``."""
        tokens = math.ceil(state_bytes / BYTES_PER_TOKEN)
        request = self.capabilities.max_request_tokens
        if request is not None and tokens + sum(self.question_tokens) > request:
            return f"about {tokens + sum(self.question_tokens)} tokens, over {request} per request"
        single = self.capabilities.max_state_question_tokens
        if single is not None and tokens + max(self.question_tokens, default=0) > single:
            longest = tokens + max(self.question_tokens, default=0)
            return f"about {longest} tokens, over {single} for the state and one question"
        return None

    def describe(self) -> str:
        """Both limits, for a denial."""
        caps = self.capabilities
        tokens = [
            f"{limit} tokens {what}"
            for limit, what in (
                (caps.max_request_tokens, "per request"),
                (caps.max_state_question_tokens, "for the state and one question"),
            )
            if limit is not None
        ]
        token_text = " and ".join(tokens) if tokens else "no token limit"
        return (
            f"{self.max_argument_chars} characters of arguments; the decision model's {token_text}"
        )


@dataclass(slots=True, frozen=True)
class Fitted:
    """The arguments as the gate shows them, and the pointers of the strings it shortened."""

    state: dict[str, Any]
    omitted: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class TooLarge:
    """No view fits: the shortest one's sizes, for the denial."""

    argument_chars: int
    state_problem: str | None
    full_views: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class _View:
    cuts: tuple[tuple[_Leaf, str], ...]
    argument_chars: int
    state_bytes: int


def fit_arguments(
    user_request: str,
    tool: str,
    arguments: Mapping[str, Any],
    limits: FitLimits,
    full_views: Sequence[str] = (),
) -> Fitted | TooLarge:
    """The gate's state for this call: the arguments whole when they fit, else cut as
    little as the limits allow; :class:`TooLarge` when even the smallest cap does not fit."""
    whole = gate_state(user_request, tool, arguments)
    argument_chars = len(_dumps(arguments))
    state_bytes = json_size(whole)
    if argument_chars <= limits.max_argument_chars and limits.tokens_problem(state_bytes) is None:
        return Fitted(whole, ())
    leaves = _leaves(arguments)
    protected = tuple(leaf.pointer for leaf in leaves if _under_full_view(leaf.pointer, full_views))
    candidates = [leaf for leaf in leaves if leaf.pointer not in protected]
    omitted_overhead = len(',"omitted":[]')

    def view(cap: int, rule: _Rule) -> _View:
        cuts: list[tuple[_Leaf, str]] = []
        chars, size = argument_chars, state_bytes
        for leaf in candidates:
            if len(leaf.text) <= cap:
                continue
            cut = truncate_middle(leaf.text, cap)
            encoded = _dumps(cut)
            saved_chars = leaf.chars - len(encoded)
            saved_bytes = leaf.size - len(encoded.encode())
            if rule is _Rule.STATE:
                keep = saved_chars > leaf.entry_chars and saved_bytes > leaf.entry_size
            else:
                keep = saved_chars > 0
            if keep:
                cuts.append((leaf, cut))
                chars -= saved_chars
                size -= saved_bytes - leaf.entry_size
        if cuts:
            size += omitted_overhead - 1  # the last entry has no comma
        return _View(tuple(cuts), chars, size)

    def fits(candidate: _View) -> bool:
        return (
            candidate.argument_chars <= limits.max_argument_chars
            and limits.tokens_problem(candidate.state_bytes) is None
        )

    def first_fitting(cap: int) -> _View | None:
        for rule in (_Rule.STATE, _Rule.ARGUMENTS):
            candidate = view(cap, rule)
            if candidate.cuts and fits(candidate):
                return candidate
        return None

    longest = max((len(leaf.text) for leaf in candidates), default=0)
    chosen = first_fitting(MIN_CAP) if longest > MIN_CAP else None
    if chosen is None:
        shortest = min(
            (view(MIN_CAP, rule) for rule in _Rule), key=lambda v: (v.state_bytes, v.argument_chars)
        )
        return TooLarge(
            shortest.argument_chars, limits.tokens_problem(shortest.state_bytes), protected
        )
    low, high = MIN_CAP, longest - 1  # the largest cap that fits, in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        found = first_fitting(middle)
        if found is not None:
            chosen, low = found, middle
        else:
            high = middle - 1
    return _build(user_request, tool, arguments, chosen, limits, protected)


def _build(
    user_request: str,
    tool: str,
    arguments: Mapping[str, Any],
    chosen: _View,
    limits: FitLimits,
    protected: tuple[str, ...],
) -> Fitted | TooLarge:
    shortened: object = arguments
    for leaf, cut in chosen.cuts:
        shortened = _replace_at(shortened, leaf.path, cut)
    omitted = tuple(leaf.pointer for leaf, _ in chosen.cuts)
    state = gate_state(user_request, tool, shortened, omitted)
    chars, size = len(_dumps(shortened)), json_size(state)
    if (chars, size) != (chosen.argument_chars, chosen.state_bytes):
        logger.error(
            "tool gate: argument fitting predicted %d chars / %d bytes, built %d / %d",
            chosen.argument_chars,
            chosen.state_bytes,
            chars,
            size,
        )
    problem = limits.tokens_problem(size)
    if chars > limits.max_argument_chars or problem is not None:
        return TooLarge(chars, problem, protected)
    return Fitted(state, omitted)


def _under_full_view(pointer: str, full_views: Sequence[str]) -> bool:
    return any(pointer == view or pointer.startswith(view + "/") for view in full_views)
