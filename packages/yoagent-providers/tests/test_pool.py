"""One shared connection pool per event loop, server and proxy settings; a caller's own client."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from provider_helpers import anthropic_config, stream_config
from stream_fixtures import anthropic_sse, anthropic_text

from yoagent.core import Agent, ErrorKind, ModelConfig, ProviderError
from yoagent.providers import AnthropicProvider, aclose_shared_clients
from yoagent.providers._pool import shared_client, shared_clients
from yoagent.providers.testing import RecordedRequest, ScriptedReply, ScriptedSseServer


@pytest.fixture
def server() -> Iterator[ScriptedSseServer]:
    with ScriptedSseServer() as running:
        yield running


async def test_providers_for_one_server_share_one_connection(server: ScriptedSseServer) -> None:
    config = stream_config(anthropic_config(base_url=server.url))
    for text in ("one", "two", "three"):
        server.enqueue(anthropic_sse(anthropic_text(text)))
    replies = []
    for _ in range(3):
        async with AnthropicProvider(config.model) as provider:  # a new provider each time
            replies.append((await provider.stream(config, lambda d: None)).text)
    assert replies == ["one", "two", "three"]
    assert server.connections == 1
    assert len(shared_clients()) == 1
    await aclose_shared_clients()
    assert shared_clients() == []


async def test_a_hundred_agents_from_config_reuse_one_pool(server: ScriptedSseServer) -> None:
    model = ModelConfig(
        api=anthropic_config().api,
        provider="anthropic",
        id="claude-test",
        base_url=server.url,
        api_key="k",
    )
    agents = [Agent.from_config(model, system_prompt="s") for _ in range(100)]
    assert len({id(agent.provider) for agent in agents}) == 100
    for index, agent in enumerate(agents):
        server.enqueue(anthropic_sse(anthropic_text(f"reply {index}")))
        with anyio.fail_after(10):
            new = await agent.prompt("hi")
        assert new[-1].text == f"reply {index}"  # type: ignore[union-attr]
    assert server.connections == 1
    assert len(shared_clients()) == 1
    await aclose_shared_clients()


async def test_a_callers_own_client_is_used_and_left_open(server: ScriptedSseServer) -> None:
    config = stream_config(anthropic_config(base_url=server.url))
    server.enqueue(anthropic_sse(anthropic_text("mine")))
    seen: list[str] = []

    async def record(request: httpx.Request) -> None:
        seen.append(str(request.url))

    async with httpx.AsyncClient(event_hooks={"request": [record]}) as own:
        async with AnthropicProvider(config.model, http_client=own) as provider:
            assert (await provider.stream(config, lambda d: None)).text == "mine"
        assert not own.is_closed
    assert seen == [server.url + "/v1/messages"]
    assert shared_clients() == []


def test_each_event_loop_and_proxy_setting_gets_its_own_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def pick() -> tuple[httpx.AsyncClient, httpx.AsyncClient, httpx.AsyncClient]:
        first = shared_client("https://api.example.test/v1")
        again = shared_client("https://api.example.test/other")  # same origin
        monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.test:3128")
        proxied = shared_client("https://api.example.test/v1")
        monkeypatch.delenv("HTTPS_PROXY")
        assert again is first
        assert shared_client("https://other.example.test") is not first
        await aclose_shared_clients()
        return first, again, proxied

    one = anyio.run(pick)
    two = anyio.run(pick)
    assert one[2] is not one[0]  # another proxy setting, another client
    assert two[0] is not one[0]  # another event loop, another client


FDS = Path("/proc/self/fd")
RUNS = 30


def _open_fds() -> int:
    return len(list(FDS.iterdir()))


def _live(kind: type) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


def _settled_fds(limit: int) -> int:
    """Open fds once the server's threads have closed their ends (they notice EOF later)."""
    deadline = time.monotonic() + 10
    count = _open_fds()
    while count > limit and time.monotonic() < deadline:
        time.sleep(0.05)
        count = _open_fds()
    return count


@pytest.mark.skipif(not FDS.is_dir(), reason="counting open files needs /proc/self/fd")
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_finished_event_loop_frees_its_shared_client_and_socket(
    server: ScriptedSseServer, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = stream_config(anthropic_config(base_url=server.url))

    async def one_request() -> None:
        server.enqueue(anthropic_sse(anthropic_text("x")))
        await AnthropicProvider(config.model).stream(config, lambda d: None)

    anyio.run(one_request, backend=backend)  # warm up: imports, the server's threads
    clients, loops, fds = _live(httpx.AsyncClient), _live(asyncio.AbstractEventLoop), _open_fds()
    for _ in range(RUNS):
        anyio.run(one_request, backend=backend)
    assert _live(httpx.AsyncClient) <= clients  # each run's client went with its loop
    assert _live(asyncio.AbstractEventLoop) <= loops
    # Each leaked run kept a socket (and its loop); allow a little for unrelated files.
    assert _settled_fds(fds + 4) <= fds + 4
    # Closed without complaint (trio logs a failed finalizer, asyncio a failed aclose).
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert server.connections == RUNS + 1


def test_a_reply_setting_a_cookie_does_not_reach_another_agents_request(
    server: ScriptedSseServer,
) -> None:
    async def main() -> None:
        cookie = {"content-type": "text/event-stream", "set-cookie": "session=TENANT-A; Path=/"}
        server.enqueue(ScriptedReply([anthropic_sse(anthropic_text("a"))], headers=cookie))
        server.enqueue(anthropic_sse(anthropic_text("b")))
        for key in ("key-of-tenant-a", "key-of-tenant-b"):
            config = stream_config(anthropic_config(base_url=server.url, api_key=key))
            await AnthropicProvider(config.model).stream(config, lambda d: None)
        assert len(shared_clients()) == 1  # both went through the one shared client
        await aclose_shared_clients()

    anyio.run(main)
    assert [r.headers["x-api-key"] for r in server.requests] == [
        "key-of-tenant-a",
        "key-of-tenant-b",
    ]
    assert "cookie" not in server.requests[1].headers


def test_more_agents_than_a_hundred_stream_from_one_server_at_once() -> None:
    agents = 105
    # Every reply waits until all requests have arrived: a connection cap below
    # `agents` keeps some requests from ever arriving, and the barrier breaks.
    everyone = threading.Barrier(agents, timeout=60)

    def hold(request: RecordedRequest) -> ScriptedReply | None:
        try:
            everyone.wait()
        except threading.BrokenBarrierError:
            return ScriptedReply([b"not everyone arrived"], status=400)
        return None

    with ScriptedSseServer(check=hold) as server:
        for _ in range(agents):
            server.enqueue(anthropic_sse(anthropic_text("hello")))
        config = stream_config(anthropic_config(base_url=server.url))
        replies: list[str] = []

        async def one() -> None:
            reply = await AnthropicProvider(config.model).stream(config, lambda d: None)
            replies.append(reply.text)

        async def main() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(agents):
                    group.start_soon(one)
            await aclose_shared_clients()

        anyio.run(main)
        assert replies == ["hello"] * agents
        assert server.connections == agents


async def test_waiting_for_a_connection_in_a_callers_capped_pool_says_so(
    server: ScriptedSseServer,
) -> None:
    body = anthropic_sse(anthropic_text("slow"))
    server.enqueue(ScriptedReply([body[:10], body[10:]], delay=1.0))
    config = stream_config(anthropic_config(base_url=server.url))
    limits = httpx.Limits(max_connections=1)
    timeout = httpx.Timeout(30.0, pool=0.2)
    errors: list[ProviderError] = []
    async with httpx.AsyncClient(limits=limits) as own:
        provider = AnthropicProvider(config.model, http_client=own, timeout=timeout)

        async def second() -> None:
            await anyio.sleep(0.3)  # the first holds the one connection by now
            try:
                await provider.stream(config, lambda d: None)
            except ProviderError as error:
                errors.append(error)

        async with anyio.create_task_group() as group:
            group.start_soon(second)
            assert (await provider.stream(config, lambda d: None)).text == "slow"
    [error] = errors
    assert error.kind is ErrorKind.NETWORK
    assert "no connection of the HTTP client's pool was free" in error.message
    assert "max_connections" in error.message
