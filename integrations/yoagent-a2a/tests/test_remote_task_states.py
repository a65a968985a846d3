"""A2AAgentTool against a remote agent whose tasks end as scripted (an SDK executor, in
process): what the call's result is for each way a remote task can end, where the answer
is read from, what the tool takes from the card, and that the calls of a run whose first
call failed go on without waiting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCard,
    Message,
    Part,
    Role,
)
from a2a_testing import in_process
from starlette.applications import Starlette

from yoagent.a2a import A2AAgentTool, RemoteAgentError, agent_card
from yoagent.a2a import _tool as tool_module
from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    ProgressMessage,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
)

pytestmark = pytest.mark.anyio

URL = "http://scripted.test"


class Scripted(AgentExecutor):
    """Ends each task as its message says."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        script = context.get_user_input()
        if script == "reply with a message":  # a reply, no task
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id="r1",
                context_id=message.context_id or "ctx-reply",
                parts=[Part(text="a plain reply")],
            )
            await event_queue.enqueue_event(reply)
            return
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()

        def note(text: str) -> Any:
            return updater.new_agent_message([Part(text=text)])

        if script == "answer and note":
            await updater.add_artifact([Part(text="the answer")], name="answer")
            await updater.complete(note("done"))
        elif script == "only a note":
            await updater.complete(note("done, nothing to show"))
        elif script == "fail silently":
            await updater.failed()
        elif script == "fail with a reason":
            await updater.failed(note("out of paper"))
        elif script == "say what it does":
            await updater.start_work(note("looking it up"))
            await updater.add_artifact([Part(text="found")], name="answer")
            await updater.complete()
        elif script == "stop talking":
            return  # the stream ends, the task never does
        elif script == "ask back":
            await updater.requires_input(note("which city?"))
        else:
            raise AssertionError(f"no script {script!r}")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise AssertionError("nothing here is cancelled")


def card(*, streaming: bool = True, name: str = "scripted") -> AgentCard:
    """The scripted agent's card, as ``agent_card`` writes one (streaming or not)."""
    agent = Agent.from_provider(MockProvider([]), ModelConfig.mock())
    written = agent_card(agent, name=name, description="Ends tasks as told.", url=URL)
    written.capabilities.streaming = streaming
    return written


@asynccontextmanager
async def scripted_http(remote: AgentCard | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the scripted remote agent (described by ``remote``), in process."""
    remote = remote or card()
    handler = DefaultRequestHandler(
        agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=remote
    )
    app = Starlette(
        routes=[*create_agent_card_routes(remote), *create_jsonrpc_routes(handler, rpc_url="/")]
    )
    async with in_process(app, URL) as http:
        yield http


@asynccontextmanager
async def scripted(*, streaming: bool = True) -> AsyncIterator[A2AAgentTool]:
    remote = card(streaming=streaming)
    async with scripted_http(remote) as http:
        yield A2AAgentTool(remote, http=http)


def calling(tool: A2AAgentTool, *tasks: str) -> Agent:
    """An agent whose model makes one call per task, one after another, then ends."""
    replies = [
        AssistantMessage(
            content=[ToolCall(id=f"c{i}", name=tool.name, arguments={"task": task})],
            stop_reason=StopReason.TOOL_USE,
        )
        for i, task in enumerate(tasks)
    ]
    replies.append(AssistantMessage(content=[TextContent(text="ok")]))
    return Agent.from_provider(MockProvider(replies), ModelConfig.mock(), tools=[tool])


async def results(tool: A2AAgentTool, *tasks: str) -> list[tuple[str, bool]]:
    agent = calling(tool, *tasks)
    with anyio.fail_after(20):
        await agent.prompt("go")
    return [(m.text, m.is_error) for m in agent.messages if isinstance(m, ToolResultMessage)]


@pytest.mark.parametrize("streaming", [True, False])
async def test_the_answer_is_the_artifact_not_the_closing_note(streaming: bool) -> None:
    async with scripted(streaming=streaming) as tool:
        assert await results(tool, "answer and note") == [("the answer", False)]


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_task_with_no_artifact_answers_with_its_note(streaming: bool) -> None:
    async with scripted(streaming=streaming) as tool:
        assert await results(tool, "only a note") == [("done, nothing to show", False)]


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_failed_task_gives_its_reason_or_says_there_was_none(streaming: bool) -> None:
    async with scripted(streaming=streaming) as tool:
        assert await results(tool, "fail with a reason", "fail silently") == [
            ("the remote agent scripted failed: out of paper", True),
            ("the remote agent scripted failed: no reason given", True),
        ]


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_task_that_asks_back_ends_the_call_with_its_state(streaming: bool) -> None:
    async with scripted(streaming=streaming) as tool:
        assert await results(tool, "ask back") == [
            (
                "the remote agent scripted stopped in state TASK_STATE_INPUT_REQUIRED: which city?",
                True,
            )
        ]


async def test_after_a_first_call_that_failed_the_runs_next_call_goes_on() -> None:
    """The first call of a run never learnt a remote context (its remote was not there):
    the run's next call does not wait for one."""
    tool = A2AAgentTool(card(), http=httpx.AsyncClient(transport=httpx.MockTransport(refuse)))
    outcome = await results(tool, "answer and note", "answer and note")
    assert [is_error for _, is_error in outcome] == [True, True]
    assert all(text.startswith("the remote agent scripted (http") for text, _ in outcome)


def refuse(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("refused", request=request)


def test_the_tool_is_named_and_described_from_the_card() -> None:
    tool = A2AAgentTool(card(name="Weather Agent! (EU)"))
    assert tool.name == "Weather_Agent___EU_"
    assert tool.description == "Ends tasks as told."
    assert tool.parameters["required"] == ["task"]
    assert tool.timeout == 300.0
    assert tool.url == URL
    assert A2AAgentTool(card(name="a-b_c")).name == "a-b_c"
    assert A2AAgentTool(card(name="x" * 70)).name == "x" * 64
    assert A2AAgentTool(card(name="  ")).name == "remote_agent"
    bare = AgentCard(name="bare")
    assert A2AAgentTool(bare).description == "The remote agent bare."
    assert A2AAgentTool(bare).url == ""
    named = A2AAgentTool(bare, name="helper", description="Helps.", timeout=5.0)
    assert (named.name, named.description, named.timeout) == ("helper", "Helps.", 5.0)


@pytest.mark.parametrize("arguments", [{}, {"task": "   "}, {"task": ""}])
async def test_a_call_without_a_task_is_refused(arguments: dict[str, Any]) -> None:
    tool = A2AAgentTool(card())
    agent = Agent.from_provider(
        MockProvider(
            [
                AssistantMessage(
                    content=[ToolCall(id="c0", name=tool.name, arguments=arguments)],
                    stop_reason=StopReason.TOOL_USE,
                ),
                AssistantMessage(content=[TextContent(text="ok")]),
            ]
        ),
        ModelConfig.mock(),
        tools=[tool],
    )
    await agent.prompt("go")
    [result] = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.text == "say what the remote agent should do: 'task' is empty"


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_remote_that_replies_with_a_message_answers_with_it(streaming: bool) -> None:
    async with scripted(streaming=streaming) as tool:
        assert await results(tool, "reply with a message") == [("a plain reply", False)]


async def test_a_stream_that_ends_before_its_task_is_an_error() -> None:
    async with scripted() as tool:
        assert await results(tool, "stop talking") == [
            ("the remote agent scripted ended its stream before its task ended", True)
        ]


async def test_the_remote_tasks_working_notes_are_the_calls_progress() -> None:
    async with scripted() as tool:
        agent = calling(tool, "say what it does")
        notes: list[str] = []
        async with agent.stream("go") as events:
            async for event in events:
                if isinstance(event, ProgressMessage):
                    notes.append(event.text)
    assert notes == ["looking it up"]
    [result] = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert (result.text, result.is_error) == ("found", False)


async def test_connect_passes_its_options_on() -> None:
    async with scripted_http() as http:
        tool = await A2AAgentTool.connect(URL, http=http, description="Told.", timeout=5.0)
        assert (tool.name, tool.description, tool.timeout) == ("scripted", "Told.", 5.0)
        plain = await A2AAgentTool.connect(URL, http=http)
        assert (plain.description, plain.timeout) == ("Ends tasks as told.", 300.0)


async def test_a_card_that_cannot_be_read_names_the_agent_and_its_url() -> None:
    refusing = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    with pytest.raises(
        RemoteAgentError,
        match=r"^the remote agent http://x\.test \(http://x\.test\) failed: .*: refused$",
    ):
        await A2AAgentTool.connect("http://x.test", http=refusing)
    with pytest.raises(
        RemoteAgentError, match=r"^the remote agent helper \(http://x\.test\) failed"
    ):
        await A2AAgentTool.connect("http://x.test", name="helper", http=refusing)


async def test_a_call_without_a_client_makes_one_with_the_tools_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Any] = []

    def recording(**options: Any) -> httpx.AsyncClient:
        made.append(options["timeout"])
        return httpx.AsyncClient(transport=httpx.MockTransport(refuse))

    monkeypatch.setattr(tool_module, "http_client", recording)
    tool = A2AAgentTool(card(), timeout=7.0)
    [(text, is_error)] = await results(tool, "answer and note")
    assert is_error and text.startswith("the remote agent scripted (http://scripted.test) failed")
    assert made == [httpx.Timeout(7.0, connect=10.0)]
