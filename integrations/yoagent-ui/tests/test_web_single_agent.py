"""The web app on one ``Agent`` (``to_web(agent)``): one conversation at a time, refused
before its request is read; nothing a request changes on the agent outlives its run; and
a run that did not start on its own thread's history is never stored under it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx

from yoagent.core import (
    Agent,
    Allow,
    AssistantMessage,
    Defer,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolCallRequest,
    ToolDecision,
    tool,
)
from yoagent.core.provider import StreamConfig
from yoagent.ui import AgUiEndpoint, MemoryThreadStore
from yoagent.ui.web import WebApp, WebApprovals, to_web

TOKEN = "s" * 24


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://web", timeout=30
    )


def run_input(thread: str, *messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": f"r-{thread}", "messages": list(messages), **extra}


def user(key: str, text: str) -> dict[str, Any]:
    return {"id": key, "role": "user", "content": text}


def events(answer: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]


class Echo:
    """A scripted model that answers with the user messages and the system prompt it saw."""

    def __init__(self) -> None:
        self.seen: list[StreamConfig] = []

    def __call__(self, config: StreamConfig) -> AssistantMessage:
        self.seen.append(config)
        users = [m.text for m in config.messages if m.role == "user"]
        return AssistantMessage(content=[TextContent(text=f"I saw {users}")])


async def held_back(body: bytes, gate: anyio.Event) -> AsyncIterator[bytes]:
    """``body`` with its last byte held back until ``gate`` opens (a slow client)."""
    yield body[:-1]
    await gate.wait()
    yield body[-1:]


async def post_together(app: Any, path: str, bodies: list[dict[str, Any]]) -> list[httpx.Response]:
    """Post ``bodies`` at once, each request's handler waiting on the end of its body
    until every request is in."""
    gate = anyio.Event()
    answers: list[httpx.Response | None] = [None] * len(bodies)
    async with client(app) as web:

        async def post(index: int) -> None:
            content = held_back(json.dumps(bodies[index]).encode(), gate)
            headers = {"content-type": "application/json"}
            answers[index] = await web.post(path, content=content, headers=headers)

        async with anyio.create_task_group() as group:
            for index in range(len(bodies)):
                group.start_soon(post, index)
            await anyio.sleep(0.2)  # every request is in its handler, reading its body
            gate.set()
    assert all(answer is not None for answer in answers)
    return [answer for answer in answers if answer is not None]


async def test_a_second_conversation_is_refused_before_its_request_is_read() -> None:
    echo = Echo()
    agent = Agent.from_provider(MockProvider([echo] * 4), ModelConfig.mock())
    app = to_web(agent, token=TOKEN)
    bodies = [run_input("A", user("ua", "conversation A")), run_input("B", user("ub", "B"))]

    answers = await post_together(app, f"/{TOKEN}/api/agui", bodies)

    assert sorted(answer.status_code for answer in answers) == [200, 409]
    (refused,) = [answer for answer in answers if answer.status_code == 409]
    assert "busy with another conversation" in refused.json()["error"]
    (ran,) = [body for body, a in zip(bodies, answers, strict=True) if a.status_code == 200]
    (other,) = [body for body, a in zip(bodies, answers, strict=True) if a.status_code == 409]
    assert app.chat is not None
    assert await app.chat.store.load(other["threadId"]) is None  # nothing stored under it
    stored = await app.chat.store.load(ran["threadId"])
    assert stored is not None
    said = ran["messages"][0]["content"]
    assert [m.text for m in stored.messages] == [said, f"I saw {[said]}"]
    async with client(app) as web:  # and the agent serves the next conversation
        again = await web.post(f"/{TOKEN}/api/agui", json=run_input("C", user("uc", "C")))
    assert events(again)[-1]["type"] == "RUN_FINISHED"


async def test_a_run_on_another_threads_history_is_stopped_and_never_stored() -> None:
    """An endpoint whose factory hands out one shared agent (against its contract): the
    run that finds another thread's history on the agent stops before the model is asked,
    and no thread is stored with another's messages."""
    echo = Echo()
    shared = Agent.from_provider(MockProvider([echo] * 4), ModelConfig.mock())
    store = MemoryThreadStore()
    endpoint = AgUiEndpoint(lambda: shared, store=store)
    bodies = [run_input("A", user("ua", "only A")), run_input("B", user("ub", "only B"))]

    answers = await post_together(endpoint, "/", bodies)

    assert [answer.status_code for answer in answers] == [200, 200]
    for body in bodies:
        said = body["messages"][0]["content"]
        stored = await store.load(body["threadId"])
        if stored is not None:  # a thread is stored only with its own conversation
            assert next(m.text for m in stored.messages if m.role == "user") == said
            assert all("only" not in m.text or said in m.text for m in stored.messages)
    for config in echo.seen:  # and the model never read two conversations at once
        assert len([m for m in config.messages if m.role == "user"]) == 1
    ended = [events(answer)[-1] for answer in answers]
    assert any(e["type"] == "RUN_ERROR" and "another conversation" in e["message"] for e in ended)


async def test_nothing_a_request_changes_on_the_agent_outlives_its_run() -> None:
    echo = Echo()
    agent = Agent.from_provider(
        MockProvider([echo] * 6), ModelConfig.mock(), system_prompt="Be brief."
    )
    own_middleware = agent.settings.tool_middleware
    own_tools = list(agent.tools)
    app = to_web(agent, token=TOKEN, approvals=WebApprovals(hold=lambda request: Allow()))
    front_end_tool = {"name": "pick_color", "description": "Asks the user.", "parameters": {}}
    async with client(app) as web:
        for n in range(3):
            messages = [user(f"u{n}", f"hi {n}")]
            extra: dict[str, Any] = {}
            if n == 0:
                messages.insert(0, {"id": "s0", "role": "system", "content": "NOTE FOR 0 ONLY"})
                extra = {"tools": [front_end_tool], "context": [{"description": "d", "value": "v"}]}
            answer = await web.post(
                f"/{TOKEN}/api/agui", json=run_input(f"t{n}", *messages, **extra)
            )
            assert events(answer)[-1]["type"] == "RUN_FINISHED"
            assert agent.system_prompt == "Be brief."
            assert agent.settings.tool_middleware == own_middleware
            assert agent.tools == own_tools

    first, *later = echo.seen
    assert "NOTE FOR 0 ONLY" in first.system_prompt and "d: v" in first.system_prompt
    assert "pick_color" in [t.name for t in first.tools]
    for config in later:  # thread 0's note and tool never reach threads 1 and 2
        assert config.system_prompt == "Be brief."
        assert "pick_color" not in [t.name for t in config.tools]


async def test_an_approved_call_runs_once_however_many_requests_came_before() -> None:
    ran: list[str] = []

    @tool
    async def deploy(service: str) -> str:
        """Deploy a service."""
        ran.append(service)
        return "deployed"

    def hold(request: ToolCallRequest) -> ToolDecision:
        return Defer("needs a yes") if request.tool_name == "deploy" else Allow()

    call = ToolCall(id="c1", name="deploy", arguments={"service": "web"})
    replies = [
        AssistantMessage(content=[TextContent(text="hello")]),
        AssistantMessage(content=[TextContent(text="hello again")]),
        AssistantMessage(content=[call], stop_reason=StopReason.TOOL_USE),
        AssistantMessage(content=[TextContent(text="done")]),
    ]
    agent = Agent.from_provider(MockProvider(replies), ModelConfig.mock(), tools=[deploy])
    app: WebApp = to_web(agent, token=TOKEN, approvals=WebApprovals(hold=hold))
    async with client(app) as web:
        for thread in ("x", "y"):
            await web.post(f"/{TOKEN}/api/agui", json=run_input(thread, user(thread, "hi")))
        paused = await web.post(f"/{TOKEN}/api/agui", json=run_input("t", user("u", "deploy")))
        assert events(paused)[-1]["outcome"]["type"] == "interrupt"
        thread = (await web.get(f"/{TOKEN}/api/threads/t")).json()["messages"]
        resume = [{"interruptId": "c1", "status": "resolved", "payload": {"approved": True}}]
        done = await web.post(f"/{TOKEN}/api/agui", json=run_input("t", *thread, resume=resume))
    assert events(done)[-1]["outcome"] == {"type": "success"}
    assert ran == ["web"]
