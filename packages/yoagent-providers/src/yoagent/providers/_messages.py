"""Shared shaping of wire messages: drop empty ones, merge same-role neighbours, add notes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from yoagent.core import ToolResultMessage
from yoagent.core.provider import Message

from ._json import as_list

T = TypeVar("T")

WireMessage = dict[str, Any]
"""One message as a protocol sends it: ``role`` plus list-valued fields."""


def _items(message: WireMessage, key: str) -> list[Any]:
    return as_list(message.get(key))


def drop_empty(
    messages: Iterable[WireMessage], keys: tuple[str, ...] = ("content",)
) -> list[WireMessage]:
    """The messages that still hold something under one of ``keys``.

    An errored, refused or cancelled turn, or one holding only reasoning that cannot be
    replayed, becomes empty once converted; APIs reject empty messages, so it goes.
    """
    return [m for m in messages if any(_items(m, key) for key in keys)]


def merge_same_role(
    messages: Iterable[WireMessage],
    keys: tuple[str, ...] = ("content",),
    *,
    keep_apart: frozenset[str] = frozenset(),
) -> list[WireMessage]:
    """Join consecutive messages of the same role by concatenating their ``keys`` lists.

    Roles must alternate for most APIs, and parallel tool results go back as one user
    message. Roles in ``keep_apart`` (OpenAI's ``tool``) are never merged.
    """
    merged: list[WireMessage] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and previous.get("role") == message.get("role")
            and message.get("role") not in keep_apart
        ):
            for key in keys:
                joined = _items(previous, key) + _items(message, key)
                if joined:
                    previous[key] = joined
            continue
        # Copy the lists so merging never mutates the caller's messages.
        merged.append(
            {**message, **{k: list(_items(message, k)) for k in keys if _items(message, k)}}
        )
    return merged


def join_same_role(messages: Iterable[WireMessage], key: str = "content") -> list[WireMessage]:
    """``merge_same_role(drop_empty(messages, (key,)), (key,))`` for messages whose ``key``
    always holds a list (as every protocol's own conversion builds them), in one pass.

    Each message sent is a new dict with a new ``key`` list, so whatever a request changes
    there (cache marks, notes) never reaches the messages given, which a
    :class:`WireCache` keeps for the next request. The blocks inside the lists are the
    cached ones, not copies: a request adds or replaces blocks, and never edits one in
    place (a mark on a block copies that block first).
    """
    joined: list[WireMessage] = []
    role: object = None
    for message in messages:
        items: list[Any] = message[key]
        if not items:
            continue
        if joined and message.get("role") == role:
            joined[-1][key] += items
        else:
            joined.append({**message, key: list(items)})
            role = message.get("role")
    return joined


def notes_index(
    messages: list[WireMessage], *, user_role: str = "user", reply_role: str = "assistant"
) -> int | None:
    """Where this request's turn notes go: the latest user message after the last reply.

    ``None`` means "append a new user message" (the conversation ends with a reply or a
    tool message, or has no user message yet).
    """
    for index in range(len(messages) - 1, -1, -1):
        role = messages[index].get("role")
        if role == user_role:
            return index
        if role == reply_role:
            return None
    return None


class WireCache(Generic[T]):
    """Each history message's converted wire form, made once and reused on later turns.

    Every request re-sends the whole history, so converting every message again made a
    turn's cost grow with the history (≈ 330 µs for 80 messages on the bench machine).
    An entry is keyed by the message object and reused while that object still holds the
    same content blocks (the very objects, by identity) and, for a tool
    result, the same call id, tool name and error flag, under the same ``setting`` (a new setting
    drops every entry). The loop never edits a message already in the history:
    compaction and history edits put new objects there, which are converted afresh; only
    an in-place edit of a block's own fields (``block.text = ...``) is not looked for: it
    goes unseen, or (Chat Completions, which rebuilds a message's merge form when a request
    first needs one) is seen only by the requests that merge or note. Only the
    messages of the latest request are kept; the memory this costs per message is
    measured in ``benchmarks/RESULTS.md``.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        # The setting and its entries, replaced together (one assignment: two threads
        # sharing a provider never pair one setting with the other's entries).
        self._state: tuple[object, dict[int, _Entry[T]]] = (None, {})

    def convert(
        self, messages: Sequence[Message], setting: object, convert: Callable[[Message], T]
    ) -> list[T]:
        """``convert(m)`` for each message, reusing what an earlier call converted."""
        previous_setting, previous = self._state
        if setting != previous_setting:
            previous = {}
        entries: dict[int, _Entry[T]] = {}
        out: list[T] = []
        for message in messages:
            stamp = _stamp(message)
            entry = previous.get(id(message))
            # The entry holds its message and its blocks, so none of their ids is reused
            # by another object while it exists: equal ids are the very same objects.
            if entry is None or entry[0] is not message or entry[1] != stamp:
                entry = (message, stamp, convert(message), tuple(message.content))
            entries[id(message)] = entry
            out.append(entry[2])
        self._state = (setting, entries)
        return out


def converted(
    messages: Sequence[Message],
    convert: Callable[[Message], T],
    cache: WireCache[T] | None,
    setting: object,
) -> list[T]:
    """``convert(m)`` for each message, through ``cache`` (under ``setting``) when given."""
    if cache is None:
        return [convert(message) for message in messages]
    return cache.convert(messages, setting, convert)


_Entry = tuple[Message, tuple[object, ...], T, tuple[object, ...]]
"""A message, the stamp it had when converted, what it was converted to, and the blocks
it held then (kept alive, so their ids in the stamp stay theirs)."""


def _stamp(message: Message) -> tuple[object, ...]:
    """The identities of the message's blocks (not their values: ``{"n": 1} == {"n":
    True}`` must not pass an edited call off as unchanged) and a tool result's id, name and
    error flag."""
    if isinstance(message, ToolResultMessage):
        return (
            *map(id, message.content),
            message.tool_call_id,
            message.tool_name,
            message.is_error,
        )
    return tuple(map(id, message.content))
