"""The Chat Completions ``messages`` array pinned where the request tests left gaps:
replayed reasoning and its field, tool results of several texts, images after a run of
tool results, calls of merged replies, notes after a reply, the wire cache's entries
never changed by what a caller does with a request, and the structured-output warning."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from provider_helpers import PROTOCOLS, stream_config

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ImageContent,
    OpenAiCompat,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import OutputSchema
from yoagent.core.support import reset_warn_once
from yoagent.providers._completions_request import (
    ConvertedMessage,
    build_messages,
    build_request_body,
)
from yoagent.providers._messages import WireCache

COMPAT = OpenAiCompat()


def reply(*content: object) -> AssistantMessage:
    return AssistantMessage(content=list(content), stop_reason=StopReason.STOP)  # type: ignore[arg-type]


def call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name="read", arguments={})


def wire_call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("field", "sent"),
    [
        ("reasoning", "reasoning"),
        ("reasoning_content", "reasoning_content"),
        ("none", "reasoning_content"),
    ],
)
def test_replayed_reasoning_is_joined_into_its_field(field: Any, sent: str) -> None:
    compat = OpenAiCompat(replay_reasoning=True, reasoning_field=field)
    thinking = reply(
        ThinkingContent(thinking="a"), ThinkingContent(thinking="b"), TextContent(text="x")
    )
    assert build_messages("", [UserMessage.from_text("hi"), thinking], [], compat)[1] == {
        "role": "assistant",
        "content": "x",
        sent: "ab",
    }


def test_a_system_prompt_and_a_tool_results_texts_as_lines() -> None:
    history = [
        UserMessage.from_text("hi"),
        reply(call("call_1")),
        ToolResultMessage(
            tool_call_id="call_1",
            tool_name="read",
            content=[TextContent(text="one"), TextContent(text="two")],
        ),
    ]
    assert build_messages("be terse", history, [], COMPAT) == [
        {"role": "system", "content": "be terse"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [wire_call("call_1")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "one\ntwo"},
    ]


def test_images_of_a_run_of_tool_results_go_before_the_next_user_message() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    history = [
        UserMessage.from_text("hi"),
        reply(call("call_1")),
        ToolResultMessage(tool_call_id="call_1", tool_name="look", content=[image]),
        UserMessage.from_text("next"),
    ]
    assert build_messages("", history, [], COMPAT)[3:] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images returned by look:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
                {"type": "text", "text": "next"},
            ],
        }
    ]


def test_merged_replies_keep_every_call_and_notes_follow_them() -> None:
    history = [UserMessage.from_text("hi"), reply(call("call_1")), reply(call("call_2"))]
    assert build_messages("", history, ["note"], COMPAT) == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [wire_call("call_1"), wire_call("call_2")],
        },
        {"role": "user", "content": "note"},
    ]


def test_what_a_caller_does_to_a_request_never_reaches_the_cache() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    history = [UserMessage(content=[TextContent(text="hi"), image]), reply(call("call_1"))]
    cache: WireCache[ConvertedMessage] = WireCache()
    first = build_messages("", history, [], COMPAT, cache)
    expected = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [wire_call("call_1")]},
    ]
    assert first == expected
    first[0]["content"].append({"type": "text", "text": "junk"})
    first[1]["tool_calls"].append(wire_call("junk"))
    assert build_messages("", history, [], COMPAT, cache) == expected


@pytest.mark.parametrize("through_body", [False, True])
def test_the_wire_cache_is_used(through_body: bool) -> None:
    # An in-place edit of a block goes unseen while the cache holds the message (the
    # documented limit): the proof that the cache was used.
    block = TextContent(text="first")
    history = [UserMessage(content=[block])]
    cache: WireCache[ConvertedMessage] = WireCache()
    config = stream_config(
        PROTOCOLS[ApiProtocol.OPENAI_COMPLETIONS].model(), messages=history, system_prompt=""
    )

    def sent() -> Any:
        if through_body:
            return build_request_body(config, cache)["messages"][0]["content"]
        return build_messages("", history, [], COMPAT, cache)[0]["content"]

    assert sent() == "first"
    block.text = "edited"
    assert sent() == "first"


def test_structured_output_a_vendor_lacks_warns_once_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    model = PROTOCOLS[ApiProtocol.OPENAI_COMPLETIONS].model(
        compat=OpenAiCompat(supports_structured_output=False)
    )
    schema = OutputSchema(name="answer", schema={"type": "object"})
    body = build_request_body(stream_config(model, output_schema=schema))
    build_request_body(stream_config(model, output_schema=schema))
    assert "response_format" not in body
    assert [r.getMessage() for r in caplog.records] == [
        f"{model.provider} does not support structured output; the schema is not sent"
    ]
    reset_warn_once()
