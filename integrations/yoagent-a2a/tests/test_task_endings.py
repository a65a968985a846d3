"""How a served task ends and what it says, in process (httpx's ASGI transport): the
final status text of a failed, stopped or completed run, the ``answer`` artifact when
nothing streamed, the card the agent is described by, and contexts that do not wait for
each other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from a2a.client import ClientConfig, create_client
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue_v2 import EventQueueSource
from a2a.types import TaskState
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT
from a2a_testing import in_process, message

from yoagent.a2a import ANSWER_ARTIFACT, MemoryHistoryStore, YoagentExecutor, a2a_app, agent_card
from yoagent.core import (
    Agent,
    AssistantMessage,
    ExecutionLimits,
    MockProvider,
    ModelConfig,
    RetryConfig,
    StopReason,
    TextContent,
    ToolCall,
    UserMessage,
    tool,
)
from yoagent.core.provider import StreamConfig

pytestmark = pytest.mark.anyio

URL = "http://agent.test"
STOP_NOTE = "[stopped: turn limit reached (1 turns)]"


@tool
async def ping() -> str:
    """Answers pong."""
    return "pong"


async def exchange(
    factory: Callable[[], Agent], *, streaming: bool = True, text: str = "go"
) -> list[Any]:
    app = await a2a_app(factory, name="a", description="a", url=URL)
    async with in_process(app, URL) as http:
        client = await create_client(URL, ClientConfig(streaming=streaming, httpx_client=http))
        return [r async for r in client.send_message(message(text))]


def ending(responses: list[Any]) -> tuple[TaskState, str]:
    last = responses[-1]
    status = last.status_update.status if last.HasField("status_update") else last.task.status
    return status.state, "".join(part.text for part in status.message.parts)


def answers(responses: list[Any]) -> list[tuple[str, str, bool, bool]]:
    """Each artifact the task carried: (name, text, append, last_chunk)."""
    found: list[tuple[str, str, bool, bool]] = []
    for response in responses:
        if response.HasField("artifact_update"):
            update = response.artifact_update
            text = "".join(part.text for part in update.artifact.parts)
            found.append((update.artifact.name, text, update.append, update.last_chunk))
        elif response.HasField("task"):
            for artifact in response.task.artifacts:
                text = "".join(part.text for part in artifact.parts)
                found.append((artifact.name, text, False, False))
    return found


def agent_on(*script: Any, **options: Any) -> Callable[[], Agent]:
    def build() -> Agent:
        return Agent.from_provider(
            MockProvider(list(script)), ModelConfig.mock(), retry=RetryConfig.none(), **options
        )

    return build


def calls_ping(text: str = "") -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    return AssistantMessage(content=[*content, ToolCall(id="c1", name="ping", arguments={})])


def fails_with(error: Exception) -> Callable[[StreamConfig], AssistantMessage]:
    def script(config: StreamConfig) -> AssistantMessage:
        raise error

    return script


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_failed_reply_without_a_message_says_the_run_failed(streaming: bool) -> None:
    silent = AssistantMessage(content=[], stop_reason=StopReason.ERROR)
    responses = await exchange(agent_on(silent), streaming=streaming)
    assert ending(responses) == (TaskState.TASK_STATE_FAILED, "the run failed")
    assert answers(responses) == []


async def test_a_run_that_raises_fails_with_the_reason() -> None:
    responses = await exchange(agent_on(fails_with(RuntimeError("boom"))))
    assert ending(responses) == (
        TaskState.TASK_STATE_FAILED,
        "OTHER: provider failed: RuntimeError: boom",
    )


async def test_a_stopped_run_completes_with_its_text_and_the_stop() -> None:
    limited = agent_on(calls_ping("Checking."), limits=ExecutionLimits(max_turns=1))
    responses = await exchange(limited)
    assert ending(responses) == (TaskState.TASK_STATE_COMPLETED, f"Checking.\n\n{STOP_NOTE}")
    assert answers(responses) == [(ANSWER_ARTIFACT, "Checking.", False, False)]


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_run_stopped_before_any_text_answers_with_the_stop(streaming: bool) -> None:
    limited = agent_on(calls_ping(), limits=ExecutionLimits(max_turns=1))
    responses = await exchange(limited, streaming=streaming)
    assert ending(responses) == (TaskState.TASK_STATE_COMPLETED, STOP_NOTE)
    assert answers(responses) == [(ANSWER_ARTIFACT, STOP_NOTE, False, False)]


async def test_streamed_chunks_append_to_one_answer() -> None:
    reply = AssistantMessage(content=[TextContent(text="x" * 40)])
    responses = await exchange(agent_on(reply))
    chunks = [r.artifact_update for r in responses if r.HasField("artifact_update")]
    assert len(chunks) > 1
    assert {c.artifact.artifact_id for c in chunks} != {""}
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert [c.append for c in chunks] == [False] + [True] * (len(chunks) - 1)
    assert not any(c.last_chunk for c in chunks)
    assert {c.artifact.name for c in chunks} == {ANSWER_ARTIFACT}
    assert "".join(p.text for c in chunks for p in c.artifact.parts) == "x" * 40
    assert ending(responses) == (TaskState.TASK_STATE_COMPLETED, "x" * 40)
    again = await exchange(agent_on(reply))
    other = {r.artifact_update.artifact.artifact_id for r in again if r.HasField("artifact_update")}
    assert other.isdisjoint({c.artifact.artifact_id for c in chunks})  # one answer per task


async def test_an_empty_completed_reply_carries_no_answer() -> None:
    responses = await exchange(agent_on(AssistantMessage(content=[])), streaming=False)
    assert ending(responses) == (TaskState.TASK_STATE_COMPLETED, "")
    assert answers(responses) == []


async def test_the_tasks_of_two_contexts_run_side_by_side() -> None:
    """A task waiting in one context does not hold back a task of another context."""
    released = anyio.Event()

    @tool
    async def hold() -> str:
        """Waits until the other context's task has answered."""
        await released.wait()
        return "released"

    def answer(config: StreamConfig) -> AssistantMessage:
        last = config.messages[-1]
        if isinstance(last, UserMessage) and last.text == "first":
            return AssistantMessage(content=[ToolCall(id="h1", name="hold", arguments={})])
        return AssistantMessage(content=[TextContent(text="done")])

    def build() -> Agent:
        return Agent.from_provider(MockProvider([answer] * 3), ModelConfig.mock(), tools=[hold])

    app = await a2a_app(build, name="a", description="a", url=URL)
    async with in_process(app, URL) as http:
        client = await create_client(URL, ClientConfig(streaming=False, httpx_client=http))
        endings: dict[str, tuple[TaskState, str]] = {}

        async def send(text: str) -> None:
            endings[text] = ending([r async for r in client.send_message(message(text))])
            if text == "second":
                released.set()

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(send, "first")
                await anyio.sleep(0.2)  # the first task is waiting in its tool
                group.start_soon(send, "second")
    assert endings == {
        "first": (TaskState.TASK_STATE_COMPLETED, "done"),
        "second": (TaskState.TASK_STATE_COMPLETED, "done"),
    }


async def test_a_task_with_no_message_is_refused() -> None:
    executor = YoagentExecutor(agent_on(), MemoryHistoryStore())
    with pytest.raises(ValueError, match=r"^an A2A task needs a message$"):
        await executor.execute(RequestContext(ServerCallContext()), EventQueueSource())
    assert executor.running == 0


def test_the_card_lists_each_tool_as_a_skill() -> None:
    agent = agent_on(tools=[ping])()
    card = agent_card(agent, name="pinger", description="Pings.", url=URL)
    assert card.name == "pinger" and card.description == "Pings."
    assert card.version == "1.0.0"
    assert [(s.id, s.name, s.description, list(s.tags)) for s in card.skills] == [
        ("ping", "ping", "Answers pong.", ["tool"])
    ]
    assert list(card.default_input_modes) == ["text/plain"]
    assert list(card.default_output_modes) == ["text/plain"]
    assert card.capabilities.streaming is True
    [interface] = card.supported_interfaces
    assert (interface.protocol_binding, interface.url, interface.protocol_version) == (
        "JSONRPC",
        URL,
        PROTOCOL_VERSION_CURRENT,
    )


def test_an_agent_without_tools_has_one_chat_skill() -> None:
    card = agent_card(agent_on()(), name="talker", description="Talks.", url=URL, version="2.1")
    assert card.version == "2.1"
    assert [(s.id, s.name, s.description, list(s.tags)) for s in card.skills] == [
        ("chat", "talker", "Talks.", ["chat"])
    ]
