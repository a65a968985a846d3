"""The AI SDK endpoint driven by the ``ai`` package's own client side (its chat transport and
``readUIMessageStream``, in Node) over real HTTP on loopback, the scripted model behind."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from ui_model_server import ModelServer
from ui_testing import Ends, agent_factory, run_client, serve, wait_until

from yoagent.core import UserMessage
from yoagent.core.extension import CANCELLED_MARKER
from yoagent.ui import UI_MESSAGE_STREAM_HEADERS, AiSdkEndpoint, MemoryThreadStore


@pytest.fixture
def endpoint(model_server: ModelServer, ends: Ends, store: MemoryThreadStore) -> AiSdkEndpoint:
    return AiSdkEndpoint(
        agent_factory(model_server.url, ends), store=store, max_body_bytes=64 * 1024
    )


@pytest.fixture
def url(endpoint: AiSdkEndpoint) -> Iterator[str]:
    with serve(endpoint) as base:
        yield base + "/"


def kinds(chunks: list[dict[str, Any]]) -> list[str]:
    return [chunk["type"] for chunk in chunks]


def parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [part for part in message["parts"] if part["type"] == kind]


def test_headers_are_the_protocols(url: str) -> None:
    body = {
        "id": "h",
        "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    answer = httpx.post(url, json=body, timeout=30)
    for key, value in UI_MESSAGE_STREAM_HEADERS.items():
        assert answer.headers[key] == value
    assert answer.text.endswith("data: [DONE]\n\n")


def test_streamed_text_with_reasoning_and_usage(url: str) -> None:
    got = run_client("aisdk.mjs", url, "text")
    assert got["error"] is None
    chunks = got["chunks"]
    assert kinds(chunks)[0] == "start" and kinds(chunks)[-1] == "finish"
    assert [c["delta"] for c in chunks if c["type"] == "text-delta"] == ["Hel", "lo there", "!"]
    message = got["message"]
    assert message["role"] == "assistant"
    assert [p["text"] for p in parts(message, "text")] == ["Hello there!"]
    assert [p["text"] for p in parts(message, "reasoning")] == ["Let me think."]
    finish = chunks[-1]
    assert finish["finishReason"] == "stop"
    assert finish["messageMetadata"]["usage"] == {
        "inputTokens": 11, "outputTokens": 7, "totalTokens": 18, "cachedInputTokens": 0,
    }  # fmt: skip
    assert message["metadata"] == finish["messageMetadata"]


def test_tool_call_with_its_result(url: str) -> None:
    got = run_client("aisdk.mjs", url, "tool")
    assert got["error"] is None
    assert "tool-input-start" in kinds(got["chunks"]) and "tool-input-delta" in kinds(got["chunks"])
    (tool,) = parts(got["message"], "tool-get_weather")
    assert tool["state"] == "output-available"
    assert tool["input"] == {"city": "Paris"} and tool["output"] == "Sunny in Paris"
    assert parts(got["message"], "text")[-1]["text"] == "Result: Sunny in Paris"
    assert len(parts(got["message"], "step-start")) == 2


def test_a_second_request_continues_the_stored_chat(url: str) -> None:
    got = run_client("aisdk.mjs", url, "conversation")
    assert got["second"]["error"] is None
    assert parts(got["second"]["message"], "text")[-1]["text"] == "Result: Sunny in Oslo"


def test_approval_request_then_resume(url: str) -> None:
    got = run_client("aisdk.mjs", url, "approval")
    first = got["first"]
    assert first["chunks"][-1]["finishReason"] == "tool-calls"
    (held,) = parts(first["message"], "tool-deploy")
    assert held["state"] == "approval-requested" and held["approval"]["id"] == held["toolCallId"]
    second = got["second"]
    assert second["error"] is None
    assert second["chunks"][0] == {"type": "start", "messageId": first["message"]["id"]}
    (done,) = parts(second["message"], "tool-deploy")
    assert done["state"] == "output-available" and done["output"] == "api deployed"
    assert parts(second["message"], "text")[-1]["text"] == "Result: api deployed"


def test_denied_approval(url: str) -> None:
    got = run_client("aisdk.mjs", url, "denial")
    (denied,) = parts(got["second"]["message"], "tool-deploy")
    assert denied["state"] == "output-denied"
    assert parts(got["second"]["message"], "text")[-1]["text"] == (
        "Result: Tool call denied: not on a Friday"
    )


def test_error_mid_run(url: str) -> None:
    got = run_client("aisdk.mjs", url, "error")
    chunks = got["chunks"]
    assert "tool-output-available" in kinds(chunks)  # the run got that far
    error = next(c for c in chunks if c["type"] == "error")
    assert "the model broke" in error["errorText"]
    assert chunks[-1]["type"] == "finish" and chunks[-1]["finishReason"] == "error"


def test_cancel_from_the_client(
    url: str,
    endpoint: AiSdkEndpoint,
    ends: Ends,
    store: MemoryThreadStore,
    model_server: ModelServer,
) -> None:
    got = run_client("aisdk.mjs", url, "cancel")
    assert kinds(got["chunks"]).count("text-delta") == 3
    assert "finish" not in kinds(got["chunks"])
    assert ends.finished.wait(10) and ends.outcomes == ["cancelled"]
    assert wait_until(lambda: endpoint.locks.running == 0)
    thread = anyio.run(store.load, got["chatId"])
    assert thread is not None
    last = thread.messages[-1]
    assert isinstance(last, UserMessage) and last.text == CANCELLED_MARKER


def chat(parts: list[dict[str, Any]]) -> bytes:
    """A chat request whose one user message holds ``parts``."""
    message = {"id": "m", "role": "user", "parts": parts}
    return json.dumps({"id": "c", "messages": [message]}).encode()


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"nope", 400, "not JSON"),
        (b'{"messages": []}', 400, "'id' (the chat's id) is missing"),
        (b'{"id": "c", "messages": {}}', 400, "'messages' must be a list"),
        (b'{"id": "c", "messages": [{"role": "user"}]}', 400, "needs an 'id'"),
        (
            b'{"id": "c", "messages": [{"id": "m", "role": "robot", "parts": []}]}',
            400,
            "unknown message role",
        ),
        (chat([{"type": "hologram"}]), 400, "unknown part type 'hologram'"),
        (
            chat([{"type": "file", "mediaType": "application/pdf", "url": "data:,AA"}]),
            400,
            "files that are images",
        ),
        (
            chat([{"type": "file", "mediaType": "image/png", "url": "https://x/y.png"}]),
            400,
            "base64 data: URL",
        ),
        (chat([{"type": "text", "text": "z" * 70_000}]), 413, "over the limit"),
    ],
)
def test_bad_input(url: str, body: bytes, status: int, says: str) -> None:
    answer = httpx.post(url, content=body, timeout=30)
    assert answer.status_code == status
    assert says in answer.json()["error"]
    fine = {
        "id": "ok",
        "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    assert httpx.post(url, json=fine, timeout=30).status_code == 200
