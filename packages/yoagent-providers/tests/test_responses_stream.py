"""Responses stream edge cases, hand-written: cuts, limits, refusals, routing, final copies."""

from __future__ import annotations

from typing import Any

import pytest
from provider_helpers import replay_as
from stream_fixtures import responses_completed, responses_sse, responses_text, responses_tool

from yoagent.core import (
    ApiProtocol,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
)

OPENAI = ApiProtocol.OPENAI_RESPONSES


def delta(kind: str, output_index: int | None, text: str, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "delta": text, **extra}
    if output_index is not None:
        event["output_index"] = output_index
    return event


@pytest.mark.parametrize("cut", [1, 3, 5, 8])
async def test_a_stream_cut_before_response_completed_is_a_network_error(cut: int) -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_as(OPENAI, responses_sse(responses_tool()[:cut]))
    assert caught.value.kind is ErrorKind.NETWORK
    assert "response.completed" in caught.value.message


async def test_at_the_token_limit_the_open_call_is_dropped_and_the_reply_is_length() -> None:
    events = responses_tool()[:6]  # the call has started, its arguments are unfinished
    events.append(
        responses_completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    )
    message, _, _ = await replay_as(OPENAI, responses_sse(events))
    assert message.stop_reason is StopReason.LENGTH
    assert message.tool_calls == []
    assert isinstance(message.content[0], ThinkingContent)


async def test_content_filter_and_refusals_are_refusals_with_their_text() -> None:
    filtered = [
        *responses_text()[:3],
        responses_completed(status="incomplete", incomplete_details={"reason": "content_filter"}),
    ]
    message, _, _ = await replay_as(OPENAI, responses_sse(filtered))
    assert message.stop_reason is StopReason.REFUSAL
    assert "content filter" in (message.error_message or "")

    refusal = [
        delta("response.refusal.delta", 0, "I can't "),
        delta("response.refusal.delta", 0, "help."),
        {"type": "response.refusal.done", "output_index": 0, "refusal": "I can't help."},
        {
            "type": "response.content_part.done",
            "output_index": 0,
            "part": {"type": "refusal", "refusal": "I can't help."},
        },
        responses_completed(),
    ]
    message, deltas, _ = await replay_as(OPENAI, responses_sse(refusal))
    assert message.stop_reason is StopReason.REFUSAL
    assert message.content == [TextContent(text="I can't help.")]  # not repeated
    assert message.error_message == "the model declined the request: I can't help."
    assert "".join(d.delta for d in deltas if d.type == "text_delta") == "I can't help."


async def test_items_without_output_index_are_routed_by_item_id() -> None:
    events = [
        {"type": "response.output_item.added", "item": {"id": "msg_a", "type": "message"}},
        {"type": "response.output_item.added", "item": {"id": "msg_b", "type": "message"}},
        delta("response.output_text.delta", None, "one ", item_id="msg_a"),
        delta("response.output_text.delta", None, "two", item_id="msg_b"),
        delta("response.output_text.delta", None, "more", item_id="msg_a"),
        responses_completed(),
    ]
    message, _, _ = await replay_as(OPENAI, responses_sse(events, event_lines=False))
    assert message.content == [TextContent(text="one more"), TextContent(text="two")]


async def test_final_copies_fill_in_what_was_not_streamed() -> None:
    message_item = {
        "id": "msg_1",
        "type": "message",
        "content": [{"type": "output_text", "text": "Only in the final copy."}],
    }
    call = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_9",
        "name": "read_file",
        "arguments": '{"path": "b"}',
    }
    reasoning = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "A"}, {"type": "summary_text", "text": "B"}],
    }
    events = [
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.done", "output_index": 1, "item": message_item},
        {"type": "response.output_item.done", "output_index": 2, "item": call},
        responses_completed(),
    ]
    message, _, _ = await replay_as(OPENAI, responses_sse(events))
    thinking, text, tool = message.content
    assert thinking == ThinkingContent(thinking="A\n\nB")
    assert text == TextContent(text="Only in the final copy.")
    assert (tool.id, tool.arguments) == ("call_9", {"path": "b"})  # type: ignore[union-attr]
    assert message.stop_reason is StopReason.TOOL_USE


async def test_summary_parts_are_paragraphs_and_raw_reasoning_its_own_block() -> None:
    events = [
        delta("response.reasoning_summary_text.delta", 0, "First.", summary_index=0),
        delta("response.reasoning_summary_text.delta", 0, "Second.", summary_index=1),
        delta("response.reasoning_text.delta", 0, "raw thoughts", content_index=0),
        *responses_text()[1:],
    ]
    events[3] = {**events[3], "output_index": 1}  # the message is the next item
    for event in events[4:-1]:
        event["output_index"] = 1
    message, _, _ = await replay_as(OPENAI, responses_sse(events))
    assert message.content == [
        ThinkingContent(thinking="First.\n\nSecond."),
        ThinkingContent(thinking="raw thoughts"),
        TextContent(text="Hello there!"),
    ]


async def test_a_failed_response_is_classified_like_an_http_error() -> None:
    failed = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": {"code": "rate_limit_exceeded", "message": "Slow down."},
        },
    }
    with pytest.raises(ProviderError) as caught:
        await replay_as(OPENAI, responses_sse([*responses_text()[:3], failed]))
    assert caught.value.kind is ErrorKind.RATE_LIMITED
    assert "Slow down." in caught.value.message
