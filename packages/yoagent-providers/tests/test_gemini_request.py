"""The Gemini / Vertex request body pinned as exact JSON; auth headers; signatures replayed."""

from __future__ import annotations

import json

import pytest
from provider_helpers import PROTOCOLS, SECRET, replay_as, stream_config
from stream_fixtures import gemini_chunk, gemini_sse, gemini_text, gemini_tool

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    GoogleCompat,
    ImageContent,
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
from yoagent.providers._gemini_request import build_request_body

GEMINI = ApiProtocol.GOOGLE_GENERATIVE_AI
VERTEX = ApiProtocol.GOOGLE_VERTEX
READ = ToolDefinition(
    name="read_file",
    description="Read a file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "additionalProperties": False,
    },
)


def reply(*content: object) -> AssistantMessage:
    return AssistantMessage(
        content=list(content),  # type: ignore[arg-type]
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(),
        model="m",
        provider="google",
    )


def result(
    call_id: str, text: str, *, error: bool = False, image: bool = False
) -> ToolResultMessage:
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    if image:
        content.append(ImageContent(data="QUJD", mime_type="image/png"))
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="read_file", content=content, is_error=error
    )


def test_parallel_results_go_back_as_function_responses_first_then_notes() -> None:
    """One user content: both functionResponse parts, then the image, then the turn note."""
    history = [
        UserMessage.from_text("read both"),
        reply(
            ThinkingContent(thinking="thought text is not sent"),
            ThinkingContent(redacted="c2ln", redacted_protocol=GEMINI),
            ToolCall(id="gemini_r_1", name="read_file", arguments={"path": "a"}),
            ToolCall(id="call-from-api", name="read_file", arguments={"path": "b"}),
        ),
        result("gemini_r_1", "A", image=True),
        result("call-from-api", "no such file", error=True),
    ]
    config = stream_config(
        PROTOCOLS[GEMINI].model(compat=GoogleCompat(thinking_level_field=True)),
        messages=history,
        tools=[READ],
        thinking_level=ThinkingLevel.MEDIUM,
        temperature=0.5,
        turn_notes=["note"],
    )
    assert build_request_body(config, GEMINI) == {
        "contents": [
            {"role": "user", "parts": [{"text": "read both"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"name": "read_file", "args": {"path": "a"}},
                        "thoughtSignature": "c2ln",
                    },
                    {
                        "functionCall": {
                            "name": "read_file",
                            "args": {"path": "b"},
                            "id": "call-from-api",
                        }
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "read_file", "response": {"output": "A"}}},
                    {
                        "functionResponse": {
                            "name": "read_file",
                            "response": {"error": "no such file"},
                            "id": "call-from-api",
                        }
                    },
                    {"inlineData": {"mimeType": "image/png", "data": "QUJD"}},
                    {"text": "note"},
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "read_file",
                        "description": "Read a file.",
                        "parametersJsonSchema": READ.parameters,
                    }
                ]
            }
        ],
        "generationConfig": {
            "maxOutputTokens": 4096,
            "temperature": 0.5,
            "thinkingConfig": {"thinkingLevel": "MEDIUM", "includeThoughts": True},
        },
    }


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gemini-2.5-flash", ThinkingLevel.LOW, {"thinkingBudget": 1024, "includeThoughts": True}),
        ("gemini-2.5-pro", ThinkingLevel.HIGH, {"thinkingBudget": 24576, "includeThoughts": True}),
        (
            "gemini-3-pro-preview",
            ThinkingLevel.MINIMAL,
            {"thinkingLevel": "LOW", "includeThoughts": True},
        ),
        ("gemini-3.1-pro", ThinkingLevel.HIGH, {"thinkingLevel": "HIGH", "includeThoughts": True}),
        ("gemini-3-flash", ThinkingLevel.OFF, None),
    ],
)
def test_thinking_level_or_budget_by_model_family(
    model_id: str, level: ThinkingLevel, expected: dict[str, object] | None
) -> None:
    config = stream_config(PROTOCOLS[GEMINI].model(id=model_id, compat=None), thinking_level=level)
    assert build_request_body(config, GEMINI)["generationConfig"].get("thinkingConfig") == expected


def test_structured_output_uses_a_json_schema_on_gemini_and_is_ignored_on_vertex() -> None:
    schema = OutputSchema(name="answer", schema={"type": "object", "additionalProperties": False})
    gemini = build_request_body(
        stream_config(PROTOCOLS[GEMINI].model(), output_schema=schema), GEMINI
    )
    assert gemini["generationConfig"]["responseMimeType"] == "application/json"
    assert gemini["generationConfig"]["responseJsonSchema"] == schema.schema
    vertex = build_request_body(
        stream_config(PROTOCOLS[VERTEX].model(), output_schema=schema), VERTEX
    )
    assert "responseJsonSchema" not in vertex["generationConfig"]


def test_signatures_go_back_only_to_the_api_that_made_them_and_empty_messages_vanish() -> None:
    history = [
        UserMessage.from_text("hi"),
        reply(
            TextContent(text="Hello"),
            ThinkingContent(redacted="c2ln", redacted_protocol=GEMINI),  # on the closing part
        ),
        reply(ThinkingContent(thinking="only thoughts: nothing to send")),
        UserMessage.from_text("again"),
    ]
    gemini = build_request_body(stream_config(PROTOCOLS[GEMINI].model(), messages=history), GEMINI)
    assert gemini["contents"] == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "Hello", "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"text": "again"}]},
    ]
    vertex = build_request_body(stream_config(PROTOCOLS[VERTEX].model(), messages=history), VERTEX)
    assert vertex["contents"][1] == {"role": "model", "parts": [{"text": "Hello"}]}


async def test_a_streamed_reply_with_signatures_replays_them_on_the_same_parts() -> None:
    first, _, route = await replay_as(GEMINI, gemini_sse(gemini_tool()))
    assert [type(b).__name__ for b in first.content] == [
        "TextContent",
        "ThinkingContent",
        "ToolCall",
    ]
    request = route.calls.last.request
    assert request.headers["x-goog-api-key"] == SECRET
    assert "key=" not in str(request.url)
    history = [UserMessage.from_text("go"), first, result(first.tool_calls[0].id, "hi")]
    body = build_request_body(stream_config(PROTOCOLS[GEMINI].model(), messages=history), GEMINI)
    assert body["contents"][1]["parts"] == [
        {"text": "Reading it."},
        {
            "functionCall": {"name": "read_file", "args": {"path": "a.txt"}},
            "thoughtSignature": "c2lnLWNhbGw=",
        },
    ]
    assert body["contents"][2]["parts"][0]["functionResponse"] == {
        "name": "read_file",
        "response": {"output": "hi"},
    }


async def test_two_signatures_before_one_part_both_go_back() -> None:
    # The second signature overwrote the first: a closing empty part's signature was lost
    # when a signed call followed it.
    stream = [
        gemini_chunk([{"text": "Let me check."}]),
        gemini_chunk([{"text": "", "thoughtSignature": "c2lnLXRleHQ="}]),
        gemini_chunk(
            [
                {
                    "functionCall": {"name": "read_file", "args": {}},
                    "thoughtSignature": "c2lnLWNhbGw=",
                }
            ]
        ),
        gemini_chunk([{"text": ""}], "STOP"),
    ]
    first, _, _ = await replay_as(GEMINI, gemini_sse(stream))
    history = [UserMessage.from_text("go"), first, result(first.tool_calls[0].id, "hi")]
    body = build_request_body(stream_config(PROTOCOLS[GEMINI].model(), messages=history), GEMINI)
    assert body["contents"][1]["parts"] == [
        {"text": "Let me check.", "thoughtSignature": "c2lnLXRleHQ="},
        {"functionCall": {"name": "read_file", "args": {}}, "thoughtSignature": "c2lnLWNhbGw="},
    ]
    opening = reply(
        ThinkingContent(redacted="c2lnLTE=", redacted_protocol=GEMINI),  # an empty first part
        ThinkingContent(redacted="c2lnLTI=", redacted_protocol=GEMINI),
        TextContent(text="Hello"),
    )
    history = [UserMessage.from_text("hi"), opening, UserMessage.from_text("again")]
    body = build_request_body(stream_config(PROTOCOLS[GEMINI].model(), messages=history), GEMINI)
    assert body["contents"][1]["parts"] == [
        {"text": "", "thoughtSignature": "c2lnLTE="},
        {"text": "Hello", "thoughtSignature": "c2lnLTI="},
    ]


async def test_a_user_x_goog_api_key_header_replaces_the_key() -> None:
    model = PROTOCOLS[GEMINI].model(headers={"X-Goog-Api-Key": "users-own-key-0123"})
    _, _, route = await replay_as(GEMINI, gemini_sse(gemini_text()), config=stream_config(model))
    headers = route.calls.last.request.headers
    assert headers.get_list("x-goog-api-key") == ["users-own-key-0123"]  # one, the user's
    assert SECRET not in json.dumps(dict(headers))


async def test_vertex_sends_the_bearer_token_to_its_regional_url() -> None:
    message, _, route = await replay_as(VERTEX, gemini_sse(gemini_text("hi there")))
    request = route.calls.last.request
    assert str(request.url) == (
        "http://vertex.test/v1/projects/proj/locations/us-central1/publishers/google/models/"
        "test-model:streamGenerateContent?alt=sse"
    )
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert "x-goog-api-key" not in request.headers
    assert message.text == "hi there"
    assert message.usage == Usage(input=16, output=7, cache_read=4)
