"""A whole agent run over real HTTP: Agent.from_config → provider → loopback SSE server.

For every wire protocol the model asks for a tool, the agent runs it, and the result goes
back to the server in the next request, which the server answers with the final text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    ErrorKind,
    ModelConfig,
    RunFailedError,
    StopReason,
    ToolCall,
    ToolResultMessage,
    tool,
)
from yoagent.providers.testing import ScriptedReply, ScriptedSseServer


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def anthropic_body(blocks: list[tuple[str, str]], stop: str) -> bytes:
    """An Anthropic stream with text (``("text", s)``) and tool (``("tool", json)``) blocks."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-x",
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        }
    ]
    for index, (kind, value) in enumerate(blocks):
        if kind == "text":
            events += [
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": value},
                },
            ]
        else:
            events += [
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "add",
                        "input": {},
                    },
                },
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": value},
                },
            ]
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def openai_body(text: str, call: str | None) -> bytes:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}
    ]
    if call is not None:
        chunks.append(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {"name": "add", "arguments": call},
                                }
                            ]
                        },
                    }
                ]
            }
        )
    chunks.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if call else "stop"}]}
    )
    chunks.append({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 9}})
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def responses_body(text: str, call: str | None) -> bytes:
    """A Responses stream: a message item, then (optionally) a function call item."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "item_id": "msg_1",
            "delta": text,
        },
    ]
    if call is not None:
        item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "add"}
        events += [
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {**item, "arguments": ""},
            },
            {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": call},
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": {**item, "arguments": call},
            },
        ]
    usage = {"input_tokens": 12, "output_tokens": 9}
    events.append(
        {"type": "response.completed", "response": {"status": "completed", "usage": usage}}
    )
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def gemini_body(text: str, call: str | None) -> bytes:
    parts: list[dict[str, Any]] = [{"text": text}]
    if call is not None:
        parts.append(
            {"functionCall": {"name": "add", "args": json.loads(call)}, "thoughtSignature": "c2ln"}
        )
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 9},
    }
    return f"data: {json.dumps(chunk)}\r\n\r\n".encode()


PROTOCOLS = [
    ApiProtocol.ANTHROPIC_MESSAGES,
    ApiProtocol.OPENAI_COMPLETIONS,
    ApiProtocol.OPENAI_RESPONSES,
    ApiProtocol.AZURE_OPENAI_RESPONSES,
    ApiProtocol.GOOGLE_GENERATIVE_AI,
    ApiProtocol.GOOGLE_VERTEX,
]


def setup(api: ApiProtocol, server: ScriptedSseServer) -> tuple[ModelConfig, str, str]:
    """The config, and the request path and auth header the server must see."""
    base = {
        ApiProtocol.ANTHROPIC_MESSAGES: server.url,
        ApiProtocol.OPENAI_COMPLETIONS: server.url + "/v1",
        ApiProtocol.OPENAI_RESPONSES: server.url + "/v1",
        ApiProtocol.AZURE_OPENAI_RESPONSES: server.url + "/openai/v1",
        ApiProtocol.GOOGLE_GENERATIVE_AI: server.url,
        ApiProtocol.GOOGLE_VERTEX: server.url + "/v1/projects/p/locations/global",
    }[api]
    path, header = {
        ApiProtocol.ANTHROPIC_MESSAGES: ("/v1/messages", "x-api-key"),
        ApiProtocol.OPENAI_COMPLETIONS: ("/v1/chat/completions", "authorization"),
        ApiProtocol.OPENAI_RESPONSES: ("/v1/responses", "authorization"),
        ApiProtocol.AZURE_OPENAI_RESPONSES: ("/openai/v1/responses", "api-key"),
        ApiProtocol.GOOGLE_GENERATIVE_AI: (
            "/v1beta/models/m-1:streamGenerateContent?alt=sse",
            "x-goog-api-key",
        ),
        ApiProtocol.GOOGLE_VERTEX: (
            "/v1/projects/p/locations/global/publishers/google/models/m-1"
            ":streamGenerateContent?alt=sse",
            "authorization",
        ),
    }[api]
    config = ModelConfig(api=api, provider=api.value, id="m-1", base_url=base, api_key="k")
    return config, path, header


def bodies(api: ApiProtocol) -> tuple[bytes, bytes]:
    call = '{"a": 2, "b": 3}'
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        return (
            anthropic_body([("text", "Adding."), ("tool", call)], "tool_use"),
            anthropic_body([("text", "It is 5.")], "end_turn"),
        )
    if api is ApiProtocol.OPENAI_COMPLETIONS:
        return openai_body("Adding.", call), openai_body("It is 5.", None)
    if api in (ApiProtocol.OPENAI_RESPONSES, ApiProtocol.AZURE_OPENAI_RESPONSES):
        return responses_body("Adding.", call), responses_body("It is 5.", None)
    return gemini_body("Adding.", call), gemini_body("It is 5.", None)


def sent_result(api: ApiProtocol, body: dict[str, Any]) -> tuple[str | None, str]:
    """(call id, text) of the tool result in a request body, read the protocol's way."""
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        result = body["messages"][-1]["content"][0]
        assert result["type"] == "tool_result"
        return result["tool_use_id"], result["content"][0]["text"]
    if api is ApiProtocol.OPENAI_COMPLETIONS:
        result = body["messages"][-1]
        assert result["role"] == "tool"
        return result["tool_call_id"], result["content"]
    if api in (ApiProtocol.OPENAI_RESPONSES, ApiProtocol.AZURE_OPENAI_RESPONSES):
        result = body["input"][-1]
        assert result["type"] == "function_call_output"
        return result["call_id"], result["output"]
    parts = body["contents"][-1]["parts"]
    assert body["contents"][-2]["parts"][-1]["thoughtSignature"] == "c2ln"
    response = parts[0]["functionResponse"]
    assert response["name"] == "add"
    return None, response["response"]["output"]


@pytest.fixture
def server() -> Iterator[ScriptedSseServer]:
    with ScriptedSseServer() as running:
        yield running


@pytest.mark.parametrize("api", PROTOCOLS, ids=[api.value for api in PROTOCOLS])
async def test_agent_runs_a_tool_over_a_real_sse_server(
    server: ScriptedSseServer, api: ApiProtocol
) -> None:
    config, path, header = setup(api, server)
    for body in bodies(api):
        server.enqueue(body)

    async with Agent.from_config(config, system_prompt="Be brief.", tools=[add]) as agent:
        with anyio.fail_after(10):
            new = await agent.prompt("what is 2 + 3?")

    replies = [m for m in new if isinstance(m, AssistantMessage)]
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    calls = replies[0].tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("add", {"a": 2, "b": 3})]
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        assert calls[0] == ToolCall(id="toolu_1", name="add", arguments={"a": 2, "b": 3})
    elif api not in (ApiProtocol.GOOGLE_GENERATIVE_AI, ApiProtocol.GOOGLE_VERTEX):
        assert calls[0].id == "call_1"
    assert [(r.tool_call_id, r.text, r.is_error) for r in results] == [(calls[0].id, "5", False)]
    assert replies[-1].text == "It is 5." and replies[-1].stop_reason is StopReason.STOP
    assert agent.messages[-1] == replies[-1]

    assert len(server.requests) == 2
    first, second = server.requests
    assert first.path == second.path == path
    assert "k" in second.headers[header]
    call_id, text = sent_result(api, second.json())
    assert text == "5"
    if call_id is not None:
        assert call_id == calls[0].id


async def test_prompt_raises_on_a_401_from_a_real_server(server: ScriptedSseServer) -> None:
    """A refused key is an exception for the caller, not a quiet return (issue 11)."""
    error = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    server.enqueue(
        ScriptedReply(
            status=401,
            headers={"content-type": "application/json"},
            pieces=[json.dumps(error).encode()],
        )
    )
    config = ModelConfig(
        api=ApiProtocol.ANTHROPIC_MESSAGES,
        provider="anthropic",
        id="claude-x",
        base_url=server.url,
        api_key="wrong-key",
    )
    async with Agent.from_config(config) as agent:
        with anyio.fail_after(10), pytest.raises(RunFailedError) as raised:
            await agent.prompt("hi")
    assert raised.value.kind is ErrorKind.AUTH
    assert "invalid x-api-key" in raised.value.message
    assert "wrong-key" not in str(raised.value)
    assert len(server.requests) == 1  # an auth failure is not retried
    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason is StopReason.ERROR
