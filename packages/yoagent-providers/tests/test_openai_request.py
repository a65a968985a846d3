"""Chat Completions request bodies, pinned as exact JSON: quirks, tools, structured output."""

from __future__ import annotations

import json

import pytest
from provider_helpers import READ_TOOL, SECRET, openai_config, replay, stream_config
from stream_fixtures import openai_sse, openai_text

from yoagent.core import (
    AssistantMessage,
    ImageContent,
    OpenAiCompat,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import OutputSchema
from yoagent.providers._completions_request import build_request_body


def test_tools_results_images_and_notes() -> None:
    messages = [
        UserMessage(
            content=[TextContent(text="look"), ImageContent(data="QUJD", mime_type="image/png")]
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm"),
                TextContent(text="Reading."),
                ToolCall(id="call_1", name="read_file", arguments={"path": "a.png"}),
                ToolCall(id="call_2", name="read_file", arguments={"path": "b"}),
            ]
        ),
        ToolResultMessage(
            tool_call_id="call_1",
            tool_name="read_file",
            content=[
                TextContent(text="an image"),
                ImageContent(data="REVG", mime_type="image/jpeg"),
            ],
        ),
        ToolResultMessage(tool_call_id="call_2", tool_name="read_file", content=[], is_error=True),
    ]
    config = stream_config(
        openai_config(), messages=messages, tools=[READ_TOOL], turn_notes=["2 turns left"]
    )
    assert build_request_body(config) == {
        "model": "gpt-test",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 4096,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file.",
                    "parameters": READ_TOOL.parameters,
                },
            }
        ],
        "messages": [
            {"role": "system", "content": "You are terse."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
                ],
            },
            {
                "role": "assistant",
                "content": "Reading.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.png"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "b"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "an image"},
            {"role": "tool", "tool_call_id": "call_2", "content": ""},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Images returned by read_file:"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,REVG"}},
                    {"type": "text", "text": "2 turns left"},
                ],
            },
        ],
    }


def test_vendor_quirks_max_tokens_developer_role_effort_ceiling_and_no_usage_option() -> None:
    compat = OpenAiCompat(
        max_tokens_field="max_tokens",
        supports_developer_role=True,
        max_reasoning_effort=ThinkingLevel.MEDIUM,
        supports_usage_in_streaming=False,
        supports_strict_tools=True,
    )
    config = stream_config(
        openai_config(compat=compat, reasoning=True),
        thinking_level=ThinkingLevel.HIGH,
        temperature=0.5,
        tools=[READ_TOOL],
    )
    body = build_request_body(config)
    assert body["max_tokens"] == 4096 and "max_completion_tokens" not in body
    assert body["messages"][0] == {"role": "developer", "content": "You are terse."}
    assert body["reasoning_effort"] == "medium"
    assert "stream_options" not in body
    assert body["temperature"] == 0.5
    assert body["tools"][0]["function"]["strict"] is True


@pytest.mark.parametrize("level", list(ThinkingLevel))
def test_effort_only_for_reasoning_models_and_never_when_off(level: ThinkingLevel) -> None:
    plain = build_request_body(stream_config(openai_config(), thinking_level=level))
    reasoning = build_request_body(
        stream_config(openai_config(reasoning=True), thinking_level=level)
    )
    assert "reasoning_effort" not in plain
    assert reasoning.get("reasoning_effort") == (
        None if level is ThinkingLevel.OFF else level.value
    )


def test_deepseek_toggle_and_reasoning_replay() -> None:
    compat = OpenAiCompat(
        reasoning_field="reasoning_content",
        replay_reasoning=True,
        thinking_toggle=True,
        supports_reasoning_effort=False,
    )
    messages = [
        UserMessage.from_text("q"),
        AssistantMessage(
            content=[ThinkingContent(thinking="because"), ToolCall(id="c", name="t", arguments={})]
        ),
        ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent(text="r")]),
    ]
    off = build_request_body(
        stream_config(openai_config(compat=compat, reasoning=True), messages=messages)
    )
    on = build_request_body(
        stream_config(
            openai_config(compat=compat, reasoning=True),
            messages=messages,
            thinking_level=ThinkingLevel.HIGH,
        )
    )
    assert off["thinking"] == {"type": "disabled"}
    assert on["thinking"] == {"type": "enabled"}
    assert "reasoning_effort" not in on
    assert on["messages"][2] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "because",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}
        ],
    }


def test_structured_output_as_response_format() -> None:
    schema = OutputSchema(name="verdict", schema={"type": "object"}, description="The verdict.")
    body = build_request_body(stream_config(openai_config(), output_schema=schema))
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "schema": {"type": "object"},
            "description": "The verdict.",
            "strict": True,
        },
    }
    unsupported = openai_config(
        compat=OpenAiCompat(supports_structured_output=False), provider="deepseek"
    )
    assert "response_format" not in build_request_body(
        stream_config(unsupported, output_schema=schema)
    )


def test_same_role_messages_merge_and_empty_ones_drop() -> None:
    messages = [
        UserMessage.from_text("one"),
        UserMessage(content=[]),
        AssistantMessage(content=[]),
        UserMessage.from_text("two"),
    ]
    body = build_request_body(stream_config(openai_config(), messages=messages, system_prompt=""))
    assert body["messages"] == [{"role": "user", "content": "one\n\ntwo"}]


async def test_bearer_header_and_url() -> None:
    _, _, route = await replay(openai_sse(openai_text()), anthropic=False)
    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert str(request.url) == "http://openai.test/v1/chat/completions"
    assert json.loads(request.content)["model"] == "gpt-test"


async def test_no_key_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(name, raising=False)
    config = stream_config(openai_config(api_key="", provider="ollama"))
    _, _, route = await replay(openai_sse(openai_text()), anthropic=False, config=config)
    assert "authorization" not in route.calls.last.request.headers
