"""A yoagent agent calling another yoagent agent over A2A: the remote's streamed answer is
the call's progress; a remote that dies mid-stream is an error result, never a hang; a
cancelled run cancels the remote task."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import CancelTaskRequest, ListTasksRequest, TaskState
from a2a_model_server import ModelServer
from a2a_testing import Ends, agent_factory, remote_process

from yoagent.a2a import A2AAgentTool, RemoteAgentError
from yoagent.core import (
    Agent,
    AgentTool,
    ToolExecutionEnd,
    ToolExecutionUpdate,
    ToolResultMessage,
)

pytestmark = pytest.mark.anyio


def parent(model_server: ModelServer, remote: AgentTool) -> Agent:
    return agent_factory(model_server.url, tools=[remote])()


def call(tool: AgentTool, task: str) -> str:
    return f"call {tool.name} {json.dumps({'task': task})}"


async def test_an_agent_calls_another_and_streams_its_progress(
    a2a_url: str, model_server: ModelServer
) -> None:
    remote = await A2AAgentTool.connect(a2a_url)
    assert remote.name == "weather-agent" and remote.description == "Knows the weather."
    agent = parent(model_server, remote)
    updates: list[str] = []
    async with agent.stream(call(remote, "hello")) as events:
        async for event in events:
            if isinstance(event, ToolExecutionUpdate):
                updates.append("".join(b.text for b in event.content if b.type == "text"))
    assert updates == ["Hel", "Hello there", "Hello there!"]
    assert agent.messages[-1].text == "Result: Hello there!"  # type: ignore[union-attr]


async def test_a_remote_failure_is_the_calls_error_result(
    a2a_url: str, model_server: ModelServer
) -> None:
    remote = await A2AAgentTool.connect(a2a_url, name="forecaster")
    agent = parent(model_server, remote)
    await agent.prompt(call(remote, "weather Atlantis"))
    (result,) = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and result.text.startswith("the remote agent forecaster failed: ")
    assert "the model broke" in result.text


async def test_the_remote_dying_mid_stream_is_an_error_not_a_hang(
    model_server: ModelServer,
) -> None:
    with remote_process(model_server.url) as (url, process):
        remote = await A2AAgentTool.connect(url)
        agent = parent(model_server, remote)
        result: ToolResultMessage | None = None
        with anyio.fail_after(30):
            async with agent.stream(call(remote, "slow")) as events:
                async for event in events:
                    if isinstance(event, ToolExecutionUpdate) and process.poll() is None:
                        process.kill()
                    if isinstance(event, ToolExecutionEnd):
                        result = event.result
    assert result is not None and result.is_error
    assert f"the remote agent {remote.name} ({url}) failed" in result.text
    assert agent.messages[-1].text.startswith("Result: the remote agent")  # type: ignore[union-attr]


async def test_cancelling_the_run_cancels_the_remote_task(
    a2a_url: str, model_server: ModelServer, ends: Ends
) -> None:
    remote = await A2AAgentTool.connect(a2a_url)
    agent = parent(model_server, remote)
    with anyio.fail_after(30):
        async with agent.stream(call(remote, "slow")) as events:
            async for event in events:
                if isinstance(event, ToolExecutionUpdate):
                    break  # leaving the block aborts the run
    assert ends.finished.wait(10) and ends.outcomes == ["cancelled"]  # the remote run


async def test_connect_to_nothing_is_a_remote_agent_error() -> None:
    with pytest.raises(RemoteAgentError, match="failed"):
        await A2AAgentTool.connect("http://127.0.0.1:9")


async def test_a_cancel_on_the_remote_side_ends_the_call_with_an_error(
    a2a_url: str, model_server: ModelServer
) -> None:
    remote = await A2AAgentTool.connect(a2a_url, name="forecaster")
    agent = parent(model_server, remote)
    result: ToolResultMessage | None = None
    cancelled = False
    async with httpx.AsyncClient(timeout=30) as http:
        operator = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http))
        with anyio.fail_after(30):
            async with agent.stream(call(remote, "slow")) as events:
                async for event in events:
                    if isinstance(event, ToolExecutionUpdate) and not cancelled:
                        listed = await operator.list_tasks(
                            ListTasksRequest(status=TaskState.TASK_STATE_WORKING)
                        )
                        (task,) = listed.tasks
                        await operator.cancel_task(CancelTaskRequest(id=task.id))
                        cancelled = True
                    if isinstance(event, ToolExecutionEnd):
                        result = event.result
    assert result is not None and result.is_error
    assert result.text == "the remote agent forecaster cancelled its task"
