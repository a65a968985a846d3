"""The ConverseStream request body: exact JSON for messages, tools, reasoning, cache points."""

from __future__ import annotations

import json
import logging

import pytest
from bedrock_fixtures import REPLY_TEXT, bedrock_config, replay_bedrock
from provider_helpers import stream_config

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    CacheConfig,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import OutputSchema, ToolDefinition
from yoagent.providers._bedrock_request import build_request_body

CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
LLAMA = "meta.llama3-3-70b-instruct-v1:0"
POINT = {"cachePoint": {"type": "default"}}


def reply(*blocks: object, stop: StopReason = StopReason.STOP) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), stop_reason=stop)  # type: ignore[arg-type]


def body_for(model_id: str = CLAUDE, **overrides: object) -> dict[str, object]:
    return build_request_body(stream_config(bedrock_config(id=model_id), **overrides))


def test_a_tool_round_trip_conversation_in_converse_shape() -> None:
    messages = [
        UserMessage(
            content=[
                TextContent(text="look"),
                ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
            ]
        ),
        reply(
            TextContent(text="Reading."),
            ToolCall(id="call/1 x", name="read_file", arguments={"path": "a"}),
            ToolCall(id="call_2", name="list_files", arguments={}),
            stop=StopReason.TOOL_USE,
        ),
        ToolResultMessage(
            tool_call_id="call/1 x", tool_name="read_file", content=[TextContent(text="A")]
        ),
        ToolResultMessage(tool_call_id="call_2", tool_name="list_files", content=[], is_error=True),
    ]
    tools = [ToolDefinition(name="read_file", description="Read.", parameters={"type": "object"})]
    body = body_for(LLAMA, messages=messages, tools=tools, temperature=0.2, max_tokens=999)
    assert body == {
        "system": [{"text": "You are terse."}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "read_file",
                        "description": "Read.",
                        "inputSchema": {"json": {"type": "object"}},
                    }
                }
            ]
        },
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "look"},
                    {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"text": "Reading."},
                    {
                        "toolUse": {
                            "toolUseId": "call_1_x",
                            "name": "read_file",
                            "input": {"path": "a"},
                        }
                    },
                    {"toolUse": {"toolUseId": "call_2", "name": "list_files", "input": {}}},
                ],
            },
            {
                # Parallel results go back as one user message.
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "call_1_x",
                            "content": [{"text": "A"}],
                            "status": "success",
                        }
                    },
                    {"toolResult": {"toolUseId": "call_2", "content": [], "status": "error"}},
                ],
            },
        ],
        "inferenceConfig": {"maxTokens": 999, "temperature": 0.2},
    }


def test_empty_turns_are_dropped_and_their_neighbours_merge() -> None:
    messages = [
        UserMessage.from_text("one"),
        reply(stop=StopReason.ERROR),
        UserMessage.from_text("two"),
    ]
    body = body_for(LLAMA, messages=messages)
    assert body["messages"] == [{"role": "user", "content": [{"text": "one"}, {"text": "two"}]}]


def thinking_turn(*blocks: ThinkingContent) -> list[object]:
    return [
        UserMessage.from_text("q"),
        reply(*blocks, TextContent(text="a")),
        UserMessage.from_text("r"),
    ]


@pytest.mark.parametrize(
    ("model_id", "block", "sent"),
    [
        (
            CLAUDE,
            ThinkingContent(thinking="hmm", signature="sig"),
            {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}},
        ),
        (
            LLAMA,
            ThinkingContent(thinking="hmm"),
            {"reasoningContent": {"reasoningText": {"text": "hmm"}}},
        ),
        (CLAUDE, ThinkingContent(thinking="unsigned"), None),
        (
            CLAUDE,
            ThinkingContent(redacted="AAEC", redacted_protocol=ApiProtocol.BEDROCK_CONVERSE_STREAM),
            {"reasoningContent": {"redactedContent": "AAEC"}},
        ),
        (
            LLAMA,
            ThinkingContent(redacted="opaque", redacted_protocol=ApiProtocol.ANTHROPIC_MESSAGES),
            None,
        ),
    ],
    ids=[
        "signed",
        "unsigned to a non-Claude model",
        "unsigned to Claude",
        "own redacted",
        "foreign redacted",
    ],
)
def test_reasoning_is_replayed_only_where_bedrock_can_take_it(
    model_id: str, block: ThinkingContent, sent: dict[str, object] | None
) -> None:
    body = body_for(model_id, messages=thinking_turn(block), cache=CacheConfig(enabled=False))
    assistant = body["messages"][1]  # type: ignore[index]
    expected = ([sent] if sent else []) + [{"text": "a"}]
    assert assistant == {"role": "assistant", "content": expected}


def test_cache_points_follow_the_system_prompt_tools_and_latest_two_user_turns() -> None:
    messages = [
        UserMessage.from_text("1"),
        reply(TextContent(text="a")),
        UserMessage.from_text("2"),
        reply(TextContent(text="b")),
        UserMessage.from_text("3"),
    ]
    tools = [ToolDefinition(name="t", description="", parameters={})]
    body = body_for(CLAUDE, messages=messages, tools=tools, turn_notes=["note"])
    assert body["system"] == [{"text": "You are terse."}, POINT]
    assert body["toolConfig"]["tools"][-1] == POINT  # type: ignore[index]
    assert body["toolConfig"]["tools"][0]["toolSpec"]["description"] == "t"  # type: ignore[index]
    contents = [m["content"] for m in body["messages"]]  # type: ignore[union-attr]
    assert contents[0] == [{"text": "1"}]
    assert contents[2] == [{"text": "2"}, POINT]
    # The turn notes come after the cache point: they are this request's only.
    assert contents[4] == [{"text": "3"}, POINT, {"text": "note"}]
    assert json.dumps(body).count("cachePoint") == 4


@pytest.mark.parametrize(
    ("model_id", "cache"),
    [(LLAMA, CacheConfig()), (CLAUDE, CacheConfig(enabled=False))],
    ids=["model without cache points", "caching off"],
)
def test_no_cache_points_where_they_are_not_wanted(model_id: str, cache: CacheConfig) -> None:
    body = body_for(
        model_id, cache=cache, tools=[ToolDefinition(name="t", description="d", parameters={})]
    )
    assert "cachePoint" not in json.dumps(body)


def test_claude_thinking_gets_a_budget_under_max_tokens_and_drops_temperature() -> None:
    body = body_for(CLAUDE, thinking_level=ThinkingLevel.HIGH, temperature=0.5, max_tokens=4096)
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 3072}
    }
    assert body["inferenceConfig"] == {"maxTokens": 4096}
    small = body_for(CLAUDE, thinking_level=ThinkingLevel.LOW, max_tokens=1500)
    assert small["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 1024}
    }
    assert small["inferenceConfig"] == {"maxTokens": 2048}


def test_thinking_levels_for_other_models_and_output_schemas_are_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = OutputSchema(name="Answer", schema={"type": "object"})
    with caplog.at_level(logging.WARNING):
        body = body_for("deepseek.r1-v1:0", thinking_level=ThinkingLevel.HIGH, output_schema=schema)
    assert "additionalModelRequestFields" not in body
    assert "outputConfig" not in body
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert "deepseek.r1-v1:0" in warnings and "schema is ignored" in warnings


def test_images_bedrock_cannot_take_are_left_out_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    user = UserMessage(
        content=[TextContent(text="see"), ImageContent(data="AAAA", mime_type="image/bmp")]
    )
    with caplog.at_level(logging.WARNING):
        body = body_for(LLAMA, messages=[user])
    assert body["messages"] == [{"role": "user", "content": [{"text": "see"}]}]
    assert any("image/bmp" in r.getMessage() for r in caplog.records)


async def test_the_body_sent_is_the_body_built() -> None:
    config = stream_config(bedrock_config())
    _, _, route = await replay_bedrock(REPLY_TEXT, config=config)
    assert json.loads(route.calls.last.request.content) == build_request_body(config)


def test_a_history_with_tool_calls_but_no_tools_still_sends_a_tool_config() -> None:
    messages = [
        UserMessage.from_text("q"),
        reply(ToolCall(id="c1", name="bash", arguments={}), stop=StopReason.TOOL_USE),
        ToolResultMessage(tool_call_id="c1", tool_name="bash", content=[TextContent(text="ok")]),
    ]
    body = body_for(LLAMA, messages=messages)
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "bash",
                    "description": "No longer available.",
                    "inputSchema": {"json": {"type": "object"}},
                }
            }
        ]
    }
    assert "toolConfig" not in body_for(LLAMA)
