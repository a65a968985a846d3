"""Cut, shuffled and garbage Bedrock streams only ever end in a reply or a ProviderError."""

from __future__ import annotations

import json
import random

import anyio
import httpx
import respx
from bedrock_fixtures import (
    BEDROCK_URL,
    EVENTSTREAM,
    FIXED_TIME,
    STREAM_PATH,
    bedrock_config,
    exception_frame,
    fixed_env,
    frame,
    text_events,
    tool_events,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_helpers import Chunks, stream_config

from yoagent.core import AssistantMessage, ProviderError
from yoagent.providers import BedrockProvider
from yoagent.providers._eventstream import encode_frame

SEEDS = [
    [frame(name, payload) for name, payload in text_events("Hel", "lo")],
    [frame(name, payload) for name, payload in tool_events()],
]
GARBAGE = st.one_of(
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
            exception_frame("throttlingException", "slow down"),
        ]
    ),
)


def mangle(frames: list[bytes], data: st.DataObject) -> tuple[list[bytes], bytes]:
    frames = list(frames)
    if data.draw(st.booleans(), label="shuffle"):
        random.Random(data.draw(st.integers(0, 2**16), label="seed")).shuffle(frames)
    for _ in range(data.draw(st.integers(0, 3), label="garbage count")):
        frames.insert(
            data.draw(st.integers(0, len(frames)), label="at"), data.draw(GARBAGE, label="garbage")
        )
    joined = b"".join(frames)
    if data.draw(st.booleans(), label="do cut"):
        joined = joined[: data.draw(st.integers(0, len(joined)), label="cut")]
    sizes = data.draw(st.lists(st.integers(1, 80), max_size=8), label="chunk sizes")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(joined[start : start + size])
        start += size
    return [*pieces, joined[start:]], joined


async def run_once(pieces: list[bytes]) -> AssistantMessage | ProviderError:
    config = stream_config(bedrock_config())
    provider = BedrockProvider(config.model, env=fixed_env(), clock=lambda: FIXED_TIME)
    async with provider, respx.mock() as mock:
        mock.post(BEDROCK_URL + STREAM_PATH).mock(
            return_value=httpx.Response(200, headers=EVENTSTREAM, stream=Chunks(pieces))
        )
        with anyio.fail_after(5):
            try:
                return await provider.stream(config, lambda d: None)
            except ProviderError as error:
                return error


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed_index=st.integers(0, 1), data=st.data())
def test_mangled_bedrock_streams_end_in_a_reply_or_a_provider_error(
    seed_index: int, data: st.DataObject
) -> None:
    pieces, joined = mangle(SEEDS[seed_index], data)
    outcome = anyio.run(run_once, pieces)
    assert isinstance(outcome, AssistantMessage | ProviderError)
    if isinstance(outcome, AssistantMessage):
        json.dumps([c.type for c in outcome.content])  # a well-formed reply
        # A reply is only ever returned from a body that said messageStop.
        assert b"messageStop" in joined
