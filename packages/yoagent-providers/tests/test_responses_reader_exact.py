"""The Responses event reader pinned exactly, event by event: usage, where each event is
routed (index, item id, neither), what each final copy fills in, refusals, and the
encrypted reasoning stored with the ids of the items that follow it."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from provider_helpers import PROTOCOLS, stream_config

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from yoagent.core.provider import StreamDelta
from yoagent.core.support import reset_warn_once
from yoagent.providers._http_errors import KeySource
from yoagent.providers._responses_stream import ResponsesReader
from yoagent.providers._sse import SseEvent

OPENAI = ApiProtocol.OPENAI_RESPONSES
MODEL = PROTOCOLS[OPENAI].model()
COMPLETED: dict[str, Any] = {"type": "response.completed", "response": {"status": "completed"}}


def reader(deltas: list[StreamDelta] | None = None) -> ResponsesReader:
    sink = (deltas if deltas is not None else []).append
    return ResponsesReader(stream_config(MODEL), sink, KeySource("", "OPENAI_API_KEY"), OPENAI)


def feed(target: ResponsesReader, *events: dict[str, Any] | str) -> list[bool]:
    out: list[bool] = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        out.append(target.on_event(SseEvent(event="message", data=data)))
    return out


def read(*events: dict[str, Any] | str) -> AssistantMessage:
    target = reader()
    feed(target, *events, COMPLETED)
    return target.finish()


def text(kind: str, delta: str, index: int | None = None, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": f"response.{kind}", "delta": delta, **extra}
    if index is not None:
        event["output_index"] = index
    return event


def added(index: int | None, **item: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "response.output_item.added", "item": item}
    if index is not None:
        event["output_index"] = index
    return event


def done(index: int | None, **item: Any) -> dict[str, Any]:
    event = added(index, **item)
    event["type"] = "response.output_item.done"
    return event


def stored(message: AssistantMessage) -> list[dict[str, Any]]:
    return [
        json.loads(block.redacted)
        for block in message.content
        if isinstance(block, ThinkingContent) and block.redacted is not None
    ]


# --- the end of the stream --------------------------------------------------------------


def test_usage_subtracts_cache_reads_and_writes_from_the_input() -> None:
    usage = {
        "input_tokens": 100,
        "output_tokens": 7,
        "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 20},
    }
    target = reader()
    assert feed(target, {"type": "response.completed", "response": {"usage": usage}}) == [True]
    message = target.finish()
    assert message.usage == Usage(input=50, output=7, cache_read=30, cache_write=20)
    assert (message.model, message.provider) == (MODEL.id, MODEL.provider)
    assert message.stop_reason is StopReason.STOP


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 5},
            },
            Usage(input=0, output=0, cache_read=8, cache_write=5),
        ),
        ({"output_tokens": 3}, Usage(output=3)),
        ({"input_tokens": 4}, Usage(input=4)),
        (None, Usage()),
    ],
)
def test_usage_fields_that_are_missing_count_zero_and_input_is_never_negative(
    usage: dict[str, Any] | None, expected: Usage
) -> None:
    response = {} if usage is None else {"usage": usage}
    message = read({"type": "response.created"}, {**COMPLETED, "response": response})
    assert message.usage == expected


@pytest.mark.parametrize(
    ("event", "stop"),
    [
        ({"type": "response.incomplete", "response": {}}, StopReason.LENGTH),
        ({"type": "response.completed", "response": {"status": "incomplete"}}, StopReason.LENGTH),
        ({"type": "response.completed", "response": {"status": "completed"}}, StopReason.STOP),
    ],
)
def test_an_incomplete_response_is_known_by_its_event_or_its_status(
    event: dict[str, Any], stop: StopReason
) -> None:
    target = reader()
    feed(target, text("output_text.delta", "hi", 0), event)
    assert target.finish().stop_reason is stop


def test_a_cut_stream_and_a_content_filter_say_so_word_for_word() -> None:
    target = reader()
    feed(target, text("output_text.delta", "hi", 0))
    with pytest.raises(ProviderError) as caught:
        target.finish()
    assert (caught.value.kind, caught.value.message) == (
        ErrorKind.NETWORK,
        "the stream ended early: the Responses stream ended before response.completed",
    )
    filtered = {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}}
    message = read({"type": "response.completed", "response": filtered})
    assert message.error_message == "the response was stopped by the content filter"


def test_a_failed_response_without_an_error_object_reads_the_event_itself() -> None:
    target = reader()
    with pytest.raises(ProviderError) as caught:
        feed(target, {"type": "response.failed", "response": {}, "message": "quota gone"})
    assert caught.value.message == "quota gone"


def test_unparseable_events_warn_except_done_and_unknown_ones_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="yoagent.providers")
    target = reader()
    assert feed(target, "[DONE]", {"type": "response.queued"}) == [False, False]
    assert caplog.records == []
    assert feed(target, "{broken", {"type": "response.weird"}) == [False, False]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "skipped an unparseable event in a Responses stream"),
        ("DEBUG", "unhandled Responses event 'response.weird'"),
    ]


# --- routing --------------------------------------------------------------------------


def test_the_final_copy_of_an_item_without_index_is_routed_by_its_items_id() -> None:
    message = read(
        added(None, id="msg_a", type="message"),
        added(None, id="msg_b", type="message"),
        done(None, id="msg_b", type="message", content=[{"type": "output_text", "text": "B"}]),
        done(None, id="msg_a", type="message", content=[{"type": "output_text", "text": "A"}]),
    )
    assert message.content == [TextContent(text="B"), TextContent(text="A")]


def test_items_routed_by_id_never_take_an_indexed_items_place() -> None:
    message = read(
        text("output_text.delta", "zero ", 0),
        text("output_text.delta", "one ", 1),
        text("output_text.delta", "by-id ", item_id="msg_x"),
        text("output_text.delta", "anonymous ", None),
        text("output_text.delta", "again", None),
        text("output_text.delta", "more", item_id="msg_x"),
    )
    assert message.content == [
        TextContent(text="zero "),
        TextContent(text="one "),
        TextContent(text="by-id more"),
        TextContent(text="anonymous again"),
    ]


def test_an_anonymous_event_never_joins_an_item_routed_by_id() -> None:
    message = read(
        text("output_text.delta", "zero", 0),
        text("output_text.delta", "by-id", item_id="msg_x"),
        text("output_text.delta", "anonymous", None),
    )
    assert message.content == [
        TextContent(text="zero"),
        TextContent(text="by-id"),
        TextContent(text="anonymous"),
    ]


def test_deltas_of_one_reasoning_item_without_index_share_its_block() -> None:
    message = read(
        text("reasoning_summary_text.delta", "a", item_id="rs_1", summary_index=0),
        text("reasoning_summary_text.delta", "b", item_id="rs_1", summary_index=0),
        text("reasoning_text.delta", "raw", item_id="rs_1"),
        text("reasoning_summary_text.delta", "c", item_id="rs_1", summary_index=1),
    )
    assert message.content == [ThinkingContent(thinking="ab\n\nc"), ThinkingContent(thinking="raw")]


# --- tool calls -------------------------------------------------------------------------


def test_a_call_takes_its_id_name_and_first_arguments_from_its_added_item() -> None:
    deltas: list[StreamDelta] = []
    target = reader(deltas)
    feed(
        target,
        added(0, type="function_call", id="fc_1", call_id="call_1", name="read", arguments='{"a":'),
        text("function_call_arguments.delta", " 1}", 0),
        done(0, type="function_call"),
        COMPLETED,
    )
    message = target.finish()
    assert message.content == [ToolCall(id="call_1", name="read", arguments={"a": 1})]
    assert (deltas[0].id, deltas[0].name) == ("call_1", "read")  # type: ignore[union-attr]


def test_a_call_takes_what_its_added_item_lacked_from_its_final_copy() -> None:
    message = read(
        added(0, type="function_call", id="fc_1"),
        text("function_call_arguments.delta", '{"stale": 1}', 0),
        done(0, type="function_call", call_id="call_9", name="write", arguments='{"b": 2}'),
    )
    assert message.content == [ToolCall(id="call_9", name="write", arguments={"b": 2})]


def test_arguments_done_is_authoritative_and_only_for_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    message = read(
        text("output_text.delta", "words", 0),
        added(1, type="function_call", id="fc_1", call_id="call_1", name="read"),
        text("function_call_arguments.delta", '{"wrong": true}', 1),
        {
            "type": "response.function_call_arguments.done",
            "output_index": 1,
            "arguments": '{"c": 3}',
        },
        text("function_call_arguments.delta", "ignored", 0),
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{}"},
        {"type": "response.function_call_arguments.done", "output_index": 7, "arguments": "{}"},
        done(1, type="function_call"),
    )
    assert message.content == [
        TextContent(text="words"),
        ToolCall(id="call_1", name="read", arguments={"c": 3}),
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "Responses: arguments for an unknown call dropped"
    ]
    reset_warn_once()


def test_a_call_with_only_streamed_arguments_keeps_them() -> None:
    message = read(
        added(0, type="function_call", id="fc_1", call_id="call_1", name="read"),
        text("function_call_arguments.delta", '{"d": ', 0),
        text("function_call_arguments.delta", "4}", 0),
        done(0, type="function_call"),
    )
    assert message.content == [ToolCall(id="call_1", name="read", arguments={"d": 4})]


# --- messages and refusals ---------------------------------------------------------------


def test_a_message_sent_only_whole_joins_its_text_parts() -> None:
    parts = [{"type": "output_text", "text": "one "}, {"type": "output_text", "text": "two"}]
    message = read(done(0, type="message", id="msg_1", content=parts))
    assert message.content == [TextContent(text="one two")]
    assert message.stop_reason is StopReason.STOP


def test_a_refusal_only_in_the_final_item_is_the_text() -> None:
    parts = [{"type": "refusal", "refusal": "No"}, {"type": "refusal", "refusal": " way."}]
    message = read(done(0, type="message", id="msg_1", content=parts))
    assert message.content == [TextContent(text="No way.")]
    assert message.error_message == "the model declined the request: No way."
    assert message.stop_reason is StopReason.REFUSAL


@pytest.mark.parametrize(
    "event",
    [
        {"type": "response.refusal.done", "output_index": 0, "refusal": "Not that."},
        {
            "type": "response.content_part.done",
            "output_index": 0,
            "part": {"type": "refusal", "refusal": "Not that."},
        },
    ],
)
def test_a_refusal_sent_only_whole_is_the_text(event: dict[str, Any]) -> None:
    message = read(event)
    assert message.content == [TextContent(text="Not that.")]
    assert message.error_message == "the model declined the request: Not that."


def test_refusal_deltas_alone_are_the_refusal_and_a_disagreeing_copy_keeps_them() -> None:
    message = read(
        text("refusal.delta", "I can", 0),
        text("refusal.delta", "not.", 0),
        {"type": "response.refusal.done", "output_index": 0, "refusal": "Something else"},
    )
    assert message.content == [TextContent(text="I cannot.")]
    assert message.error_message == "the model declined the request: I cannot."
    assert message.stop_reason is StopReason.REFUSAL


def test_two_refusals_are_paragraphs_and_an_empty_one_says_only_that_it_declined() -> None:
    message = read(
        {"type": "response.refusal.done", "output_index": 0, "refusal": "No."},
        {"type": "response.refusal.done", "output_index": 1, "refusal": "Still no."},
    )
    assert message.error_message == "the model declined the request: No.\n\nStill no."
    empty = {"type": "refusal", "refusal": ""}
    message = read({"type": "response.content_part.done", "output_index": 0, "part": empty})
    assert message.error_message == "the model declined the request"
    assert message.stop_reason is StopReason.REFUSAL


def test_a_text_part_done_is_not_a_refusal() -> None:
    part = {"type": "output_text", "text": "fine"}
    message = read(
        text("output_text.delta", "fine", 0),
        {"type": "response.content_part.done", "output_index": 0, "part": part},
    )
    assert (message.stop_reason, message.error_message) == (StopReason.STOP, None)


# --- reasoning ----------------------------------------------------------------------------


ENCRYPTED = "gAAAA-encrypted"


def reasoning_done(index: int, item_id: str = "rs_0", **extra: Any) -> dict[str, Any]:
    return done(index, type="reasoning", id=item_id, encrypted_content=ENCRYPTED, **extra)


def test_encrypted_reasoning_with_no_text_gets_a_block_of_its_own() -> None:
    message = read(
        reasoning_done(0, summary=[]), text("output_text.delta", "hi", 1, item_id="msg_1")
    )
    assert message.content[1] == TextContent(text="hi")
    (block,) = [b for b in message.content if isinstance(b, ThinkingContent)]
    assert block.thinking == ""
    assert json.loads(block.redacted or "") == {
        "id": "rs_0",
        "summary": [],
        "encrypted_content": ENCRYPTED,
        "call_ids": {},
        "message_id": "msg_1",
    }


def test_encrypted_reasoning_with_only_raw_text_is_stored_on_that_block() -> None:
    message = read(text("reasoning_text.delta", "thinking", 0, item_id="rs_0"), reasoning_done(0))
    assert len(message.content) == 1
    assert isinstance(message.content[0], ThinkingContent)
    assert message.content[0].thinking == "thinking"
    assert json.loads(message.content[0].redacted or "")["id"] == "rs_0"


def test_reasoning_without_an_id_is_not_stored() -> None:
    message = read(
        text("reasoning_summary_text.delta", "s", 0),
        done(0, type="reasoning", encrypted_content=ENCRYPTED),
    )
    assert stored(message) == []


def test_reasoning_made_by_its_deltas_is_stored_by_its_final_copy() -> None:
    message = read(
        text("reasoning_summary_text.delta", "s", 0, item_id="rs_0"),
        reasoning_done(0),
        text("output_text.delta", "t", 1),
        added(1, type="message", id="msg_late"),
    )
    assert stored(message)[0]["message_id"] == "msg_late"


def test_a_message_made_by_refusal_deltas_or_added_is_the_one_after_reasoning() -> None:
    for later in (
        [text("refusal.delta", "no", 1, item_id="msg_r")],
        [{"type": "response.refusal.done", "output_index": 1, "item_id": "msg_r", "refusal": "no"}],
        [added(1, type="message", id="msg_r"), text("output_text.delta", "x", 1)],
        [done(1, type="message", id="msg_r", content=[{"type": "output_text", "text": "x"}])],
        [
            text("output_text.delta", "x", 1),
            done(1, type="message", id="msg_r", content=[{"type": "output_text", "text": "x"}]),
        ],
    ):
        message = read(reasoning_done(0, summary=[]), *later)
        assert stored(message)[0]["message_id"] == "msg_r", later


def test_each_reasoning_item_stores_the_ids_of_the_items_up_to_the_next_one() -> None:
    message = read(
        text("output_text.delta", "before", 0, item_id="msg_before"),
        reasoning_done(1, "rs_1", summary=[{"type": "summary_text", "text": "one"}]),
        added(2, type="function_call", id="fc_2", call_id="call_2", name="a", arguments="{}"),
        done(2, type="function_call"),
        added(3, type="function_call", call_id="call_3", name="b", arguments="{}"),
        done(3, type="function_call"),
        added(4, type="message", id="msg_4"),
        text("output_text.delta", "x", 4),
        added(5, type="message", id="msg_5"),
        text("output_text.delta", "y", 5),
        reasoning_done(6, "rs_6", summary=[{"type": "summary_text", "text": "two"}]),
        added(7, type="function_call", id="fc_7", call_id="call_7", name="c", arguments="{}"),
        done(7, type="function_call"),
    )
    assert stored(message) == [
        {
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "one"}],
            "encrypted_content": ENCRYPTED,
            "call_ids": {"call_2": "fc_2"},
            "message_id": "msg_4",
        },
        {
            "id": "rs_6",
            "summary": [{"type": "summary_text", "text": "two"}],
            "encrypted_content": ENCRYPTED,
            "call_ids": {"call_7": "fc_7"},
            "message_id": "",
        },
    ]
