"""Issue 10's provider defects, one test each, for all seven protocols: oversized and
compressed streams (10.6), deeply nested JSON (10.13), undecodable text in the history
(10.3)."""

from __future__ import annotations

import gzip
import tracemalloc
from typing import Any

import httpx
import pytest
import respx
from bedrock_fixtures import frame
from bedrock_fixtures import text_events as bedrock_text
from provider_helpers import PROTOCOLS, Chunks, replay_as, stream_config
from stream_fixtures import (
    anthropic_sse,
    anthropic_text,
    gemini_sse,
    gemini_text,
    openai_sse,
    openai_text,
    responses_sse,
    responses_text,
)

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.providers import StreamLimits
from yoagent.providers._eventstream import encode_frame

PARAMS = [pytest.param(api, id=api.value) for api in PROTOCOLS]
BEDROCK = ApiProtocol.BEDROCK_CONVERSE_STREAM


def text_events(api: ApiProtocol, text: str = "Hello there!") -> list[bytes]:
    """One ordinary text reply of ``api``, as separate SSE events or eventstream frames."""
    if api is BEDROCK:
        return [frame(name, payload) for name, payload in bedrock_text(text)]
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        body = anthropic_sse(anthropic_text(text))
    elif api is ApiProtocol.OPENAI_COMPLETIONS:
        body = openai_sse(openai_text(text))
    elif api in (ApiProtocol.OPENAI_RESPONSES, ApiProtocol.AZURE_OPENAI_RESPONSES):
        body = responses_sse(responses_text(text))
    else:
        body = gemini_sse(gemini_text(text), crlf=False)
    return [event + b"\n\n" for event in body.split(b"\n\n") if event]


async def stream_with(api: ApiProtocol, response: httpx.Response, **provider: Any) -> Any:
    protocol = PROTOCOLS[api]
    config = stream_config(protocol.model())
    async with protocol.provider(config.model, **provider) as instance, respx.mock() as mock:
        mock.post(protocol.url()).mock(return_value=response)
        return await instance.stream(config, lambda d: None)  # type: ignore[attr-defined]


def event(api: ApiProtocol, payload: bytes) -> bytes:
    """``payload`` as one event of ``api``'s stream (a frame of a type nobody reads, for
    Bedrock)."""
    if api is BEDROCK:
        return encode_frame({":event-type": "metadata", ":message-type": "event"}, payload)
    return b"data: " + payload + b"\n\n"


def idle(api: ApiProtocol) -> bytes:
    """A small unit of stream that says nothing (repeated, it compresses to almost nothing)."""
    if api is BEDROCK:
        return encode_frame({":event-type": "messageStart", ":message-type": "event"}, b"{}")
    return b": keep-alive\n"


@pytest.mark.parametrize("api", PARAMS)
async def test_the_decoder_refuses_an_event_over_the_size_cap(api: ApiProtocol) -> None:
    """10.6: one event grows past the cap (here 64 KiB) → a ProviderError, not a 64 MiB wait."""
    huge = event(api, b"x" * (256 * 1024))
    pieces = [huge[i : i + 8192] for i in range(0, len(huge), 8192)]
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=Chunks(pieces)
    )
    with pytest.raises(ProviderError) as caught:
        await stream_with(api, response, limits=StreamLimits(max_event_bytes=64 * 1024))
    assert caught.value.kind is ErrorKind.API
    assert "max_event_bytes" in caught.value.message


@pytest.mark.parametrize("api", PARAMS)
async def test_the_decoder_caps_a_decompressed_body(api: ApiProtocol) -> None:
    """10.6: a small gzip body that inflates without end is refused at the body cap."""
    unit = idle(api)
    bomb = gzip.compress(unit * (48 * 1024 * 1024 // len(unit)), compresslevel=9)
    response = httpx.Response(
        200,
        headers={"content-type": "text/event-stream", "content-encoding": "gzip"},
        stream=Chunks([bomb[i : i + 4096] for i in range(0, len(bomb), 4096)]),
    )
    with pytest.raises(ProviderError) as caught:
        await stream_with(api, response, limits=StreamLimits(max_body_bytes=8 * 1024 * 1024))
    assert "max_body_bytes" in caught.value.message


GZIP_BOMB = gzip.compress(b"0" * (64 * 1024 * 1024), compresslevel=9)
"""64 KiB of gzip that inflates to 64 MiB."""


@pytest.mark.parametrize(
    ("status", "content_type"),
    [(500, "text/plain"), (500, "application/json"), (200, "application/json")],
)
async def test_a_compressed_error_body_is_inflated_only_up_to_its_cap(
    status: int, content_type: str
) -> None:
    # Error bodies (and a JSON reply where a stream was expected) were read through
    # httpx's decoder, which inflates a whole network chunk at once before any cap.
    response = httpx.Response(
        status,
        headers={"content-type": content_type, "content-encoding": "gzip"},
        stream=Chunks([GZIP_BOMB]),
    )
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as caught:
            await stream_with(ApiProtocol.OPENAI_COMPLETIONS, response)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.kind is ErrorKind.API
    assert peak < 8 * 1024 * 1024


@pytest.mark.parametrize("api", PARAMS)
async def test_a_gzip_stream_is_read_like_a_plain_one(api: ApiProtocol) -> None:
    body = gzip.compress(b"".join(text_events(api, "compressed")))
    response = httpx.Response(
        200,
        headers={"content-type": "text/event-stream", "content-encoding": "gzip"},
        stream=Chunks([body[:30], body[30:]]),
    )
    assert (await stream_with(api, response)).text == "compressed"


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("api", PARAMS)
async def test_deeply_nested_json_in_a_stream_is_skipped_not_a_recursion_error(
    api: ApiProtocol,
) -> None:
    """10.13: an event nested 100,000 deep raised RecursionError out of the provider."""
    events = text_events(api)
    hostile = event(api, nested(100_000))
    hostile_object = event(api, b'{"type": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_000 + b"}")
    body = [events[0], hostile, hostile_object, *events[1:]]
    message, _, _ = await replay_as(api, body)
    assert message.text == "Hello there!"
    assert message.stop_reason is StopReason.STOP


@pytest.mark.parametrize("api", PARAMS)
async def test_a_lone_surrogate_in_the_history_is_sent_escaped(api: ApiProtocol) -> None:
    """10.3: a file name with an undecodable byte (``\\udcff`` via surrogateescape) in a tool
    result made every later request die in the body encoder with UnicodeEncodeError."""
    name = "report-\udcff.txt"  # os.fsdecode(b"report-\xff.txt")
    history = [
        UserMessage.from_text("list the files"),
        AssistantMessage(
            content=[ToolCall(id="call_1", name="list_files", arguments={"path": "."})],
            stop_reason=StopReason.TOOL_USE,
            usage=Usage(),
            model="m",
            provider="p",
        ),
        ToolResultMessage(
            tool_call_id="call_1", tool_name="list_files", content=[TextContent(text=name)]
        ),
        UserMessage.from_text("open the one with \ud800 in it"),
    ]
    config = stream_config(PROTOCOLS[api].model(), messages=history)
    message, _, route = await replay_as(api, b"".join(text_events(api)), config=config)
    assert message.text == "Hello there!"
    sent = route.calls.last.request.content
    text = sent.decode("utf-8")  # valid UTF-8
    assert "report-\\\\xff.txt" in text  # the byte shown as \xff (a JSON-escaped backslash)
    assert "\ufffd in it" in text
