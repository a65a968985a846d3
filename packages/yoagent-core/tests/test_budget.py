"""Budget: a dollar limit checked before each model request, per run or across runs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_helpers import call, steps, text_reply, tool_reply, work

from yoagent.core import (
    Agent,
    AssistantMessage,
    Budget,
    ContextTier,
    CostConfig,
    MockProvider,
    ModelConfig,
    SubAgentTool,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.core.extension import Proceed as Proceed
from yoagent.core.extension import RunContext, RunHooks, TurnContext
from yoagent.core.provider import set_price_resolver

PRICE = CostConfig(input=1_000_000.0, output=1_000_000.0)  # $1 per token: easy sums
MILLION = Usage(input=1, output=0)  # $1 at PRICE


def stopped_by_budget(messages: list[object]) -> bool:
    last = messages[-1]
    return isinstance(last, UserMessage) and last.text.startswith("[Agent stopped: budget reached")


async def test_each_request_is_priced_in_its_own_context_tier() -> None:
    """A tier applies to one request's prompt: three requests of 100 tokens stay at the
    base rate even though the run's prompts add up past the tier's threshold."""
    tiered = CostConfig(
        input=1_000_000.0,
        output=0.0,
        tiers=(ContextTier(above_prompt_tokens=150, input=5_000_000.0, output=0.0),),
    )
    provider = steps(2, Usage(input=100))
    budget = Budget(10_000.0, tiered)
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[work])
    agent.with_extension(budget)
    await agent.prompt("go")
    assert len(provider.requests) == 3
    assert budget.spent_usd() == pytest.approx(300.0)  # 3 x 100 tokens at $1, never $5


async def test_a_run_stops_before_the_request_that_would_pass_its_limit() -> None:
    provider = steps(10, Usage(input=1))
    budget = Budget(3.0, PRICE)
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[work])
    agent.with_extension(budget)
    new = await agent.prompt("go")
    assert len(provider.requests) == 3  # $1 each: the fourth is not sent
    assert stopped_by_budget(list(new))
    assert "$3.0000 of $3.00" in new[-1].text  # type: ignore[union-attr]
    assert budget.spent_usd() == pytest.approx(3.0)


async def test_per_run_budgets_start_afresh_and_across_runs_ones_share_a_total() -> None:
    per_run = Budget(2.0, PRICE)
    agent = Agent.from_provider(steps(1, Usage(input=1)), ModelConfig.mock(), tools=[work])
    agent.with_extension(per_run)
    await agent.prompt("first")
    assert per_run.spent_usd() == pytest.approx(2.0)
    agent.provider = steps(1, Usage(input=1))
    await agent.prompt("second")  # a new run: a new $2
    assert not stopped_by_budget(agent.messages)
    assert per_run.spent_usd() == pytest.approx(2.0)

    shared = Budget(3.0, PRICE, across_runs=True)
    agent = Agent.from_provider(steps(1, Usage(input=1)), ModelConfig.mock(), tools=[work])
    agent.with_extension(shared)
    await agent.prompt("first")  # spends $2
    provider = steps(5, Usage(input=1))
    agent.provider = provider
    await agent.prompt("second")  # $1 left: one request, then the limit
    assert len(provider.requests) == 1
    assert stopped_by_budget(agent.messages)
    assert shared.spent_usd() == pytest.approx(3.0)


async def test_compaction_and_decision_spend_count_at_their_recorded_price() -> None:
    class Decides(RunHooks):
        def __init__(self, run: RunContext) -> None:
            self.run = run

        async def before_model(self, turn: TurnContext) -> Proceed:
            self.run.spend.record_decision(Usage(input=5), 2.0)  # $2, priced by the caller
            self.run.spend.record_compaction(Usage(input=1), None)  # unpriced: budget's rate
            return Proceed()

    class Advisor:
        name = "advisor"

        def start_run(self, run: RunContext) -> RunHooks:
            return Decides(run)

    provider = steps(5, Usage())
    budget = Budget(5.0, PRICE)
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[work])
    agent.with_extension(Advisor())
    agent.with_extension(budget)  # runs after the advisor: sees this turn's $3
    await agent.prompt("go")
    assert len(provider.requests) == 1  # $3, then $6 >= $5 before the second request
    assert budget.spent_usd() == pytest.approx(6.0)


async def test_a_sub_agents_spend_counts_once_whether_or_not_it_inherits_the_budget() -> None:
    def parent_and_child(
        child_usage: Usage,
    ) -> tuple[Agent, MockProvider, MockProvider]:
        child_provider = MockProvider([text_reply("child done", usage=child_usage)] * 2)
        child = SubAgentTool(
            "helper",
            "Helps.",
            provider=child_provider,
            model=replace(ModelConfig.mock(), cost=PRICE),
        )
        parent_provider = MockProvider(
            [
                tool_reply(call("helper", "d1", task="help"), usage=Usage(input=1)),
                tool_reply(call("helper", "d2", task="help"), usage=Usage(input=1)),
                text_reply("parent done", usage=Usage(input=1)),
            ]
        )
        agent = Agent.from_provider(parent_provider, ModelConfig.mock(), tools=[child])
        return agent, parent_provider, child_provider

    # Installed on the parent only: the child's $2 reaches it through the call's stats.
    agent, parent_provider, _ = parent_and_child(Usage(input=2))
    budget = Budget(4.0, PRICE)
    agent.with_extension(budget)
    await agent.prompt("go")
    # $1 + $2 (child) + $1 + $2 (child) = $6 >= $4 before the third request.
    assert len(parent_provider.requests) == 2
    assert stopped_by_budget(agent.messages)
    assert budget.spent_usd() == pytest.approx(6.0)

    # Shared by the tree: the child counts itself, the parent does not count it again.
    agent, parent_provider, child_provider = parent_and_child(Usage(input=2))
    shared = Budget(10.0, PRICE, across_runs=True)
    agent.with_tree_extension(shared)
    await agent.prompt("go")
    assert len(child_provider.requests) == 2 and len(parent_provider.requests) == 3
    assert shared.spent_usd() == pytest.approx(3 * 1.0 + 2 * 2.0)  # not 11


async def test_an_unpriced_model_gets_no_budget_rather_than_a_wrong_one() -> None:
    assert Budget.for_model(1.0, ModelConfig.mock()) is None
    priced = replace(ModelConfig.mock(), cost=PRICE)
    budget = Budget.for_model(1.0, priced)
    assert budget is not None and budget.cost == PRICE

    previous = set_price_resolver(lambda provider, model_id: PRICE if model_id == "known" else None)
    try:
        assert Budget.for_model(1.0, ModelConfig.mock("known")) is not None
        assert Budget.for_model(1.0, ModelConfig.mock("other")) is None
    finally:
        set_price_resolver(previous)


@pytest.mark.parametrize("limit", [-1.0, float("nan"), float("inf")])
def test_a_limit_must_be_a_finite_non_negative_number(limit: float) -> None:
    with pytest.raises(ValueError, match="finite limit"):
        Budget(limit, PRICE)


async def test_a_zero_budget_sends_nothing() -> None:
    provider = MockProvider.text("never")
    agent = Agent.from_provider(provider, ModelConfig.mock())
    agent.with_extension(Budget(0.0, PRICE))
    new = await agent.prompt("go")
    assert provider.requests == []
    assert stopped_by_budget(list(new))
    assert not any(isinstance(m, AssistantMessage | ToolResultMessage) for m in new)
