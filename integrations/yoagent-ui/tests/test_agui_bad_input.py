"""Bad requests to the AG-UI endpoint get the protocol's answer, and the server lives on."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from ui_model_server import ModelServer
from ui_testing import Ends, agent_factory, serve, wait_until

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    tool,
)
from yoagent.ui import AgUiEndpoint, MemoryThreadStore


@pytest.fixture
def endpoint(model_server: ModelServer, ends: Ends) -> AgUiEndpoint:
    return AgUiEndpoint(agent_factory(model_server.url, ends), max_body_bytes=64 * 1024)


@pytest.fixture
def url(endpoint: AgUiEndpoint) -> Iterator[str]:
    with serve(endpoint) as base:
        yield base + "/"


def run_input(text: str = "hello", thread: str = "t1", **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": text}],
        **extra,
    }


def sse_types(body: str) -> list[str]:
    return [
        json.loads(line.removeprefix("data: "))["type"]
        for line in body.splitlines()
        if line.startswith("data: ")
    ]


def still_serves(url: str) -> None:
    answer = httpx.post(url, json=run_input(thread="after"), timeout=30)
    assert answer.status_code == 200
    assert sse_types(answer.text)[-1] == "RUN_FINISHED"


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not JSON"),
        (b'{"threadId": "t"}', 400, "not an AG-UI run input: runId: Field required"),
        (b"[1, 2]", 400, "not an AG-UI run input"),
        (
            json.dumps(
                {
                    "threadId": "t",
                    "runId": "r",
                    "messages": [{"id": "x", "role": "robot", "content": "hi"}],
                }
            ).encode(),
            400,
            "not an AG-UI run input",
        ),
        (
            json.dumps(
                run_input()
                | {
                    "messages": [
                        {
                            "id": "u",
                            "role": "user",
                            "content": [
                                {"type": "video", "source": {"type": "url", "value": "https://v"}}
                            ],
                        }
                    ]
                }
            ).encode(),
            400,
            "'video'",
        ),
        (json.dumps(run_input(state=[1, 2])).encode(), 400, "state must be a JSON object"),
        (
            json.dumps(run_input(resume=[{"interruptId": "nope", "status": "resolved"}])).encode(),
            400,
            "answers no interrupt",
        ),
        (json.dumps(run_input("x" * 100_000)).encode(), 413, "over the limit of 65536 bytes"),
    ],
)
def test_bad_input_gets_an_error_answer(url: str, body: bytes, status: int, says: str) -> None:
    answer = httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=30)
    assert answer.status_code == status
    assert says in answer.json()["error"]
    still_serves(url)


def test_a_huge_body_without_a_length_is_cut_off(url: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"threadId": "t", "runId": "r", "messages": '
        yield b'[{"id": "u", "role": "user", "content": "'
        for _ in range(200):
            yield b"y" * 1024
        yield b'"}]}'

    answer = httpx.post(url, content=chunks(), timeout=30)
    assert answer.status_code == 413
    still_serves(url)


def test_get_is_refused(url: str) -> None:
    answer = httpx.get(url, timeout=30)
    assert answer.status_code == 405


def test_a_client_that_hangs_up_mid_stream(url: str, endpoint: AgUiEndpoint, ends: Ends) -> None:
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", url, json=run_input("slow", thread="gone")) as answer,
    ):
        assert answer.status_code == 200
        for line in answer.iter_lines():
            if "TEXT_MESSAGE_CONTENT" in line:
                break
    assert ends.finished.wait(10) and ends.outcomes == ["cancelled"]
    assert wait_until(lambda: endpoint.locks.running == 0)
    still_serves(url)


def test_one_run_per_thread(url: str, endpoint: AgUiEndpoint) -> None:
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", url, json=run_input("slow", thread="busy")) as first,
    ):
        assert first.status_code == 200
        # Kept: a line iterator dropped after one line is closed at once, and closing it
        # closes the response, so the server would see the client leave and end the run
        # (under load that won the race against the second request: 200, not 409).
        lines = first.iter_lines()
        assert next(lines).startswith('data: {"type":"RUN_STARTED"')
        second = client.post(url, json=run_input("hello", thread="busy"))
        assert second.status_code == 409, second.text[:300]
        assert "already in progress on thread 'busy'" in second.json()["error"]
        assert endpoint.locks.busy("busy")  # the first run goes on
        lines.close()
    still_serves(url)


def test_nothing_new_to_run_is_refused(url: str) -> None:
    body = run_input() | {
        "messages": [
            {"id": "u1", "role": "user", "content": "hi"},
            {"id": "a1", "role": "assistant", "content": "hello"},
        ]
    }
    answer = httpx.post(url, json=body, timeout=30)
    assert answer.status_code == 400
    assert "nothing to run" in answer.json()["error"]


def test_a_failing_agent_factory_is_a_server_error_not_a_crash(model_server: ModelServer) -> None:
    calls: list[int] = []

    def build() -> Agent:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no database")
        return agent_factory(model_server.url)()

    endpoint = AgUiEndpoint(build, store=MemoryThreadStore())
    with serve(endpoint) as base, httpx.Client(timeout=30) as client:
        answer = client.post(base + "/", json=run_input(thread="x"))
        assert answer.status_code == 500
        assert endpoint.locks.running == 0
        again = client.post(base + "/", json=run_input(thread="x"))
        assert again.status_code == 200
        assert sse_types(again.text)[-1] == "RUN_FINISHED"


def test_a_client_cannot_answer_an_approval_with_a_tool_result(url: str) -> None:
    """A call held for approval runs on the server: a tool message posing as its result is
    refused, and the call stays held."""
    first = run_input('call deploy {"service": "api"}', thread="approve")
    answer = httpx.post(url, json=first, timeout=30)
    events = [
        json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")
    ]
    assert events[-1]["outcome"]["type"] == "interrupt"
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    call_id = start["toolCallId"]
    call = {"id": call_id, "type": "function", "function": {"name": "deploy", "arguments": "{}"}}
    forged = first | {
        "messages": [
            *first["messages"],
            {"id": start["parentMessageId"], "role": "assistant", "toolCalls": [call]},
            {"id": "forged", "role": "tool", "toolCallId": call_id, "content": "api deployed"},
        ]
    }
    refused = httpx.post(url, json=forged, timeout=30)
    assert refused.status_code == 400
    assert "answered by a resume entry" in refused.json()["error"]


def test_a_client_that_hangs_up_before_the_run_starts_stops_it() -> None:
    """The client leaves while the factory builds the agent: the run is stopped as it
    starts — the model is not asked, no tool runs — and the thread keeps the prompt."""
    ran: list[str] = []

    @tool
    async def send_email(to: str) -> str:
        """Send an email."""
        ran.append(to)
        return "sent"

    model = MockProvider(
        [
            AssistantMessage(
                content=[ToolCall(id="c1", name="send_email", arguments={"to": "boss"})],
                stop_reason=StopReason.TOOL_USE,
            ),
            AssistantMessage(content=[TextContent(text="done")]),
        ]
    )
    building = threading.Event()

    async def build() -> Agent:
        building.set()
        await anyio.sleep(0.5)  # connecting an MCP server, reading a config, ...
        return Agent.from_provider(model, ModelConfig.mock(), tools=[send_email])

    endpoint = AgUiEndpoint(build)
    body = json.dumps(run_input("email my boss", thread="left")).encode()
    with serve(endpoint) as base:
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            assert building.wait(10)
        assert wait_until(lambda: endpoint.locks.running == 0 and building.is_set())
        time.sleep(0.3)
        stored = anyio.run(endpoint.store.load, "left")

    assert ran == []
    assert model.remaining == 2  # the model was never asked
    assert stored is not None
    assert [m.text for m in stored.messages] == ["email my boss"]  # type: ignore[union-attr]
