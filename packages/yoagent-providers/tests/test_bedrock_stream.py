"""Bedrock ConverseStream replies: blocks, reasoning, exceptions, and where a stream may end."""

from __future__ import annotations

import base64
import gzip
import json
import logging
from collections.abc import Callable

import httpx
import pytest
import respx
from bedrock_fixtures import (
    EVENTSTREAM,
    FIXED_TIME,
    REPLY_TEXT,
    bedrock_config,
    body,
    delta,
    exception_frame,
    fixed_env,
    frame,
    reasoning,
    replay_bedrock,
    text_events,
    tool_events,
    usage_event,
)
from provider_helpers import Chunks, stream_config

from yoagent.core import (
    Agent,
    ApiProtocol,
    ErrorKind,
    ProviderError,
    RetryConfig,
    RunFailedError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from yoagent.providers import BedrockProvider
from yoagent.providers._eventstream import encode_frame


async def test_text_streams_as_deltas_and_usage_comes_from_metadata() -> None:
    events = text_events("Hel", "lo", "!")
    events[-1] = usage_event(12, 3, cacheReadInputTokens=100, cacheWriteInputTokens=7)
    message, deltas, route = await replay_bedrock(body(events))
    assert route.called
    assert message.content == [TextContent(text="Hello!")]
    assert message.stop_reason is StopReason.STOP
    assert [d.delta for d in deltas if d.type == "text_delta"] == ["Hel", "lo", "!"]
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (12, 3, 100, 7)


async def test_a_tool_call_is_runnable_only_after_its_block_stops() -> None:
    message, deltas, _ = await replay_bedrock(body(tool_events()))
    assert message.stop_reason is StopReason.TOOL_USE
    assert message.content[0] == TextContent(text="Reading.")
    call = message.content[1]
    assert isinstance(call, ToolCall)
    assert (call.id, call.name, call.arguments) == ("tooluse_1", "read_file", {"path": "a.txt"})
    assert "".join(d.delta for d in deltas if d.type == "tool_call_delta") == '{"path": "a.txt"}'


async def test_an_unclosed_tool_call_is_never_run() -> None:
    events = [e for e in tool_events() if e != ("contentBlockStop", {"contentBlockIndex": 1})]
    message, _, _ = await replay_bedrock(body(events))
    assert message.tool_calls == []
    assert message.stop_reason is StopReason.ERROR
    assert "read_file (was cut off)" in (message.error_message or "")


async def test_reasoning_keeps_its_signature_and_redacted_bytes_join_across_deltas() -> None:
    first, second = b"\x00secret-part-1", b"\xffpart-2"
    events = [
        ("messageStart", {"role": "assistant"}),
        reasoning(0, text="Let me "),
        reasoning(0, text="think."),
        reasoning(0, signature="sig-a"),
        reasoning(0, signature="sig-b"),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        reasoning(1, redactedContent=base64.b64encode(first).decode()),
        reasoning(1, redactedContent=base64.b64encode(second).decode()),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        delta(2, text="Done."),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "end_turn"}),
        usage_event(),
    ]
    message, deltas, _ = await replay_bedrock(body(events))
    thinking, redacted, text = message.content
    assert thinking == ThinkingContent(thinking="Let me think.", signature="sig-asig-b")
    assert isinstance(redacted, ThinkingContent)
    assert redacted.redacted == base64.b64encode(first + second).decode()
    assert redacted.redacted_protocol is ApiProtocol.BEDROCK_CONVERSE_STREAM
    assert text == TextContent(text="Done.")
    assert [d.delta for d in deltas if d.type == "thinking_delta"] == ["Let me ", "think."]


@pytest.mark.parametrize("start", [{}, {"somethingNewer": {"x": 1}}], ids=["empty", "unknown"])
async def test_an_empty_or_unknown_start_creates_no_block_so_the_first_delta_types_it(
    start: dict[str, object],
) -> None:
    events = [
        ("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        usage_event(),
    ]
    message, _, _ = await replay_bedrock(body(events))
    assert message.content == [TextContent(text="hi")]


async def test_server_tools_results_and_unknown_members_are_dropped_with_one_warning_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server_tool = {"toolUseId": "t1", "name": "nova_code_interpreter", "type": "server_tool_use"}
    events = [
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": server_tool}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolResult": {"toolUseId": "x"}}},
        ),
        delta(1, toolResult=[{"text": "7"}]),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "It is 7."}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"citation": {"title": "x"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"citation": {"title": "y"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"toolUse": {"input": "{}"}}}),
        ("brandNewEvent", {"x": 1}),
        ("messageStop", {"stopReason": "end_turn"}),
        usage_event(),
    ]
    with caplog.at_level(logging.WARNING):
        message, _, _ = await replay_bedrock(body(events))
    assert message.content == [TextContent(text="It is 7.")]
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 4  # server tool, toolResult, citation (once), orphan tool input


@pytest.mark.parametrize(
    ("name", "message", "kind"),
    [
        ("throttlingException", "Too many requests", ErrorKind.RATE_LIMITED),
        ("serviceUnavailableException", "try later", ErrorKind.RATE_LIMITED),
        ("internalServerException", "boom", ErrorKind.API),
        ("modelStreamErrorException", "model failed", ErrorKind.API),
        ("validationException", "Input is too long for the model.", ErrorKind.CONTEXT_OVERFLOW),
        ("validationException", "bad field", ErrorKind.API),
        ("somethingNewException", "?", ErrorKind.API),
    ],
)
async def test_exception_frames_are_classified_by_their_documented_status(
    name: str, message: str, kind: ErrorKind
) -> None:
    payload = body(text_events("partial")[:2]) + exception_frame(name, message)
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(payload)
    assert caught.value.kind is kind
    assert name in caught.value.message and message in caught.value.message


async def test_an_error_frame_carries_its_code_and_message() -> None:
    error = encode_frame(
        {":message-type": "error", ":error-code": "ThrottlingException", ":error-message": "slow"},
        b"",
    )
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(error)
    assert caught.value.kind is ErrorKind.RATE_LIMITED
    assert "slow" in caught.value.message


@pytest.mark.parametrize(
    "events",
    [[], text_events("a")[:3], [*text_events("a")[:-2], usage_event()]],
    ids=["empty body", "no messageStop", "metadata without messageStop"],
)
async def test_a_stream_without_message_stop_is_a_network_error(events: list) -> None:  # type: ignore[type-arg]
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(body(events))
    assert caught.value.kind is ErrorKind.NETWORK
    assert "messageStop" in caught.value.message


async def test_message_stop_without_metadata_keeps_the_reply_with_zero_usage_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        message, _, _ = await replay_bedrock(body(text_events("ok")[:-1]))
    assert message.text == "ok"
    assert message.usage.is_zero()
    assert any(getattr(r, "usage_missing", False) for r in caplog.records)


async def test_a_cut_after_message_stop_but_before_metadata_is_a_network_error() -> None:
    whole = body(text_events("ok"))
    last = frame(*usage_event())
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(whole[: len(whole) - len(last) + 20])
    assert caught.value.kind is ErrorKind.NETWORK
    assert "cut" in caught.value.message


@pytest.mark.parametrize(
    "tail",
    [b"\x00\x00\x01", b"garbage that is not a frame at all", frame("junk", {})[:-1] + b"\x00"],
    ids=["truncated frame", "garbage", "bad checksum"],
)
async def test_once_message_stop_and_metadata_arrived_a_broken_tail_keeps_the_reply(
    tail: bytes,
) -> None:
    whole = body(text_events("kept"))
    message, _, _ = await replay_bedrock([whole + tail])
    assert message.text == "kept"
    assert message.usage.input == 10


async def test_metadata_before_message_stop_also_completes_the_reply() -> None:
    events = text_events("x")
    events[-2], events[-1] = events[-1], events[-2]
    message, _, _ = await replay_bedrock(body(events) + b"trailing junk")
    assert message.text == "x" and message.usage.output == 5


async def test_a_corrupted_frame_is_an_other_error_naming_the_checksum() -> None:
    # issue 27: this was NETWORK, so the loop re-sent (and re-billed) the whole request. The
    # bytes arrived, over TLS, and were wrong: the spec's "checksum/malformed → Other".
    corrupted = bytearray(body(text_events("abc")))
    corrupted[40] ^= 0x01
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(bytes(corrupted))
    assert caught.value.kind is ErrorKind.OTHER
    assert "checksum mismatch" in caught.value.message


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], id="message checksum"),
        pytest.param(lambda b: bytes([b[0] ^ 0x10]) + b[1:], id="prelude checksum"),
    ],
)
async def test_a_checksum_error_ends_the_run_without_a_retry(
    damage: Callable[[bytes], bytes],
) -> None:
    config = bedrock_config()
    provider = BedrockProvider(config, env=fixed_env(), clock=lambda: FIXED_TIME)
    agent = Agent.from_provider(provider, config, retry=RetryConfig(initial_delay=0, jitter=0))
    async with provider, respx.mock(assert_all_called=True) as mock:
        route = mock.post(url__regex=r".*/converse-stream$").mock(
            return_value=httpx.Response(200, headers=EVENTSTREAM, content=damage(REPLY_TEXT))
        )
        with pytest.raises(RunFailedError) as caught:
            await agent.prompt("hi")
    assert route.call_count == 1
    assert caught.value.kind is ErrorKind.OTHER
    assert "checksum mismatch" in caught.value.message


async def test_a_body_that_ends_inside_a_frame_is_still_a_retried_network_error() -> None:
    config = bedrock_config()
    provider = BedrockProvider(config, env=fixed_env(), clock=lambda: FIXED_TIME)
    agent = Agent.from_provider(
        provider, config, retry=RetryConfig(max_retries=1, initial_delay=0, jitter=0)
    )
    async with provider, respx.mock(assert_all_called=True) as mock:
        route = mock.post(url__regex=r".*/converse-stream$").mock(
            side_effect=[
                httpx.Response(200, headers=EVENTSTREAM, content=REPLY_TEXT[:30]),
                httpx.Response(200, headers=EVENTSTREAM, content=REPLY_TEXT),
            ]
        )
        await agent.prompt("hi")
    assert route.call_count == 2
    assert agent.messages[-1].text == "ok"  # type: ignore[union-attr]


async def test_a_frame_whose_payload_is_not_json_is_skipped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = encode_frame({":event-type": "contentBlockDelta", ":message-type": "event"}, b"{nope")
    frames = [frame(name, payload) for name, payload in text_events("Hel", "lo")]
    with caplog.at_level(logging.WARNING):
        message, _, _ = await replay_bedrock(b"".join([*frames[:2], bad, *frames[2:]]))
    assert message.text == "Hello"
    assert any("unparseable 'contentBlockDelta'" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("max_tokens", StopReason.LENGTH),
        ("model_context_window_exceeded", StopReason.LENGTH),
        ("stop_sequence", StopReason.STOP),
        ("guardrail_intervened", StopReason.REFUSAL),
        ("content_filtered", StopReason.REFUSAL),
        ("malformed_model_output", StopReason.ERROR),
        ("never-heard-of-it", StopReason.STOP),
    ],
)
async def test_stop_reasons_map(stop: str, reason: StopReason) -> None:
    message, _, _ = await replay_bedrock(body(text_events("t", stop=stop)))
    assert message.stop_reason is reason
    if reason in (StopReason.REFUSAL, StopReason.ERROR):
        assert stop in (message.error_message or "")


async def test_an_http_error_body_is_classified_like_any_provider() -> None:
    error = json.dumps({"message": "The provided model identifier is invalid."}).encode()
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(error, status=400, headers={"content-type": "application/json"})
    assert caught.value.kind is ErrorKind.API
    assert caught.value.message == "The provided model identifier is invalid."
    with pytest.raises(ProviderError) as throttled:
        await replay_bedrock(b'{"message":"Too many"}', status=429)
    assert throttled.value.kind is ErrorKind.RATE_LIMITED


@pytest.mark.parametrize(
    "phrase",
    [
        "Signature expired: 20150830T123600Z is now earlier than 20150830T124100Z",
        "Signature not yet current: 20150830T123600Z is still later than 20150830T123100Z",
    ],
)
async def test_a_403_for_the_signing_time_says_to_check_the_clock(phrase: str) -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(json.dumps({"message": phrase}).encode(), status=403)
    assert caught.value.kind is ErrorKind.AUTH
    assert "check this machine's clock" in caught.value.message


async def test_a_clock_before_1970_is_refused_before_sending() -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(body(text_events("x")), clock=-5.0)
    assert caught.value.kind is ErrorKind.AUTH
    assert "1970" in caught.value.message


async def test_a_json_document_with_a_200_status_is_an_error_not_a_stream() -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(
            b'{"error": {"type": "overloaded_error", "message": "busy"}}',
            headers={"content-type": "application/json"},
        )
    assert caught.value.kind is ErrorKind.RATE_LIMITED


async def test_each_frame_split_at_every_byte_gives_the_same_reply() -> None:
    whole = body(tool_events())
    expected, _, _ = await replay_bedrock(whole)
    for cut in range(1, len(whole), 29):
        message, _, _ = await replay_bedrock([whole[:cut], whole[cut:]])
        assert message.content == expected.content, cut


async def test_the_model_and_provider_are_recorded_on_the_reply() -> None:
    config = stream_config(bedrock_config(provider="my-bedrock"))
    message, _, _ = await replay_bedrock(body(text_events("x")), config=config)
    assert (message.model, message.provider) == (config.model.id, "my-bedrock")


LONG_TEXT = "x" * 900 + " Input is too long for the model."


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (exception_frame("validationException", LONG_TEXT), 400),
        (
            encode_frame(
                {
                    ":message-type": "error",
                    ":error-code": "ValidationException",
                    ":error-message": LONG_TEXT,
                },
                b"",
            ),
            None,
        ),
    ],
    ids=["exception frame", "error frame"],
)
async def test_a_long_exception_is_classified_whole_then_cut(
    reply: bytes, status: int | None
) -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(reply)
    assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW
    assert caught.value.status == status
    assert len(caught.value.message) <= 501


async def test_a_callers_own_http_client_carries_the_request_and_stays_open() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers=EVENTSTREAM, stream=Chunks([body(text_events("own"))]))

    config = stream_config(bedrock_config())
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as own:
        provider = BedrockProvider(config.model, http_client=own, env=fixed_env(), clock=lambda: 0)
        async with provider:
            message = await provider.stream(config, lambda d: None)
        assert not own.is_closed
    assert message.text == "own"
    assert seen[0].url.path.endswith("/converse-stream")
    assert seen[0].headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=")


async def test_a_gzip_eventstream_is_decoded_like_a_plain_one() -> None:
    packed = gzip.compress(body(text_events("compressed")))
    message, _, route = await replay_bedrock(
        [packed[:25], packed[25:]], headers={"content-encoding": "gzip"}
    )
    assert message.text == "compressed"
    assert route.calls.last.request.headers["accept-encoding"] == "gzip, deflate"
