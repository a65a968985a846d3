"""Real HTTP on loopback: connection reuse, stalled streams, cancellation, entry points."""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import pytest
import respx
from provider_helpers import (
    ANTHROPIC_URL,
    OPENAI_URL,
    anthropic_config,
    openai_config,
    stream_config,
)
from stream_fixtures import anthropic_sse, anthropic_text, openai_sse, openai_text

from yoagent.core import ApiProtocol, ErrorKind, ProviderError
from yoagent.core.provider import ProviderRegistry
from yoagent.providers import AnthropicProvider, OpenAiCompletionsProvider, StreamLimits
from yoagent.providers._http import event_loop_clock
from yoagent.providers.testing import ScriptedReply, ScriptedSseServer


@pytest.fixture
def server() -> Iterator[ScriptedSseServer]:
    with ScriptedSseServer() as running:
        yield running


async def test_one_connection_is_reused_across_turns(server: ScriptedSseServer) -> None:
    config = stream_config(anthropic_config(base_url=server.url))
    server.enqueue(anthropic_sse(anthropic_text("one")))
    server.enqueue(anthropic_sse(anthropic_text("two")))
    async with AnthropicProvider(config.model) as provider:
        first = await provider.stream(config, lambda d: None)
        second = await provider.stream(config, lambda d: None)
    assert (first.text, second.text) == ("one", "two")
    assert len(server.requests) == 2
    assert server.connections == 1
    assert server.requests[0].path == "/v1/messages"


async def test_a_stalled_stream_ends_with_a_network_error(server: ScriptedSseServer) -> None:
    body = openai_sse(openai_text())
    server.enqueue(ScriptedReply([body[:40], body[40:]], delay=0.6))
    config = stream_config(openai_config(base_url=server.url + "/v1"))
    async with OpenAiCompletionsProvider(config.model, timeout=0.3) as provider:
        with anyio.fail_after(5), pytest.raises(ProviderError) as caught:
            await provider.stream(config, lambda d: None)
    assert caught.value.kind is ErrorKind.NETWORK
    assert "stalled" in caught.value.message


async def test_a_stream_of_keep_alive_comments_alone_ends_at_the_idle_limit(
    server: ScriptedSseServer,
) -> None:
    # Comments reset the read timeout: `: ping` every few seconds kept a turn open forever.
    server.enqueue(ScriptedReply([b": ping\n\n"] * 200, delay=0.05))  # 10 s of pings
    config = stream_config(anthropic_config(base_url=server.url))
    limits = StreamLimits(max_idle_seconds=0.5)
    started = time.monotonic()
    async with AnthropicProvider(config.model, limits=limits) as provider:
        with anyio.fail_after(8), pytest.raises(ProviderError) as caught:
            await provider.stream(config, lambda d: None)
    assert caught.value.kind is ErrorKind.NETWORK
    assert "StreamLimits.max_idle_seconds" in caught.value.message
    assert time.monotonic() - started < 5  # generous: the machine is shared


def test_the_idle_limit_reads_the_clock_of_the_running_event_loop_on_trio_too(
    server: ScriptedSseServer,
) -> None:
    # The transport looks the loop's clock up once per request (asyncio's loop.time, or
    # anyio's lookup on any other backend): the limit must hold on both.
    server.enqueue(ScriptedReply([b": ping\n\n"] * 200, delay=0.05))
    config = stream_config(anthropic_config(base_url=server.url))
    limits = StreamLimits(max_idle_seconds=0.5)

    async def main() -> ProviderError:
        async with AnthropicProvider(config.model, limits=limits) as provider:
            with anyio.fail_after(8), pytest.raises(ProviderError) as caught:
                await provider.stream(config, lambda d: None)
        return caught.value

    error = anyio.run(main, backend="trio")
    assert error.kind is ErrorKind.NETWORK
    assert "StreamLimits.max_idle_seconds" in error.message


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_event_loop_clock_is_the_backends_own(backend: str) -> None:
    async def main() -> tuple[float, float, float]:
        clock = event_loop_clock()
        return anyio.current_time(), clock(), anyio.current_time()

    before, read, after = anyio.run(main, backend=backend)
    assert before <= read <= after


async def test_events_spaced_within_the_idle_limit_keep_a_stream_going(
    server: ScriptedSseServer,
) -> None:
    body = anthropic_sse(anthropic_text("steady"))
    events = [event + b"\n\n" for event in body.split(b"\n\n") if event]
    server.enqueue(ScriptedReply([b": ping\n\n" + event for event in events], delay=0.1))
    config = stream_config(anthropic_config(base_url=server.url))
    limits = StreamLimits(max_idle_seconds=0.6)  # the whole reply takes longer
    async with AnthropicProvider(config.model, limits=limits) as provider:
        assert (await provider.stream(config, lambda d: None)).text == "steady"
    assert len(events) * 0.1 > 0.6


async def test_cancellation_closes_the_response(server: ScriptedSseServer) -> None:
    body = anthropic_sse(anthropic_text("x" * 50))
    server.enqueue(ScriptedReply([body[i : i + 20] for i in range(0, len(body), 20)], delay=0.05))
    config = stream_config(anthropic_config(base_url=server.url))
    seen: list[object] = []
    async with AnthropicProvider(config.model) as provider:
        with anyio.move_on_after(0.3) as scope:
            await provider.stream(config, seen.append)
    assert scope.cancelled_caught
    assert await anyio.to_thread.run_sync(server.disconnected.wait, 5)
    assert server.disconnects == 1


ERROR_THEN_MORE = (
    b'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"boom"}}\n\n'
    + b": more\n\n" * 20_000
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_stream_left_early_closes_its_body_reader_at_once(
    server: ScriptedSseServer, backend: str
) -> None:
    # An error event ends the reply with the body still flowing: the reader of the body
    # was left to the garbage collector (trio warned that it was never closed).
    server.enqueue(ScriptedReply([ERROR_THEN_MORE[:100], ERROR_THEN_MORE[100:]], delay=0.05))
    config = stream_config(anthropic_config(base_url=server.url))

    async def main() -> None:
        with pytest.raises(ProviderError, match="boom"):
            await AnthropicProvider(config.model).stream(config, lambda d: None)
        gc.collect()
        await anyio.sleep(0.1)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        anyio.run(main, backend=backend)
        gc.collect()
    assert [str(w.message) for w in caught if "bounded_body" in str(w.message)] == []


def test_providers_are_found_through_entry_points() -> None:
    registry = ProviderRegistry()
    assert isinstance(registry.create(anthropic_config()), AnthropicProvider)
    assert isinstance(registry.create(openai_config()), OpenAiCompletionsProvider)
    assert {ApiProtocol.ANTHROPIC_MESSAGES, ApiProtocol.OPENAI_COMPLETIONS} <= set(
        registry.protocols()
    )


class _ThenStream(httpx.AsyncByteStream):
    """A complete body, then a stall (``hang``) or a broken connection (``break``)."""

    def __init__(self, body: bytes, then: str) -> None:
        self.body, self.then = body, then

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.body
        if self.then == "hang":
            await anyio.sleep(3600)
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


@pytest.mark.parametrize("then", ["hang", "break"])
@pytest.mark.parametrize("anthropic", [True, False], ids=["anthropic", "openai"])
async def test_a_complete_reply_survives_a_server_that_stalls_or_breaks_after_it(
    then: str, anthropic: bool
) -> None:
    """After message_stop / [DONE] the reply is whole: what the server does next cannot lose it."""
    if anthropic:
        config = stream_config(anthropic_config())
        url, body = ANTHROPIC_URL + "/v1/messages", anthropic_sse(anthropic_text("whole"))
        provider: AnthropicProvider | OpenAiCompletionsProvider = AnthropicProvider(config.model)
    else:
        config = stream_config(openai_config())
        url, body = OPENAI_URL + "/chat/completions", openai_sse(openai_text("whole"))
        provider = OpenAiCompletionsProvider(config.model)
    async with provider, respx.mock() as mock:
        mock.post(url).mock(
            return_value=httpx.Response(
                200, headers={"content-type": "text/event-stream"}, stream=_ThenStream(body, then)
            )
        )
        with anyio.fail_after(3):
            message = await provider.stream(config, lambda d: None)
    assert message.text == "whole"
