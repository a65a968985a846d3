"""One shared connection pool per event loop, server and proxy settings; a caller's own client."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest
from provider_helpers import anthropic_config, stream_config
from stream_fixtures import anthropic_sse, anthropic_text

from yoagent.core import Agent, ModelConfig
from yoagent.providers import AnthropicProvider, aclose_shared_clients
from yoagent.providers._pool import shared_client, shared_clients
from yoagent.providers.testing import ScriptedSseServer


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
