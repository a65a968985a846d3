"""A2AAgentTool in process (httpx's ASGI transport): the remote context belongs to the
run, a non-streaming remote agent's answer is the result, the client is the floor's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import ListTasksRequest
from a2a_testing import in_process

from yoagent.a2a import A2AAgentTool, RemoteAgentError, a2a_app
from yoagent.a2a import _tool as tool_module
from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
)
from yoagent.core.provider import StreamConfig

pytestmark = pytest.mark.anyio

URL = "http://remote.test"


def echo(config: StreamConfig) -> AssistantMessage:
    """The remote model: says every user message of its context."""
    said = " | ".join(m.text for m in config.messages if m.role == "user")  # type: ignore[union-attr]
    return AssistantMessage(content=[TextContent(text=f"remote saw: {said}")])


@asynccontextmanager
async def remote_agent() -> AsyncIterator[tuple[A2AAgentTool, Any]]:
    """The echoing remote agent, its tool, and an A2A client to inspect its tasks."""
    app = await a2a_app(
        lambda: Agent.from_provider(MockProvider([echo] * 10), ModelConfig.mock()),
        name="remote",
        description="Echoes.",
        url=URL,
    )
    async with in_process(app, URL) as http:
        tool = await A2AAgentTool.connect(URL, http=http)
        yield tool, await create_client(URL, ClientConfig(httpx_client=http))


def calling(tool: A2AAgentTool, *turns: list[str]) -> Agent:
    """An agent whose model makes the calls of each turn (in one reply), then ends."""
    replies: list[AssistantMessage] = [
        AssistantMessage(
            content=[
                ToolCall(id=f"c{t}{i}", name=tool.name, arguments={"task": task})
                for i, task in enumerate(tasks)
            ],
            stop_reason=StopReason.TOOL_USE,
        )
        for t, tasks in enumerate(turns)
    ]
    replies.append(AssistantMessage(content=[TextContent(text="ok")]))
    return Agent.from_provider(MockProvider(replies), ModelConfig.mock(), tools=[tool])


def results(agent: Agent) -> list[str]:
    return [m.text for m in agent.messages if isinstance(m, ToolResultMessage)]


async def contexts(inspector: Any) -> set[str]:
    listed = await inspector.list_tasks(ListTasksRequest(page_size=100))
    return {task.context_id for task in listed.tasks}


async def test_agents_sharing_the_tool_never_share_a_remote_conversation() -> None:
    async with remote_agent() as (tool, inspector):
        alice = calling(tool, ["alice: my card is 4242"])
        await alice.prompt("x")
        bob = calling(tool, ["bob: hello"])
        await bob.prompt("y")
        assert results(bob) == ["remote saw: bob: hello"]
        assert len(await contexts(inspector)) == 2


async def test_the_calls_of_one_run_continue_one_remote_context() -> None:
    async with remote_agent() as (tool, inspector):
        agent = calling(tool, ["one"], ["two"])
        await agent.prompt("x")
        assert results(agent) == ["remote saw: one", "remote saw: one | two"]
        assert len(await contexts(inspector)) == 1


async def test_parallel_calls_of_one_reply_share_the_runs_context() -> None:
    async with remote_agent() as (tool, inspector):
        agent = calling(tool, ["one", "two"])
        await agent.prompt("x")
        assert sorted(results(agent)) == ["remote saw: one", "remote saw: one | two"]
        assert len(await contexts(inspector)) == 1


async def test_a_non_streaming_remote_agent_answers_with_its_task() -> None:
    async with remote_agent() as (tool, _):
        tool.card.capabilities.streaming = False  # as a remote agent without streaming says
        agent = calling(tool, ["Paris?"])
        await agent.prompt("x")
        (result,) = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
        assert result.text == "remote saw: Paris?" and not result.is_error


async def test_the_client_made_for_a_call_is_the_floors(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    def recording(**options: Any) -> httpx.AsyncClient:
        made.append(options["timeout"])
        return httpx.AsyncClient(timeout=options["timeout"])

    monkeypatch.setattr(tool_module, "http_client", recording)
    with pytest.raises(RemoteAgentError):
        await A2AAgentTool.connect("http://127.0.0.1:9", timeout=7.0)
    assert made == [httpx.Timeout(7.0, connect=10.0)]
