"""Budget's pricing at its edges: each reply's output and cache tokens priced on their own
(never the run's running totals), free tokens costing nothing, and ``for_model`` passing
``across_runs`` on (off unless asked)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_helpers import call, steps, text_reply, tool_reply, work

from yoagent.core import (
    Agent,
    Budget,
    CostConfig,
    MockProvider,
    ModelConfig,
    SubAgentTool,
    Usage,
)
from yoagent.core.extension import RunContext, RunHooks


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


def test_a_budget_that_saw_no_run_has_spent_nothing() -> None:
    assert Budget(1.0, CostConfig(input=1.0)).spent_usd() == 0.0
    assert Budget(1.0, CostConfig(input=1.0), across_runs=True).spent_usd() == 0.0


PRICE = CostConfig(input=1_000_000.0)  # $1 per input token


def with_helper(child_model: ModelConfig) -> tuple[Agent, MockProvider]:
    """A parent calling a ``helper`` sub-agent twice (each reply of the child: 2 input
    tokens; of the parent: 1), then answering."""
    child = SubAgentTool(
        "helper",
        "Helps.",
        provider=MockProvider([text_reply("child done", usage=Usage(input=2))] * 2),
        model=child_model,
    )
    parent = MockProvider(
        [
            tool_reply(call("helper", "d1", task="help"), usage=Usage(input=1)),
            tool_reply(call("helper", "d2", task="help"), usage=Usage(input=1)),
            text_reply("parent done", usage=Usage(input=1)),
        ]
    )
    return Agent.from_provider(parent, ModelConfig.mock(), tools=[child]), parent


async def test_a_child_priced_at_its_own_rates_counts_at_what_it_cost() -> None:
    agent, _ = with_helper(replace(ModelConfig.mock(), cost=CostConfig(input=2_000_000.0)))
    budget = Budget(100.0, PRICE)
    agent.with_extension(budget)
    await agent.prompt("go")
    assert budget.spent_usd() == pytest.approx(3 * 1.0 + 2 * 4.0)  # the child's $4, not $2


async def test_an_unpriced_childs_tokens_count_at_the_budgets_rates() -> None:
    agent, _ = with_helper(ModelConfig.mock())
    budget = Budget(100.0, PRICE)
    agent.with_extension(budget)
    await agent.prompt("go")
    assert budget.spent_usd() == pytest.approx(3 * 1.0 + 2 * 2.0)


async def test_a_per_run_budget_on_the_tree_counts_the_children_in_the_parents_run() -> None:
    agent, parent = with_helper(replace(ModelConfig.mock(), cost=PRICE))
    budget = Budget(100.0, PRICE)
    agent.with_tree_extension(budget)
    await agent.prompt("go")
    assert len(parent.requests) == 3
    assert budget.spent_usd() == pytest.approx(3 * 1.0 + 2 * 2.0)  # the parent's run, last


def with_grandchild(grandchild_model: ModelConfig) -> Agent:
    """A parent calling a ``helper`` once, which calls a ``deeper`` helper once (each
    reply: 1 input token at $1 for the parent and the child; 2 for the grandchild)."""
    grandchild = SubAgentTool(
        "deeper",
        "Helps more.",
        provider=MockProvider([text_reply("grandchild done", usage=Usage(input=2))]),
        model=grandchild_model,
    )
    child = SubAgentTool(
        "helper",
        "Helps.",
        provider=MockProvider(
            [
                tool_reply(call("deeper", "g1", task="more"), usage=Usage(input=1)),
                text_reply("child done", usage=Usage(input=1)),
            ]
        ),
        model=replace(ModelConfig.mock(), cost=PRICE),
        tools=[grandchild],
    )
    parent = MockProvider(
        [
            tool_reply(call("helper", "d1", task="help"), usage=Usage(input=1)),
            text_reply("parent done", usage=Usage(input=1)),
        ]
    )
    return Agent.from_provider(parent, ModelConfig.mock(), tools=[child])


@pytest.mark.parametrize(
    ("grandchild_cost", "spent"),
    [(CostConfig(input=3_000_000.0), 2 + 2 + 6.0), (None, 2 + 2 + 2.0)],
    ids=["priced-at-its-own-rates", "unpriced"],
)
async def test_a_grandchilds_spend_counts_once_at_what_it_cost(
    grandchild_cost: CostConfig | None, spent: float
) -> None:
    agent = with_grandchild(replace(ModelConfig.mock(), cost=grandchild_cost))
    budget = Budget(100.0, PRICE)
    agent.with_extension(budget)
    await agent.prompt("go")
    assert budget.spent_usd() == pytest.approx(spent)


class SideSpend:
    """An extension that spends on a side request (1 input token) as each run starts: $0.50,
    or unpriced (``None``: the budget prices the token, $1)."""

    name = "side-spend"

    def __init__(self, cost_usd: float | None) -> None:
        self.cost_usd = cost_usd

    def start_run(self, run: RunContext) -> RunHooks:
        run.spend.record_extension(Usage(input=1), self.cost_usd)
        return RunHooks()


@pytest.mark.parametrize(
    ("side_cost", "side"), [(0.5, 0.5), (None, 1.0)], ids=["priced", "unpriced"]
)
async def test_a_shared_budget_counts_each_childs_side_spend_once(
    side_cost: float | None, side: float
) -> None:
    agent, parent = with_helper(replace(ModelConfig.mock(), cost=PRICE))
    shared = Budget(100.0, PRICE, across_runs=True)
    agent.with_tree_extension(SideSpend(side_cost))
    agent.with_tree_extension(shared)
    await agent.prompt("go")
    assert len(parent.requests) == 3
    # The parent: three replies of $1 and its side spend; each child: $2 and its own.
    assert shared.spent_usd() == pytest.approx(3 * 1.0 + side + 2 * (2.0 + side))
