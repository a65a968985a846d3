"""Cut, shuffled and garbage streams only ever end in a reply or a ProviderError, promptly,
for all seven protocols (SSE events or Bedrock's eventstream frames are the units moved)."""

from __future__ import annotations

import json
import random

import anyio
import httpx
import respx
from bedrock_fixtures import exception_frame, frame
from bedrock_fixtures import text_events as bedrock_text
from bedrock_fixtures import tool_events as bedrock_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_helpers import PROTOCOLS, Chunks, stream_config
from stream_fixtures import (
    anthropic_sse,
    anthropic_text,
    anthropic_tool,
    gemini_sse,
    gemini_text,
    gemini_tool,
    openai_sse,
    openai_text,
    openai_tool,
    responses_sse,
    responses_text,
    responses_tool,
)

from yoagent.core import ApiProtocol, AssistantMessage, ProviderError
from yoagent.providers._eventstream import encode_frame

BEDROCK = ApiProtocol.BEDROCK_CONVERSE_STREAM

_RESPONSES = [responses_sse(responses_text()), responses_sse(responses_tool(), event_lines=False)]
_GEMINI = [gemini_sse(gemini_text()), gemini_sse(gemini_tool(), crlf=False)]
SEEDS: dict[ApiProtocol, list[bytes]] = {
    ApiProtocol.ANTHROPIC_MESSAGES: [
        anthropic_sse(anthropic_text(), crlf=True, pad=True),
        anthropic_sse(anthropic_tool()),
    ],
    ApiProtocol.OPENAI_COMPLETIONS: [
        openai_sse(openai_text(), comments=True),
        openai_sse(openai_tool()),
    ],
    ApiProtocol.OPENAI_RESPONSES: _RESPONSES,
    ApiProtocol.AZURE_OPENAI_RESPONSES: _RESPONSES,
    ApiProtocol.GOOGLE_GENERATIVE_AI: _GEMINI,
    ApiProtocol.GOOGLE_VERTEX: _GEMINI,
    BEDROCK: [
        b"".join(frame(name, payload) for name, payload in bedrock_text("Hello there!")),
        b"".join(frame(name, payload) for name, payload in bedrock_tool()),
    ],
}
SSE_GARBAGE = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [
            b"data: {\n\n",
            b"data: []\n\n",
            b'data: {"type": 5}\n\n',
            b"data: null\n\n",
            b'data: {"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}\n\n',
            b'data: {"type": "content_block_delta", "index": 0, "delta": 3}\n\n',
            b'data: {"type": "content_block_start", "index": 0, "content_block": []}\n\n',
            b"\r",
            b"event: error\n",
            b"data: [DONE]\n\n",
            b": c\n\n",
            b'data: {"type": "response.output_item.done", "item": 7}\n\n',
            b'data: {"type": "response.function_call_arguments.delta", "delta": 1}\n\n',
            b'data: {"type": "response.completed", "response": []}\n\n',
            b'data: {"candidates": [{"content": {"parts": [{"functionCall": 3}]}}]}\n\n',
            b'data: {"candidates": [{"content": {"parts": [{"functionCall": '
            b'{"partialArgs": [{"jsonPath": "$[99999999]", "stringValue": "x"}]}}]}}]}\n\n',
            b'data: {"candidates": [{"finishReason": 5}], "usageMetadata": []}\n\n',
            b"data: " + b"[" * 5000 + b"\n\n",
        ]
    ),
)
FRAME_GARBAGE = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [
            frame("contentBlockDelta", {"contentBlockIndex": "x", "delta": {"text": 1}}),
            frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": []}}),
            frame("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": "no"}}),
            frame("contentBlockDelta", {"contentBlockIndex": 9, "delta": {"reasoningContent": 3}}),
            frame(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "!"}}},
            ),
            frame("messageStop", {"stopReason": 5}),
            frame("metadata", {"usage": "none"}),
            encode_frame({":event-type": "metadata", ":message-type": "event"}, b"[]"),
            encode_frame({":message-type": "event"}, b"{}"),
            encode_frame({":message-type": "mystery"}, b"{}"),
            encode_frame({":event-type": "contentBlockDelta"}, json.dumps([1]).encode()),
            encode_frame({":event-type": "metadata"}, b"[" * 5000),
            exception_frame("throttlingException", "slow down"),
        ]
    ),
)


def units(api: ApiProtocol, body: bytes) -> list[bytes]:
    """The pieces a body is shuffled by: its SSE events, or its eventstream frames."""
    if api is not BEDROCK:
        return [e + b"\n\n" for e in body.replace(b"\r\n", b"\n").split(b"\n\n") if e]
    frames, at = [], 0
    while at < len(body):
        size = int.from_bytes(body[at : at + 4], "big")
        frames.append(body[at : at + size])
        at += size
    return frames


def mangle(api: ApiProtocol, body: bytes, data: st.DataObject) -> tuple[list[bytes], bytes]:
    """``body`` shuffled, salted with garbage, maybe cut, in chunks; and the bytes served."""
    events = units(api, body)
    garbage = FRAME_GARBAGE if api is BEDROCK else SSE_GARBAGE
    if data.draw(st.booleans(), label="shuffle"):
        random.Random(data.draw(st.integers(0, 2**16), label="seed")).shuffle(events)
    for _ in range(data.draw(st.integers(0, 3), label="garbage count")):
        events.insert(
            data.draw(st.integers(0, len(events)), label="at"), data.draw(garbage, label="garbage")
        )
    joined = b"".join(events)
    cut = data.draw(st.integers(0, len(joined)), label="cut")
    joined = joined[:cut] if data.draw(st.booleans(), label="do cut") else joined
    sizes = data.draw(st.lists(st.integers(1, 64), max_size=8), label="chunk sizes")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(joined[start : start + size])
        start += size
    return [*pieces, joined[start:]], joined


async def run_once(api: ApiProtocol, pieces: list[bytes]) -> AssistantMessage | ProviderError:
    protocol = PROTOCOLS[api]
    config = stream_config(protocol.model())
    provider = protocol.provider(config.model)
    async with provider, respx.mock() as mock:
        mock.post(protocol.url()).mock(
            return_value=httpx.Response(
                200, headers={"content-type": "text/event-stream"}, stream=Chunks(pieces)
            )
        )
        with anyio.fail_after(5):
            try:
                return await provider.stream(config, lambda d: None)  # type: ignore[attr-defined]
            except ProviderError as error:
                return error


@settings(max_examples=350, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(api=st.sampled_from(list(PROTOCOLS)), seed_index=st.integers(0, 1), data=st.data())
def test_mangled_streams_end_in_a_reply_or_a_provider_error(
    api: ApiProtocol, seed_index: int, data: st.DataObject
) -> None:
    """Whatever the body, every protocol returns an AssistantMessage or raises ProviderError."""
    pieces, joined = mangle(api, SEEDS[api][seed_index], data)
    outcome = anyio.run(run_once, api, pieces)
    assert isinstance(outcome, AssistantMessage | ProviderError)
    if isinstance(outcome, AssistantMessage):
        json.dumps([c.type for c in outcome.content])  # a well-formed reply
        assert all(call.arguments is not None for call in outcome.tool_calls)
        if api is BEDROCK:
            # A Bedrock reply is only ever returned from a body that said messageStop.
            assert b"messageStop" in joined


def test_an_intact_seed_gives_its_reply_for_every_protocol() -> None:
    """The fuzz seeds are real replies: unmangled, each protocol reads them whole."""
    assert set(SEEDS) == set(PROTOCOLS)
    for api, seeds in SEEDS.items():
        outcomes = [anyio.run(run_once, api, [seed]) for seed in seeds]
        assert all(isinstance(o, AssistantMessage) for o in outcomes), (api, outcomes)
        text, tool = outcomes
        assert isinstance(text, AssistantMessage) and text.text == "Hello there!"
        assert isinstance(tool, AssistantMessage) and tool.tool_calls[0].arguments == {
            "path": "a.txt"
        }
