"""Where each A2A context's history lives between tasks (:class:`HistoryStore` and the
default, :class:`MemoryHistoryStore`), and the server's tasks (the default,
:class:`MemoryTaskStore`)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task
from yoagent.core import AgentMessage
from yoagent.core.support import BoundedMap


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

    __slots__ = ("_contexts",)

    def __init__(self, max_contexts: int = 10_000) -> None:
        if max_contexts < 1:
            raise ValueError(f"MemoryHistoryStore max_contexts must be >= 1, got {max_contexts}")
        self._contexts: BoundedMap[str, list[AgentMessage]] = BoundedMap(max_contexts)

    @property
    def max_contexts(self) -> int:
        """How many contexts it holds at most."""
        return self._contexts.max_items

    async def load(self, context_id: str) -> list[AgentMessage] | None:
        found = self._contexts.get(context_id)
        return list(found) if found is not None else None

    async def save(self, context_id: str, messages: list[AgentMessage]) -> None:
        self._contexts[context_id] = list(messages)


class MemoryTaskStore(TaskStore):
    """The A2A SDK's in-memory task store holding at most ``max_tasks`` tasks (the
    default): past it, the task saved longest ago is forgotten (a task is saved at each
    change of its state, so one still running is among the newest). A forgotten task is
    unknown to ``GetTask`` and ``CancelTask``. Give ``a2a_app`` a ``task_store`` of the SDK
    (a database one) to keep them all."""

    __slots__ = ("_saved", "_tasks", "max_tasks")

    def __init__(self, max_tasks: int = 10_000) -> None:
        if max_tasks < 1:
            raise ValueError(f"MemoryTaskStore max_tasks must be >= 1, got {max_tasks}")
        self.max_tasks = max_tasks
        self._tasks = InMemoryTaskStore()
        self._saved: dict[str, ServerCallContext] = {}
        """Task ids, saved longest ago first, with the call that saved them (whose owner
        the SDK's store files them under)."""

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self._tasks.save(task, context)
        self._saved.pop(task.id, None)
        self._saved[task.id] = context
        while len(self._saved) > self.max_tasks:
            oldest = next(iter(self._saved))
            await self._tasks.delete(oldest, self._saved.pop(oldest))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        return await self._tasks.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self._tasks.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._saved.pop(task_id, None)
        await self._tasks.delete(task_id, context)
