"""A whole agent run over real HTTP: Agent.from_config → provider → loopback SSE server.

For both wire protocols the model asks for a tool, the agent runs it, and the result goes
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


@pytest.fixture
def server() -> Iterator[ScriptedSseServer]:
    with ScriptedSseServer() as running:
        yield running


@pytest.mark.parametrize("api", [ApiProtocol.ANTHROPIC_MESSAGES, ApiProtocol.OPENAI_COMPLETIONS])
async def test_agent_runs_a_tool_over_a_real_sse_server(
    server: ScriptedSseServer, api: ApiProtocol
) -> None:
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        config = ModelConfig(
            api=api, provider="anthropic", id="claude-x", base_url=server.url, api_key="k"
        )
        server.enqueue(
            anthropic_body([("text", "Adding."), ("tool", '{"a": 2, "b": 3}')], "tool_use")
        )
        server.enqueue(anthropic_body([("text", "It is 5.")], "end_turn"))
    else:
        config = ModelConfig(
            api=api, provider="openai", id="gpt-x", base_url=server.url + "/v1", api_key="k"
        )
        server.enqueue(openai_body("Adding.", '{"a": 2, "b": 3}'))
        server.enqueue(openai_body("It is 5.", None))

    async with Agent.from_config(config, system_prompt="Be brief.", tools=[add]) as agent:
        with anyio.fail_after(10):
            new = await agent.prompt("what is 2 + 3?")

    replies = [m for m in new if isinstance(m, AssistantMessage)]
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    call_id = "toolu_1" if api is ApiProtocol.ANTHROPIC_MESSAGES else "call_1"
    assert replies[0].tool_calls == [ToolCall(id=call_id, name="add", arguments={"a": 2, "b": 3})]
    assert [(r.tool_call_id, r.text, r.is_error) for r in results] == [(call_id, "5", False)]
    assert replies[-1].text == "It is 5." and replies[-1].stop_reason is StopReason.STOP
    assert agent.messages[-1] == replies[-1]

    assert len(server.requests) == 2
    second = server.requests[1].json()
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        assert server.requests[1].path == "/v1/messages"
        assert server.requests[1].headers["x-api-key"] == "k"
        result = second["messages"][-1]["content"][0]
        assert (result["type"], result["tool_use_id"], result["content"][0]["text"]) == (
            "tool_result",
            "toolu_1",
            "5",
        )
        assert second["tools"][0]["name"] == "add"
    else:
        assert server.requests[1].path == "/v1/chat/completions"
        assert server.requests[1].headers["authorization"] == "Bearer k"
        assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
        assert second["messages"][0] == {"role": "system", "content": "Be brief."}


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
