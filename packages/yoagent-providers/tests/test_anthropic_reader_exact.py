"""The Anthropic reply reader word for word: what a block's start already holds, a restarted
message and a repeated one, the event name used when the data has no type, the deltas and
blocks and stop reasons it ignores (each warned once), refusals' explanations, and the
forced structured-output tool turned into text."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from provider_helpers import anthropic_config, stream_config
from stream_fixtures import (
    MESSAGE_STOP,
    PING,
    block_start,
    block_stop,
    delta,
    json_delta,
    message_delta,
    message_start,
    text_delta,
)

from yoagent.core import (
    AnthropicCompat,
    AssistantMessage,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from yoagent.core.provider import OutputSchema, StreamConfig
from yoagent.core.support import reset_warn_once
from yoagent.providers._anthropic_stream import AnthropicReader
from yoagent.providers._http_errors import KeySource
from yoagent.providers._sse import SseEvent

KEY = KeySource(origin="", hint="")


def read(
    *events: dict[str, Any] | SseEvent, config: StreamConfig | None = None
) -> AssistantMessage:
    reader = AnthropicReader(config or stream_config(anthropic_config()), lambda _: None, KEY)
    for event in events:
        if isinstance(event, dict):
            event = SseEvent(event=str(event.get("type", "")), data=json.dumps(event))
        if reader.on_event(event):
            break
    return reader.finish()


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.fixture(autouse=True)
def _fresh_warnings() -> None:
    reset_warn_once(logging.getLogger("yoagent.providers"))


def test_what_a_block_start_already_holds_begins_the_block() -> None:
    reply = read(
        message_start(),
        block_start(0, {"type": "thinking", "thinking": "first ", "signature": "sig-0"}),
        delta(0, {"type": "thinking_delta", "thinking": "thought"}),
        delta(0, {"type": "signature_delta", "signature": "-1"}),
        block_start(1, {"type": "text", "text": "Hello "}),
        text_delta(1, "there"),
        block_start(2, {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"p": "a"}}),
        block_stop(2),
        message_delta("tool_use"),
        MESSAGE_STOP,
    )
    assert reply.content == [
        ThinkingContent(thinking="first thought", signature="sig-0-1"),
        TextContent(text="Hello there"),
        ToolCall(id="toolu_1", name="read", arguments={"p": "a"}),
    ]


def test_a_restarted_message_drops_what_came_before_and_a_repeated_one_does_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        repeated = read(
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            text_delta(0, "kept"),
            message_start(id="msg_1"),
            block_start(1, {"type": "text", "text": ""}),
            text_delta(1, " too"),
            message_delta("end_turn"),
            MESSAGE_STOP,
        )
        assert repeated.text == "kept too"
        assert warnings(caplog) == []
        restarted = read(
            message_start({"input_tokens": 50, "cache_read_input_tokens": 7}),
            block_start(0, {"type": "text", "text": ""}),
            text_delta(0, "dropped"),
            message_start({"input_tokens": 3}, id="msg_2"),
            block_start(0, {"type": "text", "text": ""}),
            text_delta(0, "fresh"),
            message_delta("end_turn", {"output_tokens": 2}),
            MESSAGE_STOP,
        )
    assert restarted.text == "fresh"
    assert restarted.usage == Usage(input=3, output=2)
    assert warnings(caplog) == ["Anthropic stream restarted its message; earlier blocks dropped"]


def test_blocks_before_the_first_message_start_are_kept() -> None:
    reply = read(
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "early"),
        message_start(),
        message_delta("end_turn"),
        MESSAGE_STOP,
    )
    assert reply.text == "early"


def test_the_data_type_wins_and_the_event_name_stands_in_when_there_is_none() -> None:
    untyped = {"index": 0, "delta": {"type": "text_delta", "text": " named"}}
    reply = read(
        message_start(),
        SseEvent(event="message", data=json.dumps(block_start(0, {"type": "text", "text": "a"}))),
        SseEvent(event="content_block_delta", data=json.dumps(untyped)),
        message_delta("end_turn"),
        MESSAGE_STOP,
    )
    assert reply.text == "a named"


def test_unparseable_events_are_warned_but_a_done_terminator_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        reply = read(
            message_start(),
            SseEvent(event="content_block_delta", data="{broken"),
            SseEvent(event="message", data=" [DONE] "),
            message_delta("end_turn"),
            MESSAGE_STOP,
        )
    assert reply.stop_reason is StopReason.STOP
    assert warnings(caplog) == [
        "skipped an unparseable 'content_block_delta' event in an Anthropic stream"
    ]


def test_message_stop_alone_ends_the_reply_and_without_it_or_a_stop_reason_it_is_cut() -> None:
    reply = read(message_start(), block_start(0, {"type": "text", "text": "x"}), MESSAGE_STOP)
    assert (reply.text, reply.stop_reason) == ("x", StopReason.STOP)
    with pytest.raises(ProviderError) as caught:
        read(message_start(), block_start(0, {"type": "text", "text": "x"}))
    assert caught.value.kind is ErrorKind.NETWORK
    assert caught.value.message == (
        "the stream ended early: the Anthropic stream ended before message_stop"
    )


def test_a_block_start_without_an_index_is_malformed() -> None:
    with pytest.raises(ProviderError) as caught:
        read(message_start(), {"type": "content_block_start", "content_block": {"type": "text"}})
    assert caught.value.kind is ErrorKind.API
    assert caught.value.message == "malformed stream: content_block_start without an index"


def test_a_reused_index_for_a_block_the_reply_does_not_hold_stops_feeding_the_old_one() -> None:
    reply = read(
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "old"),
        block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}),
        text_delta(0, " lost"),
        message_delta("end_turn"),
        MESSAGE_STOP,
    )
    assert reply.text == "old"


def test_unknown_events_blocks_deltas_and_stop_reasons_are_warned_once_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        reply = read(
            message_start(),
            PING,
            {"type": "yoagent_test_event_a"},
            {"type": "yoagent_test_event_b"},
            {"type": "yoagent_test_event_a"},
            block_start(0, {"type": "yoagent_test_block_a"}),
            block_start(1, {"type": "yoagent_test_block_b"}),
            block_start(2, {"type": "yoagent_test_block_a"}),
            block_start(3, {"type": "text", "text": "t"}),
            delta(3, {"type": "citations_delta", "citation": {}}),
            delta(3, {"type": "signature_delta", "signature": "s"}),
            json_delta(3, '{"a": 1}'),
            delta(3, {"type": "yoagent_test_delta"}),
            delta(3, {"type": "yoagent_test_delta"}),
            block_start(4, {"type": "thinking", "thinking": ""}),
            delta(4, {"type": "yoagent_test_delta"}),
            message_delta("yoagent_test_stop_a"),
            message_delta("yoagent_test_stop_b"),
            message_delta("yoagent_test_stop_a"),
        )
    assert reply.content == [TextContent(text="t")]
    assert reply.stop_reason is StopReason.STOP
    assert warnings(caplog) == [
        "ignored unknown Anthropic event type 'yoagent_test_event_a'",
        "ignored unknown Anthropic event type 'yoagent_test_event_b'",
        "ignored unknown Anthropic block type 'yoagent_test_block_a'",
        "ignored unknown Anthropic block type 'yoagent_test_block_b'",
        "ignored Anthropic delta 'signature_delta' on a text block",
        "ignored Anthropic delta 'input_json_delta' on a text block",
        "ignored Anthropic delta 'yoagent_test_delta' on a text block",
        "ignored Anthropic delta 'yoagent_test_delta' on a thinking block",
        "unknown Anthropic stop reason 'yoagent_test_stop_a'",
        "unknown Anthropic stop reason 'yoagent_test_stop_b'",
    ]


def test_only_a_refusal_carries_its_explanation_and_only_a_text_one() -> None:
    def stopped(stop: str, explanation: object) -> AssistantMessage:
        details = {"stop_details": {"explanation": explanation}}
        return read(message_start(), message_delta(stop, **details), MESSAGE_STOP)

    assert stopped("refusal", "not allowed").error_message == "not allowed"
    assert stopped("end_turn", "not a refusal").error_message is None
    assert stopped("refusal", 5).error_message is None


def forced(*events: dict[str, Any]) -> AssistantMessage:
    schema = OutputSchema(name="answer", schema={"type": "object"})
    model = anthropic_config(compat=AnthropicCompat(native_structured_output=False))
    return read(*events, config=stream_config(model, output_schema=schema))


def test_the_forced_tool_becomes_unescaped_json_text_and_other_calls_keep_tool_use() -> None:
    answer = {"type": "tool_use", "id": "toolu_a", "name": "answer", "input": {"v": "é"}}
    other = {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"p": "a"}}
    alone = forced(
        message_start(), block_start(0, answer), block_stop(0), message_delta("tool_use")
    )
    assert alone.content == [TextContent(text='{"v": "é"}')]
    assert alone.stop_reason is StopReason.STOP
    both = forced(
        message_start(),
        block_start(0, answer),
        block_stop(0),
        block_start(1, other),
        block_stop(1),
        message_delta("tool_use"),
    )
    assert both.content == [
        TextContent(text='{"v": "é"}'),
        ToolCall(id="toolu_b", name="read", arguments={"p": "a"}),
    ]
    assert both.stop_reason is StopReason.TOOL_USE
