"""Shared shaping of wire messages: drop empty ones, merge same-role neighbours, add notes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._json import as_list

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
