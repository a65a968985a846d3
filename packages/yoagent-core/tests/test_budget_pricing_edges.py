"""Budget's pricing at its edges: each reply's output and cache tokens priced on their own
(never the run's running totals), free tokens costing nothing, and ``for_model`` passing
``across_runs`` on (off unless asked)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import Agent, Budget, CostConfig, MockProvider, ModelConfig, Usage, tool


@tool
async def work(n: int) -> str:
    """Do a unit of work."""
    return f"did {n}"


def steps(count: int, usage: Usage) -> MockProvider:
    replies = [tool_reply(call("work", f"c{i}", n=i), usage=usage) for i in range(count)]
    return MockProvider([*replies, text_reply("finished", usage=usage)])


@pytest.mark.parametrize(
    ("cost", "usage"),
    [
        (CostConfig(output=1_000_000.0), Usage(output=1)),
        (CostConfig(input=1.0, cache_read=1_000_000.0), Usage(cache_read=1)),
        (CostConfig(input=1.0, cache_write=1_000_000.0), Usage(cache_write=1)),
    ],
    ids=["output", "cache_read", "cache_write"],
)
async def test_each_reply_is_priced_on_its_own_tokens(cost: CostConfig, usage: Usage) -> None:
    budget = Budget(100.0, cost)
    agent = Agent.from_provider(steps(2, usage), ModelConfig.mock(), tools=[work])
    agent.with_extension(budget)
    await agent.prompt("go")
    assert budget.spent_usd() == pytest.approx(3.0)  # three replies of $1 each


async def test_tokens_priced_at_nothing_cost_nothing() -> None:
    budget = Budget(100.0, CostConfig(input=1_000_000.0))
    agent = Agent.from_provider(steps(2, Usage(output=5)), ModelConfig.mock(), tools=[work])
    agent.with_extension(budget)
    await agent.prompt("go")
    assert budget.spent_usd() == 0.0


def test_for_model_keeps_a_budget_per_run_unless_asked_for_across_runs() -> None:
    priced = replace(ModelConfig.mock(), cost=CostConfig(input=1.0))
    per_run = Budget.for_model(1.0, priced)
    shared = Budget.for_model(1.0, priced, across_runs=True)
    assert per_run is not None and per_run.across_runs is False
    assert shared is not None and shared.across_runs is True
