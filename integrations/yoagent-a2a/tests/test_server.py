"""A yoagent agent served over A2A, driven by the A2A SDK's own client over loopback HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    TaskState,
)
from a2a_model_server import ModelServer
from a2a_testing import Ends, message

from yoagent.a2a import MemoryHistoryStore
from yoagent.core import UserMessage
from yoagent.core.extension import CANCELLED_MARKER

pytestmark = pytest.mark.anyio


async def exchange(url: str, text: str, context_id: str = "") -> list[Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(url, ClientConfig(streaming=True, httpx_client=http))
        return [response async for response in client.send_message(message(text, context_id))]


def final_state(responses: list[Any]) -> tuple[TaskState, str]:
    last = responses[-1]
    status = last.status_update.status if last.HasField("status_update") else last.task.status
    return status.state, "".join(p.text for p in status.message.parts)


def chunks(responses: list[Any]) -> list[str]:
    return [
        "".join(p.text for p in r.artifact_update.artifact.parts)
        for r in responses
        if r.HasField("artifact_update")
    ]


async def test_agent_card_from_the_agent(a2a_url: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(a2a_url + "/.well-known/agent-card.json")).json()
    assert card["name"] == "weather-agent" and card["description"] == "Knows the weather."
    assert [skill["id"] for skill in card["skills"]] == ["get_weather"]
    assert card["capabilities"]["streaming"] is True


async def test_streamed_text(a2a_url: str) -> None:
    responses = await exchange(a2a_url, "hello")
    assert chunks(responses) == ["Hel", "lo there", "!"]
    assert final_state(responses) == (TaskState.TASK_STATE_COMPLETED, "Hello there!")


async def test_tool_call_with_its_result(a2a_url: str) -> None:
    responses = await exchange(a2a_url, "weather Paris")
    notes = [
        "".join(p.text for p in r.status_update.status.message.parts)
        for r in responses
        if r.HasField("status_update")
    ]
    assert "calling get_weather" in notes
    assert final_state(responses) == (TaskState.TASK_STATE_COMPLETED, "Result: Sunny in Paris")


async def test_error_mid_run_fails_the_task(a2a_url: str) -> None:
    state, text = final_state(await exchange(a2a_url, "weather Atlantis"))
    assert state == TaskState.TASK_STATE_FAILED and "the model broke" in text


async def test_the_context_keeps_its_history(
    a2a_url: str, model_server: ModelServer, history: MemoryHistoryStore
) -> None:
    first = await exchange(a2a_url, "hello")
    context_id = first[0].task.context_id
    await exchange(a2a_url, "weather Rome", context_id)
    sent = model_server.requests[-2]["messages"]  # the second task's first model request
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    stored = await history.load(context_id)
    assert stored is not None
    assert [m.role for m in stored] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert isinstance(stored[0], UserMessage) and stored[0].text == "hello"


async def test_get_task_after_it_ended(a2a_url: str) -> None:
    responses = await exchange(a2a_url, "hello")
    task_id = responses[0].task.id
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http))
        task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_cancel_from_the_client(
    a2a_url: str, ends: Ends, history: MemoryHistoryStore, model_server: ModelServer
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http))
        task_id = context_id = ""
        states: list[TaskState] = []
        answered: list[TaskState] = []
        async for response in client.send_message(message("slow")):
            if response.HasField("task"):
                task_id, context_id = response.task.id, response.task.context_id
            if response.HasField("artifact_update") and not answered:
                cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
                answered.append(cancelled.status.state)
            if response.HasField("status_update"):
                states.append(response.status_update.status.state)
    assert answered == [TaskState.TASK_STATE_CANCELED]
    assert states[-1] == TaskState.TASK_STATE_CANCELED
    assert ends.finished.wait(10) and ends.outcomes == ["cancelled"]
    assert model_server.hung_up.wait(10)
    stored = await history.load(context_id)
    assert stored is not None
    assert isinstance(stored[-1], UserMessage) and stored[-1].text == CANCELLED_MARKER


async def test_the_0_3_method_names(a2a_url: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message", "role": "user", "messageId": "m1",
                "parts": [{"kind": "text", "text": "hello"}],
            }
        },
    }  # fmt: skip
    async with httpx.AsyncClient(timeout=30) as http:
        answer = (await http.post(a2a_url + "/", json=body)).json()
    assert answer["result"]["status"]["state"] == "completed"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 7}}', -32602),
    ],
)
async def test_bad_input_gets_a_json_rpc_error(a2a_url: str, body: bytes, code: int) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(
            a2a_url + "/", content=body, headers={"content-type": "application/json"}
        )
        assert answer.json()["error"]["code"] == code
        assert final_state(await exchange(a2a_url, "hello"))[0] == TaskState.TASK_STATE_COMPLETED


async def test_a_huge_message_does_not_crash_the_server(a2a_url: str) -> None:
    responses = await exchange(a2a_url, "x" * 2_000_000)
    assert final_state(responses)[0] == TaskState.TASK_STATE_COMPLETED
    assert final_state(await exchange(a2a_url, "hello"))[0] == TaskState.TASK_STATE_COMPLETED


async def test_a_client_that_hangs_up_mid_stream(a2a_url: str) -> None:
    """The stream's reader leaving does not hurt the server (the task itself goes on, as A2A
    tasks do: another client may subscribe to it or cancel it)."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http))
        async for response in client.send_message(message("slow")):
            if response.HasField("artifact_update"):
                break
    assert final_state(await exchange(a2a_url, "hello"))[0] == TaskState.TASK_STATE_COMPLETED
