"""The in-memory stores' bounds and bookkeeping, through their public methods: how many
contexts and tasks they hold, which goes first, and that a task updated or deleted is
counted once (or not at all) and under the owner that saved it."""

from __future__ import annotations

import pytest
from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskState, TaskStatus

from yoagent.a2a import MemoryHistoryStore, MemoryTaskStore
from yoagent.core import TextContent, UserMessage

pytestmark = pytest.mark.anyio


class Named(User):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


def call(user: str = "") -> ServerCallContext:
    return ServerCallContext(user=Named(user)) if user else ServerCallContext()


def task(task_id: str, state: TaskState = TaskState.TASK_STATE_WORKING) -> Task:
    return Task(id=task_id, context_id="ctx", status=TaskStatus(state=state))


def said(text: str) -> list[UserMessage]:
    # A fixed timestamp: two calls compare equal even when the clock ticks between them.
    return [UserMessage(content=[TextContent(text=text)], timestamp=0)]


@pytest.mark.parametrize("bad", [0, -1])
def test_a_history_store_holds_at_least_one_context(bad: int) -> None:
    with pytest.raises(
        ValueError, match=f"MemoryHistoryStore max_contexts must be >= 1, got {bad}"
    ):
        MemoryHistoryStore(max_contexts=bad)


async def test_a_history_store_of_one_keeps_the_context_saved_last() -> None:
    store = MemoryHistoryStore(max_contexts=1)
    assert store.max_contexts == 1
    await store.save("a", said("first"))
    assert await store.load("a") == said("first")
    await store.save("b", said("second"))
    assert await store.load("a") is None
    assert await store.load("b") == said("second")


async def test_a_history_store_forgets_the_context_saved_longest_ago() -> None:
    assert MemoryHistoryStore().max_contexts == 10_000
    store = MemoryHistoryStore(max_contexts=2)
    await store.save("a", said("a1"))
    await store.save("b", said("b1"))
    await store.save("a", said("a2"))  # saved again: now the newest
    await store.save("c", said("c1"))
    assert await store.load("b") is None
    assert await store.load("a") == said("a2")
    assert await store.load("c") == said("c1")


async def test_a_history_store_hands_out_copies() -> None:
    store = MemoryHistoryStore()
    messages = said("kept")
    await store.save("a", messages)
    messages.append(UserMessage.from_text("after the save"))
    loaded = await store.load("a")
    assert loaded == said("kept")
    assert loaded is not None
    loaded.clear()
    assert await store.load("a") == said("kept")


async def test_a_task_updated_counts_once_and_as_the_newest() -> None:
    store = MemoryTaskStore(max_tasks=2)
    await store.save(task("a"), call())
    await store.save(task("b"), call())
    await store.save(task("a", TaskState.TASK_STATE_COMPLETED), call())  # a changes state
    await store.save(task("c"), call())
    assert await store.get("b", call()) is None
    found = await store.get("a", call())
    assert found is not None and found.status.state == TaskState.TASK_STATE_COMPLETED
    assert await store.get("c", call()) is not None


async def test_a_deleted_task_is_gone_and_frees_its_place() -> None:
    store = MemoryTaskStore(max_tasks=2)
    await store.save(task("a"), call())
    await store.save(task("b"), call())
    await store.delete("b", call())
    assert await store.get("b", call()) is None
    await store.save(task("c"), call())  # a and c fit: nothing is forgotten
    assert await store.get("a", call()) is not None
    assert await store.get("c", call()) is not None


async def test_deleting_an_unknown_task_changes_nothing() -> None:
    store = MemoryTaskStore(max_tasks=1)
    await store.save(task("a"), call())
    await store.delete("missing", call())
    assert await store.get("a", call()) is not None


async def test_a_forgotten_task_goes_from_its_owners_tasks() -> None:
    store = MemoryTaskStore(max_tasks=1)
    await store.save(task("a"), call("alice"))
    assert await store.get("a", call("bob")) is None  # the SDK's store is per owner
    assert await store.get("a", call("alice")) is not None
    await store.save(task("b"), call("bob"))
    assert await store.get("a", call("alice")) is None
    assert await store.get("b", call("bob")) is not None
