"""Where a thread's history lives between requests: :class:`ThreadStore` and the default,
:class:`MemoryThreadStore`.

A front-end sends the conversation as it shows it; the server keeps its own, richer copy
(reasoning signatures, usage, the calls a paused run holds) under the thread's id, with the
protocol id of every message, so the next request continues from the server's copy and
takes only what is new from the client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from yoagent.core import AgentMessage
from yoagent.core.support import BoundedMap, LazyTypeAdapter


@dataclass(slots=True, kw_only=True)
class StoredThread:
    """A thread's history and, for each message, the id a front-end knows it by (several
    messages may share one id: the AI SDK shows a whole run as one message; an empty id
    is a message the front-end was never shown, such as a held call's placeholder)."""

    messages: list[AgentMessage] = field(default_factory=list[AgentMessage])
    ids: list[str] = field(default_factory=list[str])

    def __post_init__(self) -> None:
        if len(self.messages) != len(self.ids):
            raise ValueError(
                f"a stored thread needs one id per message: {len(self.messages)} messages, "
                f"{len(self.ids)} ids"
            )

    def to_json(self) -> bytes:
        """This thread as JSON (for a store that keeps bytes: a file, a database row)."""
        return _thread_adapter.dump_json(self)

    @classmethod
    def from_json(cls, data: str | bytes) -> StoredThread:
        """A thread written by :meth:`to_json`."""
        return _thread_adapter.validate_json(data)


_thread_adapter: LazyTypeAdapter[StoredThread] = LazyTypeAdapter(StoredThread)


@runtime_checkable
class ThreadStore(Protocol):
    """Keeps each thread's history between requests. Implement it over a database to share
    threads between server processes; the endpoints hold one run per thread at a time in
    their own process."""

    async def load(self, thread_id: str) -> StoredThread | None:
        """The thread, or ``None`` when nothing is stored under ``thread_id``."""
        ...

    async def save(self, thread_id: str, thread: StoredThread) -> None:
        """Store ``thread`` under ``thread_id``, replacing what was there."""
        ...


class MemoryThreadStore:
    """Threads in a dict, in this process (the default). ``max_threads`` bounds it: the
    thread saved longest ago is forgotten first."""

    __slots__ = ("_threads",)

    def __init__(self, max_threads: int = 10_000) -> None:
        if max_threads < 1:
            raise ValueError(f"MemoryThreadStore max_threads must be >= 1, got {max_threads}")
        self._threads: BoundedMap[str, StoredThread] = BoundedMap(max_threads)

    @property
    def max_threads(self) -> int:
        """How many threads it holds at most."""
        return self._threads.max_items

    async def load(self, thread_id: str) -> StoredThread | None:
        thread = self._threads.get(thread_id)
        if thread is None:
            return None
        return StoredThread(messages=list(thread.messages), ids=list(thread.ids))

    async def save(self, thread_id: str, thread: StoredThread) -> None:
        self._threads[thread_id] = StoredThread(
            messages=list(thread.messages), ids=list(thread.ids)
        )

    def __len__(self) -> int:
        return len(self._threads)


def continues(stored: Sequence[str], sent: Sequence[str]) -> int | None:
    """How many of the ids a client sent are the stored thread's, when they start with every
    id it showed the client, in order; ``None`` when the server holds nothing of the thread
    (a new thread, a restart, a forgotten one) or the client's history went another way
    (edited, cut short, or another thread's): the client's history is then the thread's.

    An empty id is a message the client was never shown (a held call's placeholder); a run
    of equal ids counts once (the AI SDK shows a whole run as one message).
    """
    shown: list[str] = []
    for key in stored:
        if key and (not shown or shown[-1] != key):
            shown.append(key)
    if not shown or list(sent[: len(shown)]) != shown:
        return None
    return len(shown)


def prompt_start(messages: Sequence[AgentMessage]) -> int:
    """Where the new prompt begins in a history taken from the client: after its last
    message that is not a user's (the trailing user messages are what the client just
    said, and run as a prompt: input filters judge them)."""
    start = len(messages)
    while start and messages[start - 1].role == "user":
        start -= 1
    return start
