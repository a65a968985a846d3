"""A scripted run's spend, priced by the layers: exact figures, tiers and cache rates
included, in every bucket (own turns, sub-agents, compaction) and on the spans."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from pricing_helpers import config, text_reply, tool_reply

from yoagent.core import (
    Agent,
    ExecutionLimits,
    LlmCompaction,
    MockProvider,
    ModelConfig,
    SubAgentTool,
    Usage,
    tool,
)
from yoagent.pricing import enable_bundled

# gpt-5.5: $5 / $30 / $0.50 cache read / $5 cache write; above 272K prompt tokens the
# whole request is $10 / $45 / $1 / $10. claude-haiku-4-5: $1 / $5 / $0.10 / $1.25.
PARENT_TURN_1 = Usage(input=1_000, output=200, cache_read=5_000)  # 6,000 prompt: base band
PARENT_TURN_2 = Usage(input=10_000, output=1_000, cache_read=270_000, cache_write=2_000)  # 282K
CHILD_TURN = Usage(input=300, output=40, cache_read=2_000, cache_write=1_000)

# By hand, in micro-dollars:
#   turn 1: 1,000×5 + 200×30 + 5,000×0.5                      =  13,500  → $0.0135
#   turn 2: 10,000×10 + 1,000×45 + 270,000×1 + 2,000×10        = 435,000  → $0.435
#   child:  300×1 + 40×5 + 2,000×0.1 + 1,000×1.25              =   1,950  → $0.00195
PARENT_COST = 0.4485
CHILD_COST = 0.00195
TOTAL_COST = 0.45045


def delegating_agent() -> Agent:
    child = SubAgentTool(
        "research",
        "Researches a question.",
        provider=MockProvider([text_reply("k is 42", CHILD_TURN)]),
        model=config("anthropic", "claude-haiku-4-5"),
    )
    parent = MockProvider(
        [
            tool_reply("research", PARENT_TURN_1, task="what is k?"),
            text_reply("k is 42", PARENT_TURN_2),
        ]
    )
    return Agent.from_provider(parent, config("openai", "gpt-5.5"), tools=[child])


async def test_a_run_costs_the_hand_computed_figure_in_every_bucket() -> None:
    enable_bundled()
    agent = delegating_agent()
    await agent.prompt("find k")

    stats = agent.last_run_stats
    assert stats.usage == PARENT_TURN_1 + PARENT_TURN_2
    assert stats.cost_usd == PARENT_COST
    assert stats.sub_agents.runs == 1 and stats.sub_agents.usage == CHILD_TURN
    assert stats.sub_agents.cost_usd == CHILD_COST
    assert stats.total_cost_usd() == TOTAL_COST
    assert agent.stats.total_cost_usd() == TOTAL_COST


async def test_without_opting_in_the_same_run_is_unpriced() -> None:
    agent = delegating_agent()
    await agent.prompt("find k")
    stats = agent.last_run_stats
    assert stats.cost_usd is None and stats.is_unpriced()
    assert stats.sub_agents.cost_usd is None and stats.total_cost_usd() is None


async def test_prices_enabled_mid_session_price_the_next_run() -> None:
    agent = Agent.from_provider(
        MockProvider([text_reply("one", PARENT_TURN_1), text_reply("two", PARENT_TURN_1)]),
        config("openai", "gpt-5.5"),
    )
    await agent.prompt("first")
    assert agent.last_run_stats.cost_usd is None
    enable_bundled()
    await agent.prompt("second")
    assert agent.last_run_stats.cost_usd == 0.0135
    assert agent.stats.cost_usd is None  # the first run stays unpriced: unknown is sticky


async def test_a_gateway_model_stays_unpriced_while_pricing_is_on() -> None:
    enable_bundled()
    agent = Agent.from_provider(
        MockProvider([text_reply("hi", PARENT_TURN_1)]), config("openrouter", "openai/gpt-5.5")
    )
    await agent.prompt("hello")
    assert agent.last_run_stats.is_unpriced()


@tool
async def read_chunk(n: int) -> str:
    """Read one chunk of a big file."""
    return f"chunk {n}: " + ("lorem ipsum dolor sit amet " * 120)


async def test_compaction_summaries_are_priced_at_the_summarizers_rates() -> None:
    enable_bundled()
    summary_usage = Usage(input=900, output=20)  # claude-sonnet-5: 900×2 + 20×10 = $0.002
    summaries = MockProvider(
        [text_reply(f"- summary {i}: read chunks", summary_usage) for i in range(50)]
    )
    provider = MockProvider(
        [*(tool_reply("read_chunk", Usage(), n=i) for i in range(60)), text_reply("done", Usage())]
    )
    agent = Agent.from_provider(
        provider,
        replace(ModelConfig.mock(), context_window=24_000, max_tokens=2_000),
        tools=[read_chunk],
        llm_compaction=LlmCompaction(summaries, config("anthropic", "claude-sonnet-5")),
        limits=ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None),
    )
    await agent.prompt("Read every chunk.")

    stats = agent.last_run_stats
    requests = stats.compaction.requests
    assert requests >= 1 and stats.compaction.usage == Usage(
        input=900 * requests, output=20 * requests
    )
    expected = float(Decimal("0.002") * requests)
    assert stats.compaction.cost_usd == expected
    assert stats.total_cost_usd() == expected  # the mock model's own turns used nothing


async def test_spans_carry_each_turns_cost_and_the_runs_totals(spans: object) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    assert isinstance(spans, InMemorySpanExporter)
    enable_bundled()
    await delegating_agent().prompt("find k")
    finished = spans.get_finished_spans()
    turns = [s.attributes for s in finished if s.name == "llm_stream" and s.attributes]
    parent_turns = [a for a in turns if a.get("gen_ai.request.model") == "gpt-5.5"]
    assert [a["yoagent.cost_usd"] for a in parent_turns] == [0.0135, 0.435]
    assert parent_turns[1]["gen_ai.usage.cache_creation.input_tokens"] == 2_000
    (child_turn,) = [a for a in turns if a.get("gen_ai.request.model") == "claude-haiku-4-5"]
    assert child_turn["yoagent.cost_usd"] == CHILD_COST
    runs = [s.attributes for s in finished if s.name == "agent_loop" and s.attributes]
    (parent_run,) = [a for a in runs if a.get("gen_ai.request.model") == "gpt-5.5"]
    assert parent_run["yoagent.cost_usd"] == PARENT_COST
    assert parent_run["yoagent.total_cost_usd"] == TOTAL_COST
    assert parent_run["gen_ai.usage.cache_read.input_tokens"] == 275_000


@pytest.fixture
def spans() -> object:
    """An in-memory exporter on the process-wide SDK tracer provider (made if absent)."""
    pytest.importorskip("opentelemetry.sdk", reason="needs opentelemetry-sdk (a dev dependency)")
    from otel_capture import capture

    return capture()
