"""Chat Completions stream reading, on hand-written streams (every corpus case and more)."""

from __future__ import annotations

import pytest
from provider_helpers import replay
from stream_fixtures import chunk, openai_sse, openai_text, openai_tool, usage_chunk

from yoagent.core import (
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    TextDelta,
    ThinkingContent,
    ToolCall,
    Usage,
)


async def test_text_reply_and_usage_with_cached_tokens() -> None:
    chunks = openai_text("Hello there!")
    chunks[-1] = usage_chunk(prompt=120, completion=9, cached=100)
    message, deltas, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.content == [TextContent(text="Hello there!")]
    assert message.stop_reason is StopReason.STOP
    assert message.usage == Usage(input=20, output=9, cache_read=100)
    assert deltas == [
        TextDelta(content_index=0, delta="Hello"),
        TextDelta(content_index=0, delta=" there!"),
    ]


async def test_parallel_tool_calls_are_assembled_by_index() -> None:
    chunks = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": ""},
                    },
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q'},
                    },
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "x"}'}}]}),
        # Mistral repeats the call with an empty name; it must not erase the real one.
        chunk(
            {
                "tool_calls": [
                    {"index": 1, "type": "function", "function": {"name": "", "arguments": '": 1}'}}
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.content == [
        ToolCall(id="call_a", name="read_file", arguments={"path": "x"}),
        ToolCall(id="call_b", name="search", arguments={"q": 1}),
    ]
    assert message.stop_reason is StopReason.TOOL_USE


async def test_tool_call_indexes_need_not_start_at_zero() -> None:
    chunks = openai_tool()
    for c in chunks:
        for choice in c["choices"]:
            for call in choice["delta"].get("tool_calls", []):
                call["index"] = 1
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.tool_calls == [
        ToolCall(id="call_1", name="read_file", arguments={"path": "a.txt"})
    ]


async def test_truncated_arguments_at_length_are_dropped_earlier_calls_kept() -> None:
    chunks = [
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_a", "function": {"name": "a", "arguments": "{}"}}
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "function": {"name": "b", "arguments": '{"x": "abc'},
                    }
                ]
            }
        ),
        chunk({}, "length"),
    ]
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.tool_calls == [ToolCall(id="call_a", name="a", arguments={})]
    assert message.stop_reason is StopReason.LENGTH


async def test_invalid_arguments_are_never_run_on_an_empty_object() -> None:
    message, _, _ = await replay(openai_sse(openai_tool(args='{"path": "a.txt"')), anthropic=False)
    assert message.tool_calls == []
    assert message.stop_reason is StopReason.ERROR
    assert message.error_message is not None and "read_file" in message.error_message
    assert message.text == "Reading it."


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_fields_become_thinking(field: str) -> None:
    chunks = [chunk({field: "Think "}), chunk({field: "hard."}), *openai_text("Answer")]
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.content == [ThinkingContent(thinking="Think hard."), TextContent(text="Answer")]


async def test_reasoning_details_become_thinking_with_signature() -> None:
    chunks = [
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "Step one.", "index": 0}]}),
        chunk(
            {
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "", "signature": "sig", "index": 0}
                ]
            }
        ),
        *openai_text("Answer"),
    ]
    message, _, _ = await replay(openai_sse(chunks, comments=True), anthropic=False)
    assert message.content == [
        ThinkingContent(thinking="Step one.", signature="sig"),
        TextContent(text="Answer"),
    ]


async def test_refusal_delta_is_a_refusal_with_its_text() -> None:
    chunks = [
        chunk({"refusal": "I can't "}),
        chunk({"refusal": "help with that."}),
        chunk({}, "stop"),
    ]
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.stop_reason is StopReason.REFUSAL
    assert message.text == "I can't help with that."


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("stop", StopReason.STOP),
        ("length", StopReason.LENGTH),
        ("content_filter", StopReason.REFUSAL),
    ],
)
async def test_finish_reasons_map(finish: str, stop: StopReason) -> None:
    chunks = openai_text()
    chunks[3] = chunk({}, finish)
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.stop_reason is stop


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (
            {"message": "Rate limit reached", "type": "tokens", "code": "rate_limit_exceeded"},
            ErrorKind.RATE_LIMITED,
        ),
        ({"code": 503, "message": "no healthy upstream"}, ErrorKind.RATE_LIMITED),
        (
            {"message": "This model's maximum context length is 8192 tokens"},
            ErrorKind.CONTEXT_OVERFLOW,
        ),
        (
            {
                "message": "Tool call validation failed",
                "type": "invalid_request_error",
                "code": "tool_use_failed",
            },
            ErrorKind.API,
        ),
    ],
)
async def test_in_band_error_objects_are_classified(
    error: dict[str, object], kind: ErrorKind
) -> None:
    chunks = [*openai_text()[:2], {"error": error}]
    with pytest.raises(ProviderError) as caught:
        await replay(openai_sse(chunks, done=False), anthropic=False)
    assert caught.value.kind is kind


async def test_stream_without_done_is_complete_once_finished() -> None:
    message, _, _ = await replay(openai_sse(openai_text(), done=False), anthropic=False)
    assert message.text == "Hello there!"
    assert message.usage.output == 7


async def test_stream_ending_before_any_finish_reason_is_a_network_error() -> None:
    with pytest.raises(ProviderError) as caught:
        await replay(openai_sse(openai_text()[:2], done=False), anthropic=False)
    assert caught.value.kind is ErrorKind.NETWORK


async def test_body_cut_mid_event_is_a_network_error() -> None:
    body = openai_sse(openai_text()[:3], done=False)[:-30]
    with pytest.raises(ProviderError) as caught:
        await replay(body, anthropic=False)
    assert caught.value.kind is ErrorKind.NETWORK


async def test_only_the_first_choice_is_read() -> None:
    chunks = openai_text("Mine")
    other = chunk({"content": "Not mine"})
    other["choices"][0]["index"] = 1
    chunks.insert(2, other)
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.text == "Mine"


async def test_call_without_id_gets_one_and_stop_finish_with_calls_is_tool_use() -> None:
    chunks = [
        chunk({"tool_calls": [{"function": {"name": "now", "arguments": "{}"}}]}),
        chunk({}, "stop"),
    ]
    message, _, _ = await replay(openai_sse(chunks), anthropic=False)
    assert message.tool_calls == [ToolCall(id="call_0", name="now", arguments={})]
    assert message.stop_reason is StopReason.TOOL_USE


async def test_crlf_and_multiline_data_are_read() -> None:
    body = (
        b'data: {"choices": [{"index": 0,\r\n'
        b'data: "delta": {"content": "Hi"}, "finish_reason": "stop"}]}\r\n\r\n'
        b"data: [DONE]\r\n\r\n"
    )
    message, _, _ = await replay(body, anthropic=False)
    assert message.text == "Hi"
