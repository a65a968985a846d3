"""Record a run against a loopback server for each wire protocol, then replay it with none.

The run: the first reply breaks off mid-stream (a NETWORK error after a few deltas, which
the loop retries), the retry asks for a tool, the tool runs, and the model answers. The
cassette must replay it, server gone and key absent, to the same messages and the same
events; a changed prompt must fail naming the field; the planted key must be nowhere in
the cassette. A new protocol is one more row in ``PROTOCOLS``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from stream_fixtures import (
    anthropic_sse,
    anthropic_text,
    anthropic_tool,
    openai_sse,
    openai_text,
    openai_tool,
)

from yoagent.core import (
    Agent,
    AgentEvent,
    ApiProtocol,
    AssistantMessage,
    ModelConfig,
    ProviderRetry,
    RetryConfig,
    RunFailedError,
    StopReason,
    event_adapter,
    message_adapter,
    tool,
)
from yoagent.providers.testing import ScriptedSseServer
from yoagent.testing import Cassette, RecordingProvider, ReplayProvider, RequestMismatch

PLANTED_KEY = "sk-planted-9f8e7d6c5b4a39281706"
PLANTED_HEADER = "hdr-planted-0a1b2c3d4e5f60718293"
ARGS = '{"a": 2, "b": 3}'
NO_JITTER = RetryConfig(max_retries=2, initial_delay=0.001, max_delay=0.001, jitter=0.0)


def first_events(body: bytes, count: int) -> bytes:
    """The first ``count`` SSE events of ``body``: a stream that breaks off there."""
    return b"".join(event + b"\n\n" for event in body.split(b"\n\n")[:count])


@dataclass(frozen=True)
class Protocol:
    """How to reach one wire protocol's provider, and what its server streams for the run."""

    api: ApiProtocol
    config: Callable[[str], ModelConfig]  # the server's URL → a config for it
    tool_turn: Callable[[], bytes]  # asks for add(2, 3), streaming some text first
    final_turn: Callable[[], bytes]  # answers "It is 5."
    broken_events: int  # how many events of tool_turn get through before the break


PROTOCOLS = [
    Protocol(
        ApiProtocol.ANTHROPIC_MESSAGES,
        lambda url: ModelConfig(
            api=ApiProtocol.ANTHROPIC_MESSAGES, provider="anthropic", id="claude-x", base_url=url
        ),
        lambda: anthropic_sse(anthropic_tool("add", ARGS)),
        lambda: anthropic_sse(anthropic_text("It is 5.")),
        broken_events=4,
    ),
    Protocol(
        ApiProtocol.OPENAI_COMPLETIONS,
        lambda url: ModelConfig(
            api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="gpt-x", base_url=url + "/v1"
        ),
        lambda: openai_sse(openai_tool("add", ARGS)),
        lambda: openai_sse(openai_text("It is 5.")),
        broken_events=2,
    ),
]


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def without_timestamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timestamps(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [without_timestamps(item) for item in value]
    return value


def comparable(agent: Agent, events: list[AgentEvent]) -> tuple[list[Any], list[Any]]:
    """The run's messages and events as JSON, timestamps left out (they differ per run)."""
    return (
        [without_timestamps(message_adapter.dump_python(m, mode="json")) for m in agent.messages],
        [without_timestamps(event_adapter.dump_python(e, mode="json")) for e in events],
    )


async def run(provider: Any, config: ModelConfig, prompt: str) -> tuple[Agent, list[AgentEvent]]:
    agent = Agent.from_provider(
        provider, config, system_prompt="Be brief.", tools=[add], retry=NO_JITTER
    )
    events: list[AgentEvent] = []
    with anyio.fail_after(20):
        failure: RunFailedError | None = None
        try:
            await agent.prompt(prompt, on_event=events.append)
        except RunFailedError as failed:  # a run ending in an error reply raises it
            failure = failed
    if failure is not None:
        last = agent.messages[-1]
        assert isinstance(last, AssistantMessage) and last.stop_reason is StopReason.ERROR
        assert failure.message == last.error_message
    return agent, events


@dataclass
class Recorded:
    protocol: Protocol
    cassette: Path
    config: ModelConfig  # pointing at the server, which is gone by now
    messages: list[Any]
    events: list[Any]
    keys_sent: list[str]


@pytest.fixture(scope="module", params=PROTOCOLS, ids=[p.api.value for p in PROTOCOLS])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    protocol: Protocol = request.param
    path = tmp_path_factory.mktemp(protocol.api.value) / "run.jsonl"
    with ScriptedSseServer() as server:
        server.enqueue(first_events(protocol.tool_turn(), protocol.broken_events))
        server.enqueue(protocol.tool_turn())
        server.enqueue(protocol.final_turn())
        config = replace(
            protocol.config(server.url),
            api_key=PLANTED_KEY,
            headers={"x-gateway-token": PLANTED_HEADER},
        )

        async def record() -> tuple[Agent, list[AgentEvent]]:
            live = Agent.from_config(config).provider
            return await run(RecordingProvider(live, path), config, "what is 2 + 3?")

        agent, events = anyio.run(record)
        keys_sent = [str(r.headers) for r in server.requests]
    messages, event_json = comparable(agent, events)
    assert len(keys_sent) == 3, "the run did not make its three requests"
    assert [type(e) for e in events].count(ProviderRetry) == 1
    assert agent.messages[-1].text == "It is 5."  # type: ignore[union-attr]
    return Recorded(protocol, path, config, messages, event_json, keys_sent)


async def test_a_recorded_run_replays_with_no_server_to_the_same_messages_and_events(
    recorded: Recorded,
) -> None:
    no_key = replace(recorded.config, api_key="", headers={})
    replay = ReplayProvider(recorded.cassette)

    agent, events = await run(replay, no_key, "what is 2 + 3?")

    messages, event_json = comparable(agent, events)
    assert messages == recorded.messages
    assert event_json == recorded.events
    assert replay.served == 3 and replay.unplayed == [] and replay.mismatches == []
    broken = Cassette.load(recorded.cassette).calls[0]
    assert broken.error is not None and broken.error["kind"] == "network"
    assert broken.deltas, "the broken stream delivered deltas before it broke"


async def test_a_changed_prompt_fails_naming_the_first_differing_field(
    recorded: Recorded,
) -> None:
    replay = ReplayProvider(recorded.cassette)

    agent, _ = await run(replay, recorded.config, "what is 2 + 4?")

    [mismatch] = replay.mismatches
    assert isinstance(mismatch, RequestMismatch)
    assert mismatch.difference is not None
    assert mismatch.difference.where == "messages[0].content[0].text"
    assert "recorded: 'what is 2 + 3?'" in str(mismatch)
    assert "messages[0].content[0].text" in str(agent.messages[-1].error_message)  # type: ignore[union-attr]


def test_no_planted_secret_reaches_the_cassette(recorded: Recorded) -> None:
    assert any(PLANTED_KEY in sent for sent in recorded.keys_sent)  # it was really used
    assert any(PLANTED_HEADER in sent for sent in recorded.keys_sent)
    text = recorded.cassette.read_text(encoding="utf-8")
    assert PLANTED_KEY not in text
    assert PLANTED_HEADER not in text
    assert "[REDACTED]" in text


INNER_TEST = textwrap.dedent(
    """
    import os

    import anyio

    from yoagent.core import Agent, ApiProtocol, ModelConfig, tool


    @tool
    async def add(a: int, b: int) -> str:
        '''Add two integers.'''
        return str(a + b)


    def test_adds_over_a_real_protocol(yoagent_cassette):
        config = ModelConfig(
            api=ApiProtocol.ANTHROPIC_MESSAGES,
            provider="anthropic",
            id="claude-x",
            base_url=os.environ["SERVER_URL"],
        )
        agent = Agent.from_provider(yoagent_cassette.provider(config), config, tools=[add])

        async def main():
            with anyio.fail_after(20):
                await agent.prompt("what is 2 + 3?")

        anyio.run(main)
        assert agent.messages[-1].text == "It is 5."
    """
)


def _pytest(folder: Path, url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD" and not k.endswith("API_KEY")
    }
    environ.update(env, SERVER_URL=url)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"]
    return subprocess.run(
        [*command, "--rootdir", str(folder), "-c", str(folder / "pytest.ini"), *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_pytest_plugin_records_against_a_server_then_replays_without_it(
    tmp_path: Path,
) -> None:
    protocol = PROTOCOLS[0]
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    with ScriptedSseServer() as server:
        server.enqueue(protocol.tool_turn())
        server.enqueue(protocol.final_turn())
        url = server.url
        recording = _pytest(tmp_path, url, "--yoagent-record=once", ANTHROPIC_API_KEY=PLANTED_KEY)
        assert recording.returncode == 0, recording.stdout + recording.stderr
        assert len(server.requests) == 2
    cassette = tmp_path / "cassettes" / "test_inner" / "test_adds_over_a_real_protocol.jsonl"
    assert PLANTED_KEY not in cassette.read_text()

    replaying = _pytest(tmp_path, url)  # the server is gone, and no key is set

    assert replaying.returncode == 0, replaying.stdout + replaying.stderr
    assert "1 passed" in replaying.stdout
