"""``BoundedMap``: a dict holding at most a fixed number of entries, the in-memory stores'
one eviction rule (the entry set longest ago goes first)."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMap(MutableMapping[K, V]):
    """A mapping of at most ``max_items`` entries: setting a key moves it to the newest
    place, and setting one past the bound forgets the entry set longest ago (reading does
    not count). Not thread-safe: it serves one event loop."""

    __slots__ = ("_items", "max_items")

    def __init__(self, max_items: int) -> None:
        if max_items < 1:
            raise ValueError(f"a BoundedMap holds at least one entry, got max_items={max_items}")
        self.max_items = max_items
        self._items: dict[K, V] = {}

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __setitem__(self, key: K, value: V) -> None:
        items = self._items
        items.pop(key, None)
        items[key] = value
        while len(items) > self.max_items:
            del items[next(iter(items))]

    def __delitem__(self, key: K) -> None:
        del self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"BoundedMap(max_items={self.max_items}, {len(self._items)} entries)"
