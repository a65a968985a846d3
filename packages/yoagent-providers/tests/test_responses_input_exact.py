"""The Responses request's ``input`` and body pinned where the request tests left gaps:
stored reasoning read back (ids, paired calls, message id), what is not sent and the
debug line saying so, tool outputs, turn notes, the wire cache per replay setting, the
prompt-cache key of a prompt that cannot be encoded, temperature and the schema warning."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

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
from yoagent.providers._messages import WireCache
from yoagent.providers._responses_request import (
    assistant_items,
    build_input,
    build_request_body,
)

OPENAI = ApiProtocol.OPENAI_RESPONSES
MODEL = PROTOCOLS[OPENAI].model()


def reply(*content: object) -> AssistantMessage:
    return AssistantMessage(content=list(content), stop_reason=StopReason.STOP)  # type: ignore[arg-type]


def reasoning(protocol: ApiProtocol | None = OPENAI, **stored: Any) -> ThinkingContent:
    data = {"id": "rs_1", "summary": [], "encrypted_content": "gAAA", **stored}
    return ThinkingContent(thinking="", redacted=json.dumps(data), redacted_protocol=protocol)


def items(message: AssistantMessage, replay: ApiProtocol | None = OPENAI) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    assistant_items(message, replay, out)
    return out


REASONING_ITEM = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}


def test_stored_reasoning_goes_back_with_its_message_and_call_ids() -> None:
    message = reply(
        reasoning(call_ids={"call_1": "fc_1", "call_2": 5, "call_3": ""}, message_id="msg_1"),
        TextContent(text=""),
        TextContent(text="one"),
        TextContent(text="two"),
        ToolCall(id="call_1", name="read", arguments={"path": "é"}),
        ToolCall(id="call_2", name="read", arguments={}),
    )
    assert items(message) == [
        REASONING_ITEM,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "one"}],
            "id": "msg_1",
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "two"}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path": "é"}',
            "id": "fc_1",
        },
        {"type": "function_call", "call_id": "call_2", "name": "read", "arguments": "{}"},
    ]


def test_reasoning_without_its_encrypted_content_or_from_no_protocol_is_not_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="yoagent.providers")
    after = ToolCall(id="call_1", name="read", arguments={})
    assert items(reply(ThinkingContent(thinking="plain"), after)) == items(reply(after))
    assert caplog.records == []
    unsent = [reasoning(encrypted_content=""), reasoning(protocol=None)]
    for block in unsent:
        assert items(reply(block, after), replay=OPENAI) == items(reply(after))
    assert items(reply(reasoning(protocol=None), after), replay=None) == items(reply(after))
    assert [r.getMessage() for r in caplog.records] == [
        "Responses: reasoning from elsewhere (or unreadable) not sent"
    ] * 3


def test_trailing_reasoning_is_dropped_with_a_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="yoagent.providers")
    assert items(reply(TextContent(text="x"), reasoning())) == [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "Responses: 1 trailing reasoning item(s) not sent"
    ]


def test_tool_outputs_are_lines_or_parts_with_images() -> None:
    texts = ToolResultMessage(
        tool_call_id="call_1",
        tool_name="read",
        content=[TextContent(text="one"), TextContent(text="two")],
    )
    with_image = ToolResultMessage(
        tool_call_id="call_2",
        tool_name="look",
        content=[TextContent(text="see"), ImageContent(data="aGk=", mime_type="image/png")],
    )
    assert build_input([texts, with_image], [], None) == [
        {"type": "function_call_output", "call_id": "call_1", "output": "one\ntwo"},
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": [
                {"type": "input_text", "text": "see"},
                {"type": "input_image", "image_url": "data:image/png;base64,aGk="},
            ],
        },
    ]


def test_an_empty_user_message_sends_nothing_and_notes_join_a_user_text() -> None:
    history = [UserMessage(content=[TextContent(text="")]), UserMessage.from_text("hi")]
    assert build_input(history, ["note"], None) == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "hi"},
                {"type": "input_text", "text": "note"},
            ],
        }
    ]


def test_the_wire_cache_is_used_and_kept_per_replay_setting() -> None:
    block = TextContent(text="first")
    history = [UserMessage(content=[block, TextContent(text="second")])]
    cache: WireCache[list[dict[str, Any]]] = WireCache()
    config = stream_config(MODEL, messages=history)

    def first_text(body_input: list[dict[str, Any]]) -> str:
        return body_input[0]["content"][0]["text"]

    assert first_text(build_request_body(config, OPENAI, cache)["input"]) == "first"
    block.text = "edited"  # unseen while the cache holds the message (the documented limit)
    assert first_text(build_request_body(config, OPENAI, cache)["input"]) == "first"
    assert first_text(build_input(history, [], OPENAI, cache)) == "edited"


def test_a_system_prompt_that_cannot_be_encoded_still_gets_a_cache_key() -> None:
    config = stream_config(MODEL, system_prompt="a\ud800")
    digest = hashlib.sha256(b"a?").hexdigest()
    assert build_request_body(config, OPENAI)["prompt_cache_key"] == f"yoagent-{digest[:32]}"


def test_temperature_is_sent_and_a_schema_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    assert build_request_body(stream_config(MODEL, temperature=0.3), OPENAI)["temperature"] == 0.3
    assert caplog.records == []
    schema = OutputSchema(name="answer", schema={"type": "object"})
    build_request_body(stream_config(MODEL, output_schema=schema), OPENAI)
    build_request_body(stream_config(MODEL, output_schema=schema), OPENAI)
    assert [r.getMessage() for r in caplog.records] == [
        "structured output is not sent over openai_responses; the schema is ignored"
    ]
    reset_warn_once()
