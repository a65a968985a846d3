"""The Responses request body (OpenAI and Azure), pinned as exact JSON; reasoning replay."""

from __future__ import annotations

import json

import pytest
from provider_helpers import PROTOCOLS, replay_as, stream_config
from stream_fixtures import responses_sse, responses_text, responses_tool

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    CacheConfig,
    ImageContent,
    OpenAiCompat,
    StopReason,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.core.provider import OutputSchema, ToolDefinition
from yoagent.providers._responses_request import build_request_body

OPENAI = ApiProtocol.OPENAI_RESPONSES
AZURE = ApiProtocol.AZURE_OPENAI_RESPONSES
READ = ToolDefinition(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def reply(*content: object) -> AssistantMessage:
    return AssistantMessage(
        content=list(content),  # type: ignore[arg-type]
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(),
        model="m",
        provider="openai",
    )


def test_a_whole_conversation_is_pinned_as_exact_json() -> None:
    model = PROTOCOLS[OPENAI].model(reasoning=True)
    config = stream_config(
        model,
        messages=[
            UserMessage.from_text("read a.txt"),
            reply(
                ThinkingContent(thinking="plain reasoning text, never sent"),
                TextContent(text="Reading."),
                ToolCall(id="call_1", name="read_file", arguments={"path": "a.txt"}),
            ),
            ToolResultMessage(
                tool_call_id="call_1", tool_name="read_file", content=[TextContent(text="hi")]
            ),
            UserMessage(
                content=[
                    TextContent(text="and this"),
                    ImageContent(data="AAAA", mime_type="image/png"),
                ]
            ),
        ],
        tools=[READ],
        thinking_level=ThinkingLevel.MEDIUM,
        turn_notes=["note"],
        cache=CacheConfig(session_key="session-1"),
    )
    assert build_request_body(config, OPENAI) == {
        "model": "test-model",
        "stream": True,
        "input": [
            {"role": "user", "content": "read a.txt"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Reading."}],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "read_file",
                "arguments": '{"path": "a.txt"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "hi"},
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "and this"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
                    {"type": "input_text", "text": "note"},
                ],
            },
        ],
        "max_output_tokens": 4096,
        "instructions": "You are terse.",
        "tools": [
            {
                "type": "function",
                "name": "read_file",
                "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        ],
        "reasoning": {"effort": "medium", "summary": "auto"},
        "prompt_cache_key": "session-1",
    }


def test_off_sends_no_reasoning_and_caching_off_sends_no_key() -> None:
    config = stream_config(
        PROTOCOLS[OPENAI].model(reasoning=True), cache=CacheConfig(enabled=False)
    )
    body = build_request_body(config, OPENAI)
    assert "reasoning" not in body and "include" not in body
    assert "prompt_cache_key" not in body
    derived = build_request_body(stream_config(PROTOCOLS[OPENAI].model()), OPENAI)
    assert derived["prompt_cache_key"].startswith("yoagent-")


def test_effort_is_capped_and_a_non_reasoning_model_gets_none() -> None:
    capped = PROTOCOLS[OPENAI].model(
        reasoning=True, compat=OpenAiCompat(max_reasoning_effort=ThinkingLevel.LOW)
    )
    body = build_request_body(stream_config(capped, thinking_level=ThinkingLevel.HIGH), OPENAI)
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    plain = PROTOCOLS[OPENAI].model(reasoning=False)
    body = build_request_body(stream_config(plain, thinking_level=ThinkingLevel.HIGH), OPENAI)
    assert "reasoning" not in body


def test_structured_output_is_ignored_not_sent() -> None:
    schema = OutputSchema(name="answer", schema={"type": "object"})
    body = build_request_body(stream_config(PROTOCOLS[AZURE].model(), output_schema=schema), AZURE)
    assert "text" not in body and "response_format" not in body


def encrypted_model(api: ApiProtocol = OPENAI, **overrides: object):
    values: dict[str, object] = {
        "reasoning": True,
        "compat": OpenAiCompat(encrypted_reasoning=True),
    }
    return PROTOCOLS[api].model(**{**values, **overrides})


@pytest.mark.parametrize("api", [OPENAI, AZURE])
async def test_encrypted_reasoning_round_trips_to_the_protocol_that_produced_it(
    api: ApiProtocol,
) -> None:
    """A finished reasoning item goes back in place, before its call, which gets its id."""
    config = stream_config(encrypted_model(api), thinking_level=ThinkingLevel.LOW)
    first, _, route = await replay_as(api, responses_sse(responses_tool()), config=config)
    sent = json.loads(route.calls.last.request.content)
    assert sent["include"] == ["reasoning.encrypted_content"]
    thinking = first.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert (thinking.thinking, thinking.redacted_protocol) == ("Need the file.", api)

    result = ToolResultMessage(
        tool_call_id="call_1", tool_name="read_file", content=[TextContent(text="hi")]
    )
    history = [UserMessage.from_text("go"), first, result]
    body = build_request_body(stream_config(config.model, messages=history), api)
    assert body["input"][1:4] == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Need the file."}],
            "encrypted_content": "gAAAA-encrypted",
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.txt"}',
            "id": "fc_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "hi"},
    ]


async def test_encrypted_reasoning_is_dropped_anywhere_else() -> None:
    config = stream_config(encrypted_model(OPENAI), thinking_level=ThinkingLevel.LOW)
    first, _, _ = await replay_as(OPENAI, responses_sse(responses_tool()), config=config)
    history = [UserMessage.from_text("go"), first]
    reasoning_items = lambda body: [i for i in body["input"] if i.get("type") == "reasoning"]  # noqa: E731

    # Azure is another service: OpenAI's encrypted reasoning means nothing there.
    azure = build_request_body(stream_config(encrypted_model(AZURE), messages=history), AZURE)
    assert reasoning_items(azure) == []
    assert "id" not in azure["input"][1]  # the call goes without its paired id
    # Not opted in, or not a reasoning model: nothing replayed, nothing asked for.
    for model in (
        PROTOCOLS[OPENAI].model(reasoning=True),
        encrypted_model(OPENAI, reasoning=False),
    ):
        body = build_request_body(stream_config(model, messages=history), OPENAI)
        assert reasoning_items(body) == [] and "include" not in body
    # A trailing reasoning item with no output after it is dropped.
    trailing = reply(first.content[0])
    body = build_request_body(
        stream_config(encrypted_model(OPENAI), messages=[UserMessage.from_text("go"), trailing]),
        OPENAI,
    )
    assert reasoning_items(body) == []


async def test_azure_sends_api_key_or_the_users_authorization_to_its_v1_endpoint() -> None:
    message, _, route = await replay_as(AZURE, responses_sse(responses_text("hi there")))
    request = route.calls.last.request
    assert str(request.url) == "http://azure.test/openai/v1/responses"
    assert request.headers["api-key"].startswith("sk-ant-test")
    assert "authorization" not in request.headers
    assert message.text == "hi there"

    entra = PROTOCOLS[AZURE].model(headers={"Authorization": "Bearer entra-token-123456"})
    _, _, route = await replay_as(
        AZURE, responses_sse(responses_text()), config=stream_config(entra)
    )
    request = route.calls.last.request
    assert "api-key" not in request.headers
    assert request.headers["authorization"] == "Bearer entra-token-123456"


def test_turn_notes_after_tool_outputs_follow_them_as_a_new_user_message() -> None:
    history = [
        UserMessage.from_text("read it"),
        reply(ToolCall(id="call_1", name="read_file", arguments={})),
        ToolResultMessage(
            tool_call_id="call_1", tool_name="read_file", content=[TextContent(text="hi")]
        ),
    ]
    config = stream_config(PROTOCOLS[OPENAI].model(), messages=history, turn_notes=["note"])
    body = build_request_body(config, OPENAI)
    assert body["input"][0] == {"role": "user", "content": "read it"}  # untouched
    assert body["input"][-1] == {
        "role": "user",
        "content": [{"type": "input_text", "text": "note"}],
    }
