"""Extension spend: an extension that calls a model of its own records what that cost
through a ``SpendHandle`` from its ``RunContext``; it lands in ``SessionStats.extensions``,
in the totals and in a budget's count, and the handle closes when the run has finished."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from core_helpers import Recorder, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEnd,
    Budget,
    CostConfig,
    MockProvider,
    ModelConfig,
    RunEnd,
    SessionStats,
    StopCause,
    SubAgentTool,
    Usage,
    event_adapter,
)
from yoagent.core.extension import (
    ModelVerdict,
    Proceed,
    RunContext,
    RunHooks,
    RunOutcome,
    SpendHandle,
    TurnContext,
)
from yoagent.core.provider import set_price_resolver

JUDGE = ModelConfig.mock("judge")
JUDGE.cost = CostConfig(input=10.0, output=10.0)
JUDGE_CALL = Usage(input=1_000, output=100)
JUDGE_USD = 1_100 * 10.0 / 1e6


@pytest.fixture(autouse=True)
def no_resolver() -> Iterator[None]:
    previous = set_price_resolver(None)
    yield
    set_price_resolver(previous)


class Judging:
    """An extension that asks its own model (``JUDGE``) once before every request, and
    keeps its runs' handles."""

    name = "judging"

    def __init__(self, *, priced: bool = True) -> None:
        self.priced = priced
        self.handles: list[SpendHandle] = []

    def start_run(self, run: RunContext) -> RunHooks:
        handle = run.spend_handle()
        self.handles.append(handle)
        priced = self.priced

        class Hooks(RunHooks):
            async def before_model(self, turn: TurnContext) -> ModelVerdict:
                if priced:
                    handle.add(JUDGE_CALL, JUDGE)
                else:
                    handle.add_priced(JUDGE_CALL, None)
                return Proceed()

            async def finish(self, outcome: RunOutcome) -> None:
                handle.add_priced(Usage(output=1), CostConfig(output=1.0))  # still open here

        return Hooks()


def mock_model() -> ModelConfig:
    model = ModelConfig.mock()
    model.cost = CostConfig(input=1.0, output=1.0)
    return model


async def test_an_extensions_model_calls_are_a_bucket_of_their_own_in_the_totals() -> None:
    events = Recorder()
    agent = Agent.from_provider(
        MockProvider([text_reply("hi", usage=Usage(input=50))]), mock_model()
    ).with_extension(Judging())
    await agent.prompt("go", on_event=events)

    stats = agent.last_run_stats
    spent = stats.extensions
    assert spent.requests == 2 and spent.unpriced == 0
    assert spent.usage == Usage(input=1_000, output=101)
    assert spent.cost_usd == pytest.approx(JUDGE_USD + 1 / 1e6)
    assert stats.usage == Usage(input=50)  # the agent's own figures are its own
    assert stats.total_usage() == Usage(input=1_050, output=101)
    assert stats.total_cost_usd() == pytest.approx(50 / 1e6 + JUDGE_USD + 1 / 1e6)
    (end,) = events.of(AgentEnd)
    assert end.stats.extensions.requests == 2
    again = event_adapter.validate_json(event_adapter.dump_json(end))
    assert isinstance(again, AgentEnd) and again.stats.extensions == spent
    assert agent.stats.extensions == spent


async def test_an_unpriced_extension_call_leaves_the_total_unknown() -> None:
    agent = Agent.from_provider(MockProvider([text_reply("hi")]), mock_model()).with_extension(
        Judging(priced=False)
    )
    await agent.prompt("go")
    stats = agent.last_run_stats
    assert stats.extensions.unpriced == 1 and stats.extensions.cost_usd is None
    assert stats.total_cost_usd() is None


async def test_a_budget_counts_extension_spend() -> None:
    budget = Budget(JUDGE_USD * 1.5, CostConfig(input=1.0, output=1.0))
    agent = (
        Agent.from_provider(
            MockProvider([tool_reply(call("nothing")), text_reply("never asked")]),
            mock_model(),
        )
        .with_extension(Judging())
        .with_extension(budget)
    )
    await agent.prompt("go")
    outcome = agent.last_outcome
    assert outcome is not None and outcome.end is RunEnd.STOPPED
    assert outcome.cause is StopCause.BUDGET
    assert agent.last_run_stats.turns == 1  # the second judge call crossed the limit


async def test_the_handle_closes_when_the_run_has_finished(
    caplog: pytest.LogCaptureFixture,
) -> None:
    judging = Judging()
    agent = Agent.from_provider(MockProvider([text_reply("hi")]), mock_model()).with_extension(
        judging
    )
    await agent.prompt("go")
    (handle,) = judging.handles
    assert handle.closed
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        handle.add(JUDGE_CALL, JUDGE)
    assert "extension spend recorded after its run ended was dropped" in caplog.text
    assert agent.last_run_stats.extensions.requests == 2


async def test_a_delegated_runs_extension_spend_folds_into_the_parents_bucket() -> None:
    child = SubAgentTool(
        "helper", "Helps.", provider=MockProvider([text_reply("done")]), model=mock_model()
    )
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("helper", task="x")), text_reply("ok")]),
        mock_model(),
        tools=[child],
    ).with_tree_extension(Judging())
    await agent.prompt("go")
    spent = agent.last_run_stats.extensions
    # The root's two turns and the child's one, each with its finish record.
    assert spent.requests == (2 + 1) + (1 + 1)
    assert spent.usage == Usage(input=3_000, output=302)


def test_merging_stats_adds_the_extension_bucket() -> None:
    one, two = SessionStats(), SessionStats()
    one.extensions.record(Usage(input=1), 0.5)
    two.extensions.record(Usage(input=2), 0.25)
    one.merge(two)
    assert one.extensions.requests == 2 and one.extensions.cost_usd == 0.75
