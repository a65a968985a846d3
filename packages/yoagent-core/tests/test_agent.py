"""The Agent wrapper: construction, runs, queues, history and spend."""

from __future__ import annotations

from contextlib import aclosing
from importlib.metadata import PackageNotFoundError

import anyio
import pytest
from core_helpers import FAST_RETRY, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentBusyError,
    ApiProtocol,
    AssistantMessage,
    CostConfig,
    CustomMessage,
    MockProvider,
    MockReply,
    ModelConfig,
    StopReason,
    Usage,
    UserMessage,
    tool,
)
from yoagent.core.extension import CANCELLED_MARKER
from yoagent.core.provider import ProviderNotFoundError, ProviderRegistry, StreamConfig


@tool
async def echo(text: str) -> str:
    """Echo."""
    return text


def mock_agent(*replies: object, **options: object) -> tuple[Agent, MockProvider]:
    provider = MockProvider(replies)  # type: ignore[arg-type]
    return Agent.from_provider(provider, ModelConfig.mock(), retry=FAST_RETRY, **options), provider  # type: ignore[arg-type]


async def test_prompt_runs_to_completion_and_keeps_the_history() -> None:
    agent, _ = mock_agent(tool_reply(call("echo", text="hi")), text_reply("done"), tools=[echo])
    new = await agent.prompt("say hi")
    assert [m.role for m in new] == ["user", "assistant", "tool_result", "assistant"]
    assert agent.messages == new
    agent.messages.clear()  # a copy: the agent's history is untouched
    assert len(agent.messages) == 4


async def test_stream_yields_the_run_as_events() -> None:
    agent, _ = mock_agent(text_reply("streamed"))
    types = [event.type async for event in agent.stream("hi")]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert "message_update" in types
    assert agent.messages[-1].role == "assistant"


async def test_breaking_out_of_a_stream_cancels_the_run_and_frees_the_agent() -> None:
    slow = MockReply(message=text_reply("x" * 200), delay=0.01, chunk_size=5)
    agent, _ = mock_agent(slow, text_reply("next"))
    with anyio.fail_after(5):
        async with aclosing(agent.stream("hi")) as events:
            async for event in events:
                if event.type == "message_update":
                    break
    assert not agent.is_running
    reply = await agent.prompt("again")
    assert isinstance(reply[-1], AssistantMessage) and reply[-1].text == "next"


async def test_abort_cancels_a_running_prompt() -> None:
    slow = MockReply(message=text_reply("x" * 1000), delay=0.01, chunk_size=5)
    agent, _ = mock_agent(slow)

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        agent.abort()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(abort_soon)
            new = await agent.prompt("long answer please")
    reply = new[1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ABORTED
    assert 0 < len(reply.text) < 1000
    last = agent.messages[-1]
    assert isinstance(last, UserMessage) and last.text == CANCELLED_MARKER
    agent.abort()  # idle: nothing happens


async def test_one_run_at_a_time() -> None:
    slow = MockReply(message=text_reply("x" * 100), delay=0.01, chunk_size=5)
    agent, _ = mock_agent(slow)
    async with anyio.create_task_group() as group:
        group.start_soon(agent.prompt, "first")
        await anyio.sleep(0.02)
        assert agent.is_running
        with pytest.raises(AgentBusyError):
            await agent.prompt("second")
        with pytest.raises(AgentBusyError):
            agent.reset()
        agent.abort()


async def test_steer_and_follow_up_are_delivered_to_the_run() -> None:
    agent, provider = mock_agent(
        tool_reply(call("echo", text="a")),
        text_reply("steered"),
        text_reply("followed"),
        tools=[echo],
    )

    @tool
    async def noop() -> str:
        """Nothing."""
        return ""

    agent.steer("change of plan")
    agent.follow_up("one more thing")
    await agent.prompt("start")
    users = [m.text for m in agent.messages if isinstance(m, UserMessage)]
    assert users == ["start", "change of plan", "one more thing"]
    assert len(provider.requests) == 3


async def test_continue_and_replace_and_reset() -> None:
    agent, _ = mock_agent(text_reply("one"), text_reply("two"))
    await agent.prompt("q")
    agent.replace_messages([UserMessage.from_text("fresh start")])
    new = await agent.continue_()
    assert isinstance(new[0], AssistantMessage) and new[0].text == "two"
    agent.append_message(CustomMessage(kind="note", data={"k": 1}))
    assert agent.messages[-1].role == "extension"
    agent.reset()
    assert agent.messages == []
    assert agent.stats.turns == 0


async def test_custom_messages_never_reach_the_model() -> None:
    agent, provider = mock_agent(text_reply("ok"))
    agent.append_message(CustomMessage(kind="ui", data="hidden"))
    await agent.prompt("hi")
    assert [m.role for m in provider.requests[0].messages] == ["user"]


async def test_stats_per_run_and_totals_across_runs() -> None:
    config = ModelConfig.mock()
    config.cost = CostConfig(input=1.0, output=2.0)
    provider = MockProvider(
        [
            text_reply("a", usage=Usage(input=100, output=10)),
            text_reply("b", usage=Usage(input=200, output=20)),
        ]
    )
    agent = Agent.from_provider(provider, config)
    await agent.prompt("1")
    await agent.prompt("2")
    assert agent.last_run_stats.usage == Usage(input=200, output=20)
    assert agent.stats.turns == 2
    assert agent.stats.usage == Usage(input=300, output=30)
    assert agent.stats.cost_usd == pytest.approx((300 * 1.0 + 30 * 2.0) / 1e6)


async def test_unpriced_usage_is_none_not_zero() -> None:
    agent, _ = mock_agent(text_reply("a", usage=Usage(input=5)))
    await agent.prompt("1")
    assert agent.stats.cost_usd is None
    assert agent.stats.is_unpriced()


def make_registry(created: list[ModelConfig]) -> ProviderRegistry:
    registry = ProviderRegistry(load_entry_points=False)

    def factory(config: ModelConfig) -> MockProvider:
        created.append(config)
        return MockProvider.text("from registry")

    registry.register(ApiProtocol.OPENAI_COMPLETIONS, factory)
    return registry


async def test_from_config_resolves_the_provider_and_the_env_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "  sk-groq  ")
    created: list[ModelConfig] = []
    config = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS, provider="groq", id="llama", key_variable="GROQ_API_KEY"
    )
    agent = Agent.from_config(config, registry=make_registry(created), system_prompt="s")
    assert created[0].api_key == "sk-groq"
    assert agent.model.api_key == "sk-groq"
    new = await agent.prompt("hi")
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "from registry"


def test_an_explicit_key_wins_and_bedrock_reads_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("API_KEY", "generic")
    created: list[ModelConfig] = []
    registry = make_registry(created)
    Agent.from_config(
        ModelConfig(
            api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="m", api_key="explicit"
        ),
        registry=registry,
    )
    assert created[-1].api_key == "explicit"
    registry.register(ApiProtocol.BEDROCK_CONVERSE_STREAM, lambda c: MockProvider())
    agent = Agent.from_config(
        ModelConfig(api=ApiProtocol.BEDROCK_CONVERSE_STREAM, provider="bedrock", id="m"),
        registry=registry,
    )
    assert agent.model.api_key == ""


def test_set_model_reselects_a_registry_provider_but_keeps_an_explicit_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("YOAGENT_API_KEY", raising=False)
    monkeypatch.delenv("API_KEY", raising=False)
    monkeypatch.setenv("XAI_API_KEY", "xai-key")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    created: list[ModelConfig] = []
    agent = Agent.from_config(
        ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="a"),
        registry=make_registry(created),
    )
    first = agent.provider
    agent.set_model(
        ModelConfig(
            api=ApiProtocol.OPENAI_COMPLETIONS,
            provider="xai",
            id="grok",
            key_variable="XAI_API_KEY",
        )
    )
    assert agent.provider is not first
    assert agent.model.api_key == "xai-key"

    explicit = MockProvider()
    own = Agent.from_provider(explicit, ModelConfig.mock())
    own.set_model(ModelConfig.mock("other"))
    assert own.provider is explicit
    assert own.model.id == "other"


def test_a_missing_provider_names_the_package_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def absent(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr("yoagent.core._provider.registry.version", absent)
    registry = ProviderRegistry(load_entry_points=False)
    with pytest.raises(ProviderNotFoundError, match="pip install yoagent-providers"):
        Agent.from_config(
            ModelConfig(api=ApiProtocol.GOOGLE_VERTEX, provider="vertex", id="g"), registry=registry
        )


async def test_aclose_closes_the_provider() -> None:
    closed: list[bool] = []

    class Closable(MockProvider):
        async def aclose(self) -> None:
            closed.append(True)

    async with Agent.from_provider(Closable(), ModelConfig.mock()):
        pass
    assert closed == [True]


async def test_the_stream_config_carries_the_agent_settings() -> None:
    from yoagent.core import ThinkingLevel

    agent, provider = mock_agent(
        text_reply("ok"),
        thinking_level=ThinkingLevel.HIGH,
        max_tokens=123,
        temperature=0.5,
        system_prompt="sys",
    )
    await agent.prompt("q")
    request: StreamConfig = provider.requests[0]
    assert (
        request.thinking_level,
        request.max_tokens,
        request.temperature,
        request.system_prompt,
    ) == (
        ThinkingLevel.HIGH,
        123,
        0.5,
        "sys",
    )
    assert request.output_schema is None
