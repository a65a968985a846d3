"""The default thread store's bound, and the agent factory every endpoint calls one way
(``yoagent.core.loop.agent_from``)."""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest

import yoagent.ui
from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    TextContent,
    UserMessage,
)
from yoagent.core.loop import AgentFactory
from yoagent.core.provider import StreamConfig
from yoagent.ui import AgUiEndpoint, AiSdkEndpoint, MemoryThreadStore, StoredThread
from yoagent.ui.web import to_web


def thread(text: str) -> StoredThread:
    return StoredThread(messages=[UserMessage.from_text(text)], ids=[text])


async def test_the_memory_store_forgets_the_thread_saved_longest_ago() -> None:
    store = MemoryThreadStore(max_threads=2)
    await store.save("a", thread("a"))
    await store.save("b", thread("b"))
    await store.save("a", thread("a again"))  # saving renews a thread
    await store.save("c", thread("c"))

    assert await store.load("b") is None
    kept = await store.load("a")
    assert kept is not None and kept.ids == ["a again"]
    assert len(store) == 2 and store.max_threads == 2
    with pytest.raises(ValueError, match="max_threads must be >= 1, got 0"):
        MemoryThreadStore(max_threads=0)


def test_the_agent_factory_is_cores_one() -> None:
    assert yoagent.ui.AgentFactory is AgentFactory


def body_for(endpoint: Any) -> dict[str, Any]:
    if isinstance(endpoint, AiSdkEndpoint):
        message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        return {"id": "t", "messages": [message]}
    return {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u1", "role": "user", "content": "hi"}],
    }


@pytest.mark.parametrize("kind", [AgUiEndpoint, AiSdkEndpoint])
async def test_a_factory_that_builds_no_agent_is_a_500_naming_it(kind: Any) -> None:
    endpoint = kind(cast(AgentFactory, lambda: "an agent"))
    transport = httpx.ASGITransport(app=endpoint)
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
        answer = await client.post("/", json=body_for(endpoint))
    assert answer.status_code == 500
    assert answer.json() == {"error": "the server could not start the run: TypeError"}
    assert endpoint.locks.running == 0


async def test_the_web_app_says_no_model_for_a_factory_that_builds_no_agent() -> None:
    async def build() -> Agent:
        return cast(Agent, None)

    good = to_web(lambda: Agent.from_provider(MockProvider.text("hi"), ModelConfig.mock()))
    bad = to_web(build)
    for app, has_model in ((good, True), (bad, False)):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://web") as client:
            info = (await client.get(f"/{app.token}/api/info")).json()
        assert (info.get("model") is not None) is has_model, info


async def test_an_ai_sdk_chat_the_server_does_not_hold_goes_on_from_the_clients_history() -> None:
    """A restarted server: the chat's messages are its history, the last user message
    its prompt."""
    seen: list[StreamConfig] = []

    def answer(config: StreamConfig) -> AssistantMessage:
        seen.append(config)
        return AssistantMessage(content=[TextContent(text="And tomorrow too.")])

    endpoint = AiSdkEndpoint(
        lambda: Agent.from_provider(MockProvider([answer]), ModelConfig.mock())
    )

    def text(key: str, role: str, said: str) -> dict[str, Any]:
        return {"id": key, "role": role, "parts": [{"type": "text", "text": said}]}

    chat = [
        text("u1", "user", "weather?"),
        text("a1", "assistant", "Sunny."),
        text("u2", "user", "tomorrow?"),
    ]
    transport = httpx.ASGITransport(app=endpoint)
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
        answered = await client.post("/", json={"id": "c", "messages": chat})

    assert answered.status_code == 200, answered.text
    (config,) = seen
    assert [(m.role, getattr(m, "text", None)) for m in config.messages] == [
        ("user", "weather?"),
        ("assistant", "Sunny."),
        ("user", "tomorrow?"),
    ]
    kept = await endpoint.store.load("c")
    assert kept is not None
    assert [m.text for m in kept.messages] == [
        "weather?",
        "Sunny.",
        "tomorrow?",
        "And tomorrow too.",
    ]  # type: ignore[union-attr]
    assert kept.ids[:3] == ["u1", "a1", "u2"]
