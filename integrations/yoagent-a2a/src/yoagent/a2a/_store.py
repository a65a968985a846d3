"""Where each A2A context's history lives between tasks: :class:`HistoryStore` and the
default, :class:`MemoryHistoryStore`."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from yoagent.core import AgentMessage


@runtime_checkable
class HistoryStore(Protocol):
    """Keeps a conversation's messages under its A2A context id. Implement it over a
    database to keep contexts across restarts or share them between processes."""

    async def load(self, context_id: str) -> list[AgentMessage] | None:
        """The context's messages, or ``None`` when nothing is stored under it."""
        ...

    async def save(self, context_id: str, messages: list[AgentMessage]) -> None:
        """Store ``messages`` under ``context_id``, replacing what was there."""
        ...


class MemoryHistoryStore:
    """Histories in a dict, in this process (the default); the context saved longest ago is
    forgotten first past ``max_contexts``."""

    __slots__ = ("_contexts", "max_contexts")

    def __init__(self, max_contexts: int = 10_000) -> None:
        if max_contexts < 1:
            raise ValueError(f"MemoryHistoryStore max_contexts must be >= 1, got {max_contexts}")
        self.max_contexts = max_contexts
        self._contexts: dict[str, list[AgentMessage]] = {}

    async def load(self, context_id: str) -> list[AgentMessage] | None:
        found = self._contexts.get(context_id)
        return list(found) if found is not None else None

    async def save(self, context_id: str, messages: list[AgentMessage]) -> None:
        self._contexts.pop(context_id, None)
        self._contexts[context_id] = list(messages)
        while len(self._contexts) > self.max_contexts:
            del self._contexts[next(iter(self._contexts))]
