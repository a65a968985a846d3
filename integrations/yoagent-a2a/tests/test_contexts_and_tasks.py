"""The server's contexts and tasks, in process (httpx's ASGI transport): the tasks of one
context run one at a time, the task store is bounded, the factory is core's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from a2a.client import ClientConfig, create_client
from a2a.server.tasks import TaskStore
from a2a.types import GetTaskRequest, ListTasksRequest
from a2a.utils.errors import TaskNotFoundError
from a2a_testing import in_process, message

from yoagent.a2a import AgentFactory, MemoryHistoryStore, MemoryTaskStore, a2a_app
from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    MockReply,
    ModelConfig,
    TextContent,
    loop,
)

pytestmark = pytest.mark.anyio

URL = "http://agent.test"


def slow_agent() -> Agent:
    reply = MockReply(message=AssistantMessage(content=[TextContent(text="ok")]), delay=0.05)
    return Agent.from_provider(MockProvider([reply]), ModelConfig.mock())


@asynccontextmanager
async def client_of(
    factory: Callable[[], Agent] = slow_agent, **options: Any
) -> AsyncIterator[Any]:
    app = await a2a_app(factory, name="a", description="a", url=URL, **options)
    async with in_process(app, URL) as http:
        yield await create_client(URL, ClientConfig(streaming=False, httpx_client=http))


async def test_two_tasks_in_one_context_both_keep_their_exchange() -> None:
    history = MemoryHistoryStore()
    async with client_of(store=history) as client:
        first = [r async for r in client.send_message(message("first"))]
        context_id = first[-1].task.context_id

        async def exchange(text: str) -> None:
            [r async for r in client.send_message(message(text, context_id))]

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(exchange, "second")
                group.start_soon(exchange, "third")
    stored = await history.load(context_id)
    assert stored is not None
    users = [m.text for m in stored if m.role == "user"]  # type: ignore[union-attr]
    assert users[0] == "first" and sorted(users[1:]) == ["second", "third"]
    assert [m.role for m in stored] == ["user", "assistant"] * 3


async def test_the_task_store_forgets_the_task_saved_longest_ago() -> None:
    tasks = MemoryTaskStore(max_tasks=3)
    async with client_of(
        lambda: Agent.from_provider(MockProvider.text("x"), ModelConfig.mock()), task_store=tasks
    ) as client:
        ids = [
            [r async for r in client.send_message(message(f"n{i}"))][-1].task.id for i in range(5)
        ]
        listed = await client.list_tasks(ListTasksRequest(page_size=100))
        assert sorted(t.id for t in listed.tasks) == sorted(ids[2:])
        assert (await client.get_task(GetTaskRequest(id=ids[-1]))).id == ids[-1]
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=ids[0]))


def test_the_default_task_store_is_bounded() -> None:
    assert MemoryTaskStore().max_tasks == 10_000
    assert isinstance(MemoryTaskStore(), TaskStore)
    with pytest.raises(ValueError, match="max_tasks must be >= 1, got 0"):
        MemoryTaskStore(max_tasks=0)


async def test_the_factory_is_cores() -> None:
    assert AgentFactory is loop.AgentFactory
    with pytest.raises(TypeError, match="the agent factory returned str, not an Agent"):
        await a2a_app(lambda: "nope", name="a", description="a", url=URL)  # type: ignore[arg-type, return-value]
