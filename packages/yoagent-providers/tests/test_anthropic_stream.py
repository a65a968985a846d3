"""Anthropic stream reading, on hand-written streams (every case of the corpus and more)."""

from __future__ import annotations

import logging
import uuid

import pytest
from provider_helpers import anthropic_config, replay, stream_config
from stream_fixtures import (
    MESSAGE_STOP,
    PING,
    anthropic_sse,
    anthropic_text,
    anthropic_tool,
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
    ApiProtocol,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    TextDelta,
    ThinkingContent,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from yoagent.core.provider import OutputSchema


async def test_text_reply_with_padding_crlf_and_pings() -> None:
    body = anthropic_sse(anthropic_text("Hello there!"), crlf=True, pad=True)
    message, deltas, _ = await replay(body, anthropic=True)
    assert message.content == [TextContent(text="Hello there!")]
    assert message.stop_reason is StopReason.STOP
    assert message.usage == Usage(input=10, output=5)
    assert deltas == [
        TextDelta(content_index=0, delta="Hello"),
        TextDelta(content_index=0, delta=" there!"),
    ]
    assert (message.model, message.provider) == ("claude-test", "anthropic")


async def test_thinking_keeps_text_and_joined_signature() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "thinking", "thinking": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "Let me "}),
        delta(0, {"type": "thinking_delta", "thinking": "think."}),
        delta(0, {"type": "signature_delta", "signature": "sig-a"}),
        delta(0, {"type": "signature_delta", "signature": "sig-b"}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        text_delta(1, "Done."),
        block_stop(1),
        message_delta("end_turn"),
        MESSAGE_STOP,
    ]
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.content == [
        ThinkingContent(thinking="Let me think.", signature="sig-asig-b"),
        TextContent(text="Done."),
    ]


async def test_redacted_thinking_is_kept_in_place_for_anthropic() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "redacted_thinking", "data": "ENCRYPTED=="}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        text_delta(1, "Answer."),
        block_stop(1),
        message_delta("end_turn"),
        MESSAGE_STOP,
    ]
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    first = message.content[0]
    assert isinstance(first, ThinkingContent)
    assert first.redacted_for(ApiProtocol.ANTHROPIC_MESSAGES) == "ENCRYPTED=="
    assert first.redacted_for(ApiProtocol.OPENAI_COMPLETIONS) is None
    assert message.content[1] == TextContent(text="Answer.")


async def test_tool_use_arguments_assembled_from_json_deltas() -> None:
    message, deltas, _ = await replay(anthropic_sse(anthropic_tool()), anthropic=True)
    assert message.content == [
        TextContent(text="Reading it."),
        ToolCall(id="toolu_1", name="read_file", arguments={"path": "a.txt"}),
    ]
    assert message.stop_reason is StopReason.TOOL_USE
    tool_deltas = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert "".join(d.delta for d in tool_deltas) == '{"path": "a.txt"}'
    assert {d.content_index for d in tool_deltas} == {1}


async def test_parallel_tool_calls_without_arguments_get_empty_objects() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "tool_use", "id": "toolu_a", "name": "list_files", "input": {}}),
        json_delta(0, ""),
        block_stop(0),
        block_start(1, {"type": "tool_use", "id": "toolu_b", "name": "now", "input": {}}),
        block_stop(1),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.tool_calls == [
        ToolCall(id="toolu_a", name="list_files", arguments={}),
        ToolCall(id="toolu_b", name="now", arguments={}),
    ]


async def test_unclosed_tool_block_at_max_tokens_is_never_run() -> None:
    events = anthropic_tool(args='{"path": "a.txt"}')
    events = [e for e in events if e != block_stop(1) and e["type"] != "message_delta"]
    events.insert(-1, message_delta("max_tokens"))
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.tool_calls == []
    assert message.content == [TextContent(text="Reading it.")]
    assert message.stop_reason is StopReason.LENGTH


async def test_closed_tool_block_with_broken_json_makes_the_reply_an_error() -> None:
    message, _, _ = await replay(anthropic_sse(anthropic_tool(args='{"path": ')), anthropic=True)
    assert message.tool_calls == []
    assert message.stop_reason is StopReason.ERROR
    assert message.error_message is not None and "read_file" in message.error_message


@pytest.mark.parametrize(
    ("wire", "stop"),
    [
        ("end_turn", StopReason.STOP),
        ("stop_sequence", StopReason.STOP),
        ("pause_turn", StopReason.STOP),
        ("max_tokens", StopReason.LENGTH),
        ("model_context_window_exceeded", StopReason.LENGTH),
        ("refusal", StopReason.REFUSAL),
    ],
)
async def test_stop_reasons_map(wire: str, stop: StopReason) -> None:
    message, _, _ = await replay(anthropic_sse(anthropic_text(stop=wire)), anthropic=True)
    assert message.stop_reason is stop


async def test_unsurfaced_blocks_leave_no_placeholder_and_unknown_types_warn_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    novel = f"block_{uuid.uuid4().hex}"  # warn-once is per process: use a never-seen name
    events = [
        message_start(),
        block_start(
            0, {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}
        ),
        json_delta(0, '{"query": "x"}'),
        block_stop(0),
        block_start(1, {"type": novel, "stuff": 1}),
        delta(1, {"type": "brand_new_delta", "x": 1}),
        block_stop(1),
        block_start(2, {"type": "text", "text": ""}),
        text_delta(2, "After."),
        delta(2, {"type": "citations_delta", "citation": {}}),
        block_stop(2),
        block_start(3, {"type": novel}),
        block_stop(3),
        message_delta("end_turn"),
        MESSAGE_STOP,
    ]
    with caplog.at_level(logging.WARNING, logger="yoagent.providers"):
        message, deltas, _ = await replay(anthropic_sse(events), anthropic=True)
        await replay(anthropic_sse(events), anthropic=True)
    assert message.content == [TextContent(text="After.")]
    assert deltas == [TextDelta(content_index=0, delta="After.")]
    warnings = [r.getMessage() for r in caplog.records if novel in r.getMessage()]
    assert len(warnings) == 1


async def test_refusal_carries_the_explanation() -> None:
    events = [
        message_start(),
        message_delta(
            "refusal",
            stop_details={"type": "refusal", "category": "cyber", "explanation": "Blocked."},
        ),
        MESSAGE_STOP,
    ]
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.stop_reason is StopReason.REFUSAL
    assert message.content == []
    assert message.error_message == "Blocked."


async def test_usage_from_message_delta_and_cache_fields() -> None:
    events = anthropic_text()
    events[0] = message_start(
        {
            "input_tokens": 3,
            "output_tokens": 1,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 50,
        }
    )
    events[-2] = message_delta("end_turn", {"input_tokens": 7, "output_tokens": 42})
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.usage == Usage(input=7, output=42, cache_read=100, cache_write=50)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"type": "overloaded_error", "message": "Overloaded"}, ErrorKind.RATE_LIMITED),
        ({"type": "rate_limit_error", "message": "slow down"}, ErrorKind.RATE_LIMITED),
        (
            {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens"},
            ErrorKind.CONTEXT_OVERFLOW,
        ),
        ({"type": "api_error", "message": "Internal server error"}, ErrorKind.API),
    ],
)
async def test_mid_stream_error_events_are_classified(
    error: dict[str, str], kind: ErrorKind
) -> None:
    events = [*anthropic_text()[:4], {"type": "error", "error": error}]
    with pytest.raises(ProviderError) as caught:
        await replay(anthropic_sse(events), anthropic=True)
    assert caught.value.kind is kind
    assert error["message"] in caught.value.message


async def test_body_cut_mid_event_is_a_network_error() -> None:
    body = anthropic_sse(anthropic_text())
    cut = body[: body.index(b"content_block_stop") + 20]
    with pytest.raises(ProviderError) as caught:
        await replay(cut, anthropic=True)
    assert caught.value.kind is ErrorKind.NETWORK


async def test_body_ending_between_events_before_the_end_is_a_network_error() -> None:
    with pytest.raises(ProviderError) as caught:
        await replay(anthropic_sse(anthropic_text()[:5]), anthropic=True)
    assert caught.value.kind is ErrorKind.NETWORK


async def test_body_cut_after_the_final_message_delta_keeps_the_reply() -> None:
    body = anthropic_sse(anthropic_text()[:-1]) + b'event: message_stop\ndata: {"ty'
    message, _, _ = await replay(body, anthropic=True)
    assert message.text == "Hello there!"


async def test_restarted_message_drops_the_abandoned_blocks() -> None:
    events = [
        message_start(id="msg_first"),
        block_start(0, {"type": "tool_use", "id": "toolu_first", "name": "t", "input": {}}),
        json_delta(0, '{"v": "Spa'),
        message_start(id="msg_second"),
        block_start(0, {"type": "tool_use", "id": "toolu_second", "name": "t", "input": {}}),
        json_delta(0, '{"v": "Sparkle"}'),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.content == [ToolCall(id="toolu_second", name="t", arguments={"v": "Sparkle"})]


async def test_duplicate_message_start_is_harmless() -> None:
    events = anthropic_text()
    events.insert(1, message_start())
    message, _, _ = await replay(anthropic_sse(events), anthropic=True)
    assert message.text == "Hello there!"


async def test_forced_structured_output_tool_becomes_json_text() -> None:
    schema = OutputSchema(name="answer", schema={"type": "object"})
    model = anthropic_config(compat=AnthropicCompat(native_structured_output=False))
    events = anthropic_tool(name="answer", args='{"value": 42}')
    message, _, _ = await replay(
        anthropic_sse(events),
        anthropic=True,
        config=stream_config(model, output_schema=schema),
    )
    assert message.content == [TextContent(text="Reading it."), TextContent(text='{"value": 42}')]
    assert message.stop_reason is StopReason.STOP


async def test_comment_lines_and_unknown_events_are_ignored() -> None:
    body = b": keepalive\n\n" + anthropic_sse(
        [*anthropic_text()[:2], {"type": "shiny_new_event"}, PING, *anthropic_text()[2:]]
    )
    message, _, _ = await replay(body, anthropic=True)
    assert message.text == "Hello there!"
