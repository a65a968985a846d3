"""The edges of a run: failures raise, missing keys are named, misuse fails at the call,
and a stream is safe to leave early under asyncio and trio."""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import aclosing, contextmanager
from dataclasses import replace
from typing import Any

import anyio
import pytest
import trio
from core_helpers import FAST_RETRY, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    ErrorKind,
    ExecutionLimits,
    MissingApiKeyError,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    RunFailedError,
    StopReason,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.extension import CANCELLED_MARKER
from yoagent.core.provider import ProviderRegistry

# --- runs never fail silently ---------------------------------------------------------------


async def test_prompt_raises_when_the_server_refuses_the_key() -> None:
    refused = ProviderError(ErrorKind.AUTH, "invalid x-api-key", status=401)
    agent = Agent.from_provider(MockProvider([refused]), ModelConfig.mock())
    with pytest.raises(RunFailedError) as raised:
        await agent.prompt("hi")
    error = raised.value
    assert error.kind is ErrorKind.AUTH
    assert error.message == "AUTH: invalid x-api-key"
    assert str(error) == "AUTH: invalid x-api-key"
    assert [m.role for m in error.messages] == ["user", "assistant"]
    # The history keeps what happened.
    reply = agent.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ERROR
    assert reply.error_kind is ErrorKind.AUTH


async def test_prompt_raises_when_retries_run_out() -> None:
    busy = [ProviderError(ErrorKind.RATE_LIMITED, f"slow down {i}") for i in range(4)]
    provider = MockProvider(busy)
    agent = Agent.from_provider(provider, ModelConfig.mock(), retry=FAST_RETRY)
    with pytest.raises(RunFailedError) as raised:
        await agent.prompt("hi")
    assert raised.value.kind is ErrorKind.RATE_LIMITED
    assert len(provider.requests) == 4


async def test_a_limited_run_returns_normally() -> None:
    limited = Agent.from_provider(
        MockProvider([tool_reply(call("missing"))]),
        ModelConfig.mock(),
        limits=ExecutionLimits(max_turns=1),
    )
    new = await limited.prompt("go")
    assert isinstance(new[-1], UserMessage) and new[-1].text.startswith("[Agent stopped: turn")


async def test_a_stream_delivers_every_event_then_raises() -> None:
    agent = Agent.from_provider(
        MockProvider([ProviderError(ErrorKind.AUTH, "no")]), ModelConfig.mock()
    )
    seen: list[str] = []

    async def consume() -> None:
        async with agent.stream("hi") as events:
            async for event in events:
                seen.append(event.type)

    with pytest.raises(RunFailedError):
        await consume()
    assert seen[-1] == "agent_end"
    assert "message_end" in seen


def test_a_missing_key_is_named_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ANTHROPIC_API_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    created: list[ModelConfig] = []
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(
        ApiProtocol.ANTHROPIC_MESSAGES,
        lambda c: created.append(c) or MockProvider(),  # type: ignore[func-returns-value]
    )
    config = ModelConfig(
        api=ApiProtocol.ANTHROPIC_MESSAGES,
        provider="anthropic",
        id="claude",
        key_variable="ANTHROPIC_API_KEY",  # as every preset sets it
    )
    with pytest.raises(MissingApiKeyError, match="set ANTHROPIC_API_KEY") as raised:
        Agent.from_config(config, registry=registry)
    assert raised.value.variable == "ANTHROPIC_API_KEY"
    assert raised.value.kind is ErrorKind.AUTH
    assert created == []  # no provider (no client) was built
    # Without a `key_variable` core cannot know the vendor's variable (the provider
    # package's table does): the agent is built, and the provider reads its own.
    Agent.from_config(replace(config, key_variable=""), registry=registry)
    assert [c.api_key for c in created] == [""]


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8000/v1",
        "http://10.1.2.3/v1",
        "http://ollama:11434/v1",
        "http://gpu-box.local:8000/v1",
    ],
)
def test_a_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    for variable in ("OPENAI_API_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(ApiProtocol.OPENAI_COMPLETIONS, lambda c: MockProvider())
    config = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider="openai",
        id="llama",
        base_url=base_url,
        key_variable="OPENAI_API_KEY",  # unset: a public endpoint would be refused
    )
    agent = Agent.from_config(config, registry=registry)
    assert agent.model.api_key == ""


def test_a_public_endpoint_or_credentials_in_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_API_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(ApiProtocol.OPENAI_COMPLETIONS, lambda c: MockProvider())
    public = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider="openai",
        id="gpt",
        base_url="https://gateway.example.com/v1",
        key_variable="OPENAI_API_KEY",
    )
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        Agent.from_config(public, registry=registry)
    public.headers = {"Authorization": "Bearer from-a-vault"}
    Agent.from_config(public, registry=registry)


@pytest.mark.parametrize(
    "api", [ApiProtocol.BEDROCK_CONVERSE_STREAM, ApiProtocol.GOOGLE_VERTEX], ids=str
)
def test_self_authenticating_protocols_need_no_key(
    monkeypatch: pytest.MonkeyPatch, api: ApiProtocol
) -> None:
    for variable in ("GOOGLE_CLOUD_API_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(api, lambda c: MockProvider())
    config = ModelConfig(
        api=api,
        provider="cloud",
        id="model",
        base_url="https://cloud.example.com",
        key_variable="GOOGLE_CLOUD_API_KEY",
    )
    assert Agent.from_config(config, registry=registry).model.api_key == ""


# --- misuse fails at the call -----------------------------------------------------------------


def test_tools_must_be_a_list_and_plain_functions_become_tools() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: the first number
            b: the second number
        """
        return a + b

    with pytest.raises(TypeError, match="tools must be a list of tools, got function"):
        Agent.from_provider(MockProvider(), ModelConfig.mock(), tools=add)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"tools\[1\] is not a tool: 42"):
        Agent.from_provider(MockProvider(), ModelConfig.mock(), tools=[add, 42])  # type: ignore
    agent = Agent.from_provider(MockProvider(), ModelConfig.mock(), tools=[add])
    (made,) = agent.tools
    assert made.name == "add" and made.description == "Add two numbers."
    assert made.parameters["properties"]["a"]["description"] == "the first number"


async def test_a_plain_function_tool_runs_in_a_run() -> None:
    def shout(text: str) -> str:
        """Shout.

        Parameters
        ----------
        text : str
            What to shout.
        """
        return text.upper()

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("shout", text="hi")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[shout],
    )
    assert agent.tools[0].parameters["properties"]["text"]["description"] == "What to shout."
    await agent.prompt("go")
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.text == "HI" and not result.is_error


@pytest.mark.parametrize(
    ("prompt", "problem"),
    [
        (123, "prompt must be text, a message or a list of messages, got int"),
        ([UserMessage.from_text("a"), "b"], r"prompt\[1\] must be a message"),
        (None, "got NoneType"),
    ],
)
async def test_a_prompt_that_is_not_text_or_messages_is_a_type_error(
    prompt: Any, problem: str
) -> None:
    provider = MockProvider.text("never")
    agent = Agent.from_provider(provider, ModelConfig.mock())
    with pytest.raises(TypeError, match=problem):
        await agent.prompt(prompt)
    with pytest.raises(TypeError, match=problem):
        agent.stream(prompt)
    assert provider.requests == [] and not agent.is_running


def test_settings_refuse_none_as_a_policy_and_unknown_options() -> None:
    from yoagent.core import RunSettings

    with pytest.raises(TypeError, match=r"for none, use ExecutionLimits.unlimited\(\)"):
        RunSettings(limits=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="context must be"):
        RunSettings(context=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tool_middleware must be a list"):
        RunSettings(tool_middleware=lambda request: None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown run setting"):
        RunSettings().replace(compaction=False)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unknown run setting"):
        Agent.from_provider(MockProvider(), ModelConfig.mock(), compaction=False)  # type: ignore


def test_the_run_options_are_exactly_the_settings_fields() -> None:
    import dataclasses

    from yoagent.core import RunSettings
    from yoagent.core.loop import RunOptions

    assert set(RunOptions.__annotations__) == {f.name for f in dataclasses.fields(RunSettings)}


# --- leaving a stream early -------------------------------------------------------------------


@contextmanager
def nothing_printed(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> Iterator[list[Any]]:
    """Fail when anything reaches stderr, an error log, or the unraisable-exception hook."""
    unraisable: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        with caplog.at_level(logging.ERROR):
            yield unraisable
            gc.collect()
    finally:
        sys.unraisablehook = previous
    assert unraisable == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert capfd.readouterr().err == ""


def slow_agent() -> Agent:
    slow = MockReply(message=text_reply("word " * 200), delay=0.001, chunk_size=5)
    return Agent.from_provider(MockProvider([slow, text_reply("again")]), ModelConfig.mock())


async def leave_by_break(agent: Agent) -> None:
    async with agent.stream("talk") as events:
        async for event in events:
            if event.type == "message_update":
                break


async def leave_by_exception(agent: Agent) -> None:
    async def consume() -> None:
        async with agent.stream("talk") as events:
            async for event in events:
                if event.type == "message_update":
                    raise KeyError("the consumer failed")

    with pytest.raises(KeyError):
        await consume()


async def leave_aclosing(agent: Agent) -> None:
    async with aclosing(agent.stream("talk")) as events:
        async for event in events:
            if event.type == "message_update":
                break


LEAVES = [leave_by_break, leave_by_exception, leave_aclosing]


def check_closed(agent: Agent) -> None:
    assert not agent.is_running
    messages = agent.messages
    assert isinstance(messages[1], AssistantMessage)
    assert messages[1].stop_reason is StopReason.ABORTED
    assert isinstance(messages[-1], UserMessage) and messages[-1].text == CANCELLED_MARKER


@pytest.mark.parametrize("leave", LEAVES)
async def test_leaving_a_stream_early_under_asyncio_prints_nothing(
    leave: Callable[[Agent], Any],
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with nothing_printed(capfd, caplog):
        agent = slow_agent()
        await leave(agent)
        check_closed(agent)
        await agent.prompt("and again")  # the agent is free for the next run


@pytest.mark.parametrize("leave", LEAVES)
def test_leaving_a_stream_early_under_trio_prints_nothing(
    leave: Callable[[Agent], Any],
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        agent = slow_agent()
        await leave(agent)
        check_closed(agent)
        await agent.prompt("and again")

    with nothing_printed(capfd, caplog):
        trio.run(main)


async def test_a_cancel_from_outside_while_streaming_closes_the_run() -> None:
    agent = slow_agent()
    with anyio.move_on_after(0.05):
        async with agent.stream("talk") as events:
            async for _ in events:
                pass
    check_closed(agent)


async def test_plain_async_for_to_the_end_still_works() -> None:
    agent = Agent.from_provider(MockProvider.text("hello"), ModelConfig.mock())
    types = [event.type async for event in agent.stream("hi")]
    assert types[0] == "agent_start" and types[-1] == "agent_end"


async def test_a_stream_can_be_entered_once() -> None:
    agent = Agent.from_provider(MockProvider.text("a", "b"), ModelConfig.mock())
    stream = agent.stream("hi")
    async with stream as events:
        async for _ in events:
            pass
    with pytest.raises(RuntimeError, match="already started"):
        async with stream:
            pass


def test_run_errors_cross_process_boundaries_and_name_their_public_module() -> None:
    import pickle

    failed = RunFailedError(ErrorKind.AUTH, "AUTH: no", [UserMessage.from_text("hi")])
    again = pickle.loads(pickle.dumps(failed))
    assert (again.kind, again.message, again.messages) == (
        failed.kind,
        failed.message,
        failed.messages,
    )
    missing = pickle.loads(pickle.dumps(MissingApiKeyError("set X", variable="X")))
    assert missing.variable == "X" and missing.kind is ErrorKind.AUTH
    assert RunFailedError.__module__ == "yoagent.core"


async def test_leaving_a_stream_before_its_first_event_runs_nothing() -> None:
    provider = MockProvider.text("never")
    agent = Agent.from_provider(provider, ModelConfig.mock())
    async with agent.stream("hi"):
        pass
    assert provider.requests == [] and agent.messages == [] and not agent.is_running
