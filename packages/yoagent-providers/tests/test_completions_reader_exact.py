"""The Chat Completions chunk reader pinned exactly: usage (OpenAI's and DeepSeek's cache
counts), how the reply ends, OpenRouter's reasoning details, finish reasons known and not,
and tool calls by index, by id, or by neither."""

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
from yoagent.core.support import reset_warn_once
from yoagent.providers._completions_stream import CompletionsReader
from yoagent.providers._http_errors import KeySource
from yoagent.providers._sse import SseEvent

MODEL = PROTOCOLS[ApiProtocol.OPENAI_COMPLETIONS].model()


def read_events(*events: dict[str, Any] | str) -> AssistantMessage:
    reader = CompletionsReader(stream_config(MODEL), lambda d: None, KeySource("", "KEY"))
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        if reader.on_event(SseEvent(event="message", data=data)):
            break
    return reader.finish()


def chunk(finish: object = None, **delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def call(
    index: int | None = None, id: str = "", name: str = "", arguments: str = ""
) -> dict[str, Any]:
    raw: dict[str, Any] = {"function": {}}
    if index is not None:
        raw["index"] = index
    if id:
        raw["id"] = id
    if name:
        raw["function"]["name"] = name
    if arguments:
        raw["function"]["arguments"] = arguments
    return raw


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {"prompt_tokens": 10, "prompt_cache_hit_tokens": 4, "completion_tokens": 2},
            Usage(input=6, output=2, cache_read=4),
        ),
        ({"prompt_tokens": 10}, Usage(input=10)),
        ({"completion_tokens": 2}, Usage(output=2)),
        ({"prompt_tokens": 3, "prompt_cache_hit_tokens": 5}, Usage(input=0, cache_read=5)),
        (None, Usage()),
    ],
)
def test_usage_with_deepseeks_cache_count_and_fields_missing(
    usage: dict[str, Any] | None, expected: Usage
) -> None:
    last = chunk("stop") if usage is None else {**chunk("stop"), "usage": usage}
    message = read_events(chunk(content="hi"), last)
    assert message.usage == expected
    assert (message.model, message.provider) == (MODEL.id, MODEL.provider)


def test_done_ends_the_reply_and_a_cut_says_so_word_for_word() -> None:
    message = read_events(chunk(content="hi"), "[DONE]")
    assert (message.content, message.stop_reason) == ([TextContent(text="hi")], StopReason.STOP)
    with pytest.raises(ProviderError) as caught:
        read_events(chunk(content="hi"))
    assert (caught.value.kind, caught.value.message) == (
        ErrorKind.NETWORK,
        "the stream ended early: the chat completions stream ended before finish_reason",
    )


def test_an_unparseable_chunk_warns(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    read_events("{broken", chunk("stop", content="x"))
    assert [r.getMessage() for r in caplog.records] == [
        "skipped an unparseable event in a chat completions stream"
    ]


def test_reasoning_details_text_and_summary_pieces_share_one_block() -> None:
    details = [
        [{"type": "reasoning.text", "text": "a"}],
        [{"type": "reasoning.summary", "summary": "b"}],
        [{"type": "reasoning.summary", "text": "c"}],
    ]
    message = read_events(
        *(chunk(reasoning_details=d) for d in details), chunk("stop", content="x")
    )
    assert message.content == [ThinkingContent(thinking="abc"), TextContent(text="x")]


def test_finish_reason_error_is_an_api_error() -> None:
    with pytest.raises(ProviderError) as caught:
        read_events(chunk("error", content="x"))
    assert (caught.value.kind, caught.value.message) == (
        ErrorKind.API,
        "the server ended the reply with an error",
    )


def test_a_finish_reason_that_is_not_text_is_no_finish() -> None:
    with pytest.raises(ProviderError) as caught:
        read_events(chunk(1, content="x"))
    assert caught.value.kind is ErrorKind.NETWORK


def test_each_unknown_finish_reason_warns_once_and_ends_the_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    assert read_events(chunk("weird", content="x")).stop_reason is StopReason.STOP
    assert read_events(chunk("weird", content="x")).stop_reason is StopReason.STOP
    assert read_events(chunk("odd", content="x")).stop_reason is StopReason.STOP
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("yoagent.providers", "unknown finish_reason 'weird'"),
        ("yoagent.providers", "unknown finish_reason 'odd'"),
    ]
    reset_warn_once()


def test_calls_without_index_are_told_apart_by_id_and_continued_without_one() -> None:
    # A known id continues its own call; no id continues the call opened last.
    message = read_events(
        chunk(tool_calls=[call(id="a", name="first", arguments='{"x"')]),
        chunk(tool_calls=[call(arguments=": ")]),
        chunk(tool_calls=[call(id="b", name="second", arguments='{"y": ')]),
        chunk(tool_calls=[call(id="a", arguments="1}")]),
        chunk(tool_calls=[call(arguments="2}")]),
        chunk("tool_calls"),
    )
    assert message.content == [
        ToolCall(id="a", name="first", arguments={"x": 1}),
        ToolCall(id="b", name="second", arguments={"y": 2}),
    ]


def test_a_call_without_index_or_id_is_the_first_indexed_one() -> None:
    message = read_events(
        chunk(tool_calls=[call(name="only", arguments='{"z":')]),
        chunk(tool_calls=[call(index=0, arguments=" 3}")]),
        chunk("tool_calls"),
    )
    # (a call without an id is given one by its position)
    assert message.content == [ToolCall(id="call_0", name="only", arguments={"z": 3})]


def test_a_calls_id_and_name_may_come_after_its_first_chunk() -> None:
    message = read_events(
        chunk(tool_calls=[call(index=0, arguments="{}")]),
        chunk(tool_calls=[call(index=0, id="late", name="named")]),
        chunk("tool_calls"),
    )
    assert message.content == [ToolCall(id="late", name="named", arguments={})]


def test_at_the_length_limit_the_last_call_is_dropped_even_when_whole() -> None:
    message = read_events(
        chunk(tool_calls=[call(index=0, id="a", name="first", arguments="{}")]),
        chunk(tool_calls=[call(index=1, id="b", name="second", arguments="{}")]),
        chunk("length"),
    )
    assert message.content == [ToolCall(id="a", name="first", arguments={})]
    assert message.stop_reason is StopReason.LENGTH
