"""``Agent.session_cost_usd()``: what the replies in the history cost — derived from the
history (a loaded one too), without delegated runs, which ``stats`` counts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AssistantMessage,
    CostConfig,
    MockProvider,
    ModelConfig,
    SubAgentTool,
    TextContent,
    Usage,
    UserMessage,
)
from yoagent.core.provider import set_price_resolver


@pytest.fixture(autouse=True)
def no_resolver() -> Iterator[None]:
    previous = set_price_resolver(None)
    yield
    set_price_resolver(previous)


def priced(model_id: str, rate: float) -> ModelConfig:
    config = ModelConfig.mock(model_id)
    config.cost = CostConfig(input=rate, output=rate)
    return config


def written_by(model: ModelConfig, text: str, usage: Usage) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)], usage=usage, model=model.id, provider=model.provider
    )


async def test_it_adds_up_the_replies_of_every_run_in_the_history() -> None:
    model = priced("m", 2.0)
    provider = MockProvider(
        [
            text_reply("a", usage=Usage(input=100, output=10)),
            text_reply("b", usage=Usage(input=300)),
        ]
    )
    agent = Agent.from_provider(provider, model)
    assert agent.session_cost_usd() == 0.0
    await agent.prompt("one")
    await agent.prompt("two")
    assert agent.session_cost_usd() == pytest.approx(410 * 2.0 / 1e6)
    assert agent.session_cost_usd() == agent.stats.total_cost_usd()


async def test_delegated_runs_are_not_in_it() -> None:
    child = SubAgentTool(
        "helper",
        "Helps.",
        provider=MockProvider([text_reply("done", usage=Usage(input=1_000))]),
        model=priced("child", 1.0),
    )
    agent = Agent.from_provider(
        MockProvider(
            [
                tool_reply(call("helper", task="x"), usage=Usage(input=10)),
                text_reply("ok", usage=Usage(input=20)),
            ]
        ),
        priced("parent", 1.0),
        tools=[child],
    )
    await agent.prompt("go")
    assert agent.session_cost_usd() == pytest.approx(30 / 1e6)
    assert agent.stats.total_cost_usd() == pytest.approx(1_030 / 1e6)


def test_it_follows_the_history_not_the_runs() -> None:
    """A history loaded from elsewhere counts with no run here; a replaced one is gone."""
    model = priced("m", 1.0)
    history = [UserMessage.from_text("hi"), written_by(model, "hello", Usage(input=500, output=5))]
    agent = Agent.from_provider(MockProvider(), model, messages=history)
    assert agent.session_cost_usd() == pytest.approx(505 / 1e6)
    assert agent.stats.total_cost_usd() == 0.0
    agent.replace_messages([])
    assert agent.session_cost_usd() == 0.0


def test_a_reply_of_another_model_is_priced_at_that_model_or_unknown() -> None:
    now, before = priced("now", 1.0), ModelConfig.mock("before")
    history = [
        UserMessage.from_text("hi"),
        written_by(before, "old", Usage(input=100)),
        UserMessage.from_text("and now"),
        written_by(now, "new", Usage(input=10)),
    ]
    agent = Agent.from_provider(MockProvider(), now, messages=history)
    assert agent.session_cost_usd() is None  # nothing knows what "before" costs
    set_price_resolver(
        lambda provider, model_id: CostConfig(input=3.0) if model_id == "before" else None
    )
    assert agent.session_cost_usd() == pytest.approx((300 + 10) / 1e6)
