"""Gemini / Vertex ``contents`` pinned exactly where the request tests left gaps: parts a
reply cannot send back, where a leftover signature goes, tool results of several texts,
turn notes after a reply, the wire cache per protocol, and the structured-output warning."""

from __future__ import annotations

import logging

import pytest
from provider_helpers import PROTOCOLS, stream_config

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import OutputSchema
from yoagent.core.support import reset_warn_once
from yoagent.providers._gemini_request import build_contents, build_request_body
from yoagent.providers._messages import WireCache

GEMINI = ApiProtocol.GOOGLE_GENERATIVE_AI
VERTEX = ApiProtocol.GOOGLE_VERTEX


def reply(*content: object) -> AssistantMessage:
    return AssistantMessage(content=list(content), stop_reason=StopReason.STOP)  # type: ignore[arg-type]


def signed(signature: str) -> ThinkingContent:
    return ThinkingContent(thinking="...", redacted=signature, redacted_protocol=GEMINI)


def test_empty_text_and_images_in_a_reply_are_skipped_not_the_end_of_it() -> None:
    history = [
        UserMessage.from_text("hi"),
        reply(
            TextContent(text=""),
            ImageContent(data="aGk=", mime_type="image/png"),
            TextContent(text="after"),
        ),
    ]
    assert build_contents(history, [], GEMINI)[1] == {"role": "model", "parts": [{"text": "after"}]}


def test_a_leftover_signature_never_replaces_the_one_on_the_last_part() -> None:
    history = [
        UserMessage.from_text("hi"),
        reply(signed("sig-a"), TextContent(text="x"), signed("sig-b")),
    ]
    assert build_contents(history, [], GEMINI)[1]["parts"] == [
        {"text": "x", "thoughtSignature": "sig-a"},
        {"text": "", "thoughtSignature": "sig-b"},
    ]


def test_a_tool_results_texts_are_lines_of_its_output() -> None:
    result = ToolResultMessage(
        tool_call_id="call_1",
        tool_name="read",
        content=[TextContent(text="one"), TextContent(text="two")],
    )
    history = [
        UserMessage.from_text("hi"),
        reply(ToolCall(id="call_1", name="read", arguments={})),
        result,
    ]
    (response,) = build_contents(history, [], GEMINI)[2]["parts"]
    assert response["functionResponse"]["response"] == {"output": "one\ntwo"}


def test_notes_after_a_models_reply_are_a_new_user_message() -> None:
    history = [UserMessage.from_text("hi"), reply(TextContent(text="hello"))]
    assert build_contents(history, ["note", ""], GEMINI) == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "user", "parts": [{"text": "note"}]},
    ]


def test_the_wire_cache_is_used_and_kept_per_protocol() -> None:
    # An in-place edit of a block goes unseen while the cache holds the message (the
    # documented limit), and is seen once the cache is used for another protocol.
    block = TextContent(text="first")
    history = [UserMessage(content=[block])]
    cache: WireCache[dict[str, object]] = WireCache()  # type: ignore[type-var]
    config = stream_config(PROTOCOLS[GEMINI].model(), messages=history)
    assert build_request_body(config, GEMINI, cache)["contents"][0]["parts"] == [{"text": "first"}]
    block.text = "edited"
    assert build_request_body(config, GEMINI, cache)["contents"][0]["parts"] == [{"text": "first"}]
    assert build_contents(history, [], VERTEX, cache)[0]["parts"] == [{"text": "edited"}]


def test_structured_output_over_vertex_warns_once_naming_the_protocol(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    schema = OutputSchema(name="answer", schema={"type": "object"})
    config = stream_config(PROTOCOLS[VERTEX].model(), output_schema=schema)
    build_request_body(config, VERTEX)
    build_request_body(config, VERTEX)
    assert [r.getMessage() for r in caplog.records] == [
        "structured output is not sent over google_vertex; the schema is ignored"
    ]
    reset_warn_once()
