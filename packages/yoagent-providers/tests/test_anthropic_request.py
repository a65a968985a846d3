"""Anthropic request bodies, pinned as exact JSON: caching, thinking, structured output, tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_helpers import SECRET, anthropic_config, replay, stream_config
from stream_fixtures import anthropic_sse, anthropic_text

from yoagent.core import (
    AnthropicCompat,
    ApiProtocol,
    AssistantMessage,
    CacheConfig,
    ImageContent,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import OutputSchema, ToolDefinition
from yoagent.providers._anthropic_request import build_request_body

READ = ToolDefinition(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
GREP = ToolDefinition(name="search", description="Search.", parameters={"type": "object"})
EPHEMERAL = {"type": "ephemeral"}


def history() -> list[Any]:
    return [
        UserMessage.from_text("read a.txt"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="plan", signature="sig"),
                ThinkingContent(redacted="ENC", redacted_protocol=ApiProtocol.ANTHROPIC_MESSAGES),
                ThinkingContent(redacted="FOREIGN", redacted_protocol=ApiProtocol.OPENAI_RESPONSES),
                ThinkingContent(thinking="unsigned from another API"),
                TextContent(text="Reading."),
                ToolCall(id="call|1", name="read_file", arguments={"path": "a.txt"}),
                ToolCall(id="toolu_2", name="search", arguments={}),
            ]
        ),
        ToolResultMessage(
            tool_call_id="call|1",
            tool_name="read_file",
            content=[TextContent(text="hello"), ImageContent(data="QUJD", mime_type="image/png")],
        ),
        ToolResultMessage(tool_call_id="toolu_2", tool_name="search", content=[], is_error=True),
        UserMessage(content=[]),
        UserMessage.from_text("and now?"),
    ]


def test_cache_breakpoints_on_system_last_tool_and_latest_user_turns() -> None:
    config = stream_config(
        anthropic_config(),
        tools=[READ, GREP],
        messages=history(),
        turn_notes=["(note: 3 turns left)"],
    )
    assert build_request_body(config) == {
        "model": "claude-test",
        "max_tokens": 4096,
        "stream": True,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}],
        "tools": [
            {"name": "read_file", "description": "Read a file.", "input_schema": READ.parameters},
            {
                "name": "search",
                "description": "Search.",
                "input_schema": {"type": "object"},
                "cache_control": EPHEMERAL,
            },
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "read a.txt", "cache_control": EPHEMERAL}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plan", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "ENC"},
                    {"type": "text", "text": "Reading."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "read_file",
                        "input": {"path": "a.txt"},
                    },
                    {"type": "tool_use", "id": "toolu_2", "name": "search", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "is_error": False,
                        "content": [
                            {"type": "text", "text": "hello"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "QUJD",
                                },
                            },
                        ],
                    },
                    {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True},
                    {"type": "text", "text": "and now?", "cache_control": EPHEMERAL},
                    {"type": "text", "text": "(note: 3 turns left)"},
                ],
            },
        ],
    }


def count_breakpoints(value: object) -> int:
    return json.dumps(value).count('"cache_control"')


def test_at_most_four_breakpoints_and_none_when_caching_is_off() -> None:
    many_turns = []
    for i in range(6):
        many_turns += [
            UserMessage.from_text(f"q{i}"),
            AssistantMessage(content=[TextContent(text=f"a{i}")]),
        ]
    many_turns.append(UserMessage.from_text("last"))
    on = build_request_body(stream_config(anthropic_config(), tools=[READ], messages=many_turns))
    off = build_request_body(
        stream_config(
            anthropic_config(), tools=[READ], messages=many_turns, cache=CacheConfig(enabled=False)
        )
    )
    assert count_breakpoints(on) == 4
    assert [m["content"][-1].get("cache_control") for m in on["messages"][-3:]] == [
        EPHEMERAL,
        None,
        EPHEMERAL,
    ]
    assert count_breakpoints(off) == 0


@pytest.mark.parametrize(
    ("level", "budget"),
    [
        (ThinkingLevel.MINIMAL, 1024),
        (ThinkingLevel.LOW, 2048),
        (ThinkingLevel.MEDIUM, 8192),
        (ThinkingLevel.HIGH, 16384),
    ],
)
def test_budget_thinking_per_level_stays_below_max_tokens(
    level: ThinkingLevel, budget: int
) -> None:
    config = stream_config(
        anthropic_config(max_tokens=32000), thinking_level=level, temperature=0.2
    )
    body = build_request_body(config)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == 32000
    assert "temperature" not in body  # the API takes only the default with thinking on


def test_budget_is_clipped_under_a_small_max_tokens() -> None:
    body = build_request_body(
        stream_config(anthropic_config(max_tokens=4096), thinking_level=ThinkingLevel.HIGH)
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3072}
    tiny = build_request_body(
        stream_config(anthropic_config(max_tokens=500), thinking_level=ThinkingLevel.LOW)
    )
    assert tiny["thinking"]["budget_tokens"] < tiny["max_tokens"]


def test_adaptive_thinking_sends_effort() -> None:
    model = anthropic_config(compat=AnthropicCompat(adaptive_thinking=True))
    body = build_request_body(stream_config(model, thinking_level=ThinkingLevel.MEDIUM))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "medium"}


def test_thinking_off_sends_no_thinking_field_and_keeps_temperature() -> None:
    body = build_request_body(
        stream_config(
            anthropic_config(compat=AnthropicCompat(adaptive_thinking=True)), temperature=0.3
        )
    )
    assert "thinking" not in body and "output_config" not in body
    assert body["temperature"] == 0.3


SCHEMA = OutputSchema(
    name="verdict",
    description="The verdict.",
    schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
)


def test_native_structured_output_uses_output_config_format() -> None:
    model = anthropic_config(
        compat=AnthropicCompat(native_structured_output=True, adaptive_thinking=True)
    )
    body = build_request_body(
        stream_config(
            model,
            output_schema=SCHEMA,
            thinking_level=ThinkingLevel.LOW,
            cache=CacheConfig(enabled=False),
        )
    )
    assert body["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": SCHEMA.schema},
    }
    assert body["thinking"] == {"type": "adaptive"}
    assert "tools" not in body and "tool_choice" not in body


def test_tool_forcing_structured_output_adds_a_synthetic_tool_without_thinking() -> None:
    body = build_request_body(
        stream_config(
            anthropic_config(),
            output_schema=SCHEMA,
            tools=[READ],
            thinking_level=ThinkingLevel.HIGH,
            cache=CacheConfig(enabled=False),
        )
    )
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file.", "input_schema": READ.parameters},
        {"name": "verdict", "description": "The verdict.", "input_schema": SCHEMA.schema},
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert "thinking" not in body and "output_config" not in body


def test_turn_notes_open_a_user_turn_when_the_history_ends_with_a_reply() -> None:
    messages = [UserMessage.from_text("hi"), AssistantMessage(content=[TextContent(text="yo")])]
    body = build_request_body(
        stream_config(
            anthropic_config(),
            messages=messages,
            turn_notes=["note"],
            cache=CacheConfig(enabled=False),
            system_prompt="",
        )
    )
    assert body["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "note"}]}
    assert "system" not in body


async def test_headers_use_x_api_key_and_version() -> None:
    _, _, route = await replay(anthropic_sse(anthropic_text()), anthropic=True)
    request = route.calls.last.request
    assert request.headers["x-api-key"] == SECRET
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert json.loads(request.content)["stream"] is True


async def test_bearer_auth_when_the_compat_says_so() -> None:
    model = anthropic_config(compat=AnthropicCompat(bearer_auth=True), headers={"x-trace": "1"})
    _, _, route = await replay(
        anthropic_sse(anthropic_text()), anthropic=True, config=stream_config(model)
    )
    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert "x-api-key" not in request.headers
    assert request.headers["x-trace"] == "1"
