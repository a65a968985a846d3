"""Cut, shuffled and garbage streams only ever end in a reply or a ProviderError, promptly."""

from __future__ import annotations

import json
import random

import anyio
import httpx
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_helpers import (
    ANTHROPIC_URL,
    OPENAI_URL,
    Chunks,
    anthropic_config,
    openai_config,
    stream_config,
)
from stream_fixtures import (
    anthropic_sse,
    anthropic_text,
    anthropic_tool,
    openai_sse,
    openai_text,
    openai_tool,
)

from yoagent.core import AssistantMessage, ProviderError
from yoagent.providers import AnthropicProvider, OpenAiCompletionsProvider

SEEDS = {
    True: [anthropic_sse(anthropic_text(), crlf=True, pad=True), anthropic_sse(anthropic_tool())],
    False: [openai_sse(openai_text(), comments=True), openai_sse(openai_tool())],
}
GARBAGE = st.one_of(
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
        ]
    ),
)


def mangle(body: bytes, data: st.DataObject) -> list[bytes]:
    events = [e + b"\n\n" for e in body.replace(b"\r\n", b"\n").split(b"\n\n") if e]
    if data.draw(st.booleans(), label="shuffle"):
        random.Random(data.draw(st.integers(0, 2**16), label="seed")).shuffle(events)
    for _ in range(data.draw(st.integers(0, 3), label="garbage count")):
        events.insert(
            data.draw(st.integers(0, len(events)), label="at"), data.draw(GARBAGE, label="garbage")
        )
    joined = b"".join(events)
    cut = data.draw(st.integers(0, len(joined)), label="cut")
    joined = joined[:cut] if data.draw(st.booleans(), label="do cut") else joined
    sizes = data.draw(st.lists(st.integers(1, 64), max_size=8), label="chunk sizes")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(joined[start : start + size])
        start += size
    return [*pieces, joined[start:]]


async def run_once(anthropic: bool, pieces: list[bytes]) -> AssistantMessage | ProviderError:
    config = stream_config(anthropic_config() if anthropic else openai_config())
    url = ANTHROPIC_URL + "/v1/messages" if anthropic else OPENAI_URL + "/chat/completions"
    provider = (
        AnthropicProvider(config.model) if anthropic else OpenAiCompletionsProvider(config.model)
    )
    async with provider, respx.mock() as mock:
        mock.post(url).mock(
            return_value=httpx.Response(
                200, headers={"content-type": "text/event-stream"}, stream=Chunks(pieces)
            )
        )
        with anyio.fail_after(5):
            try:
                return await provider.stream(config, lambda d: None)
            except ProviderError as error:
                return error


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anthropic=st.booleans(), seed_index=st.integers(0, 1), data=st.data())
def test_mangled_streams_end_in_a_reply_or_a_provider_error(
    anthropic: bool, seed_index: int, data: st.DataObject
) -> None:
    """Whatever the body, the provider returns an AssistantMessage or raises ProviderError."""
    pieces = mangle(SEEDS[anthropic][seed_index], data)
    outcome = anyio.run(run_once, anthropic, pieces)
    assert isinstance(outcome, AssistantMessage | ProviderError)
    if isinstance(outcome, AssistantMessage):
        json.dumps([c.type for c in outcome.content])  # a well-formed reply
