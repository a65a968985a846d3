"""Smaller spec behaviours: per-call cancel tokens, delegated compaction and decision
spend, a summary still running at the end of a run, session checkpoints, custom roles."""

from __future__ import annotations

from dataclasses import replace

import anyio
import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentMessage,
    AssistantMessage,
    CostConfig,
    CustomMessage,
    ExecutionLimits,
    LlmCompaction,
    MockProvider,
    MockReply,
    ModelConfig,
    RunSettings,
    Session,
    SessionStats,
    ToolContext,
    ToolExecution,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_adapter,
    tool,
)


async def test_a_tool_cancelling_its_own_token_stops_itself_not_the_run() -> None:
    @tool
    async def gives_up(ctx: ToolContext) -> str:
        """Cancels its own work."""
        ctx.cancel.cancel()
        assert ctx.cancelled
        return "stopped my own work"

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("gives_up")), text_reply("the run went on")]),
        ModelConfig.mock(),
        tools=[gives_up],
    )
    new = await agent.prompt("go")
    result = next(m for m in new if isinstance(m, ToolResultMessage))
    assert result.text == "stopped my own work"
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "the run went on"


def test_a_delegated_runs_summaries_and_decisions_land_in_their_own_buckets() -> None:
    child = SessionStats()
    child.record_turn(Usage(input=10), 0.01)
    child.compaction.record(Usage(input=5), 0.005)
    child.decision.record(Usage(input=2), 0.002)
    parent = SessionStats()
    parent.add_delegated(child)
    assert parent.sub_agents.usage == Usage(input=10) and parent.sub_agents.runs == 1
    assert parent.compaction.usage == Usage(input=5) and parent.compaction.requests == 1
    assert parent.decision.usage == Usage(input=2) and parent.decision.requests == 1
    assert parent.total_cost_usd() == pytest.approx(0.017)
    assert parent.total_usage() == Usage(input=17)


def test_a_bucket_counts_the_requests_of_unknown_cost_even_without_usage() -> None:
    child = SessionStats()
    child.decision.record(Usage(input=2), 0.002)
    child.decision.record(Usage(), None)  # no usage reported, price unknown
    assert child.decision.requests == 2 and child.decision.unpriced == 1
    assert child.decision.cost_usd == pytest.approx(0.002)  # unknown usage adds nothing
    child.decision.record(Usage(input=3), None)
    assert child.decision.unpriced == 2 and child.decision.cost_usd is None
    parent = SessionStats()
    parent.add_delegated(child)
    parent.decision.record(Usage(input=1), 0.001)
    assert parent.decision.requests == 4 and parent.decision.unpriced == 2
    merged = SessionStats()
    merged.merge(parent)
    assert merged.decision.unpriced == 2 and merged.compaction.unpriced == 0


def long_history() -> list[AgentMessage]:
    """Enough earlier turns that compaction has a span to summarize."""
    history: list[AgentMessage] = []
    for i in range(12):
        history += [UserMessage.from_text(f"step {i} " * 50), text_reply(f"did {i} " * 50)]
    return history


async def test_a_summary_still_running_when_the_run_ends_is_billed_to_it() -> None:
    summarizer = replace(ModelConfig.mock("summarizer"), cost=CostConfig(input=1e6))
    slow_summary = MockReply(
        message=text_reply("- the summary", usage=Usage(input=3)), delay=0.05, chunk_size=100
    )
    compaction = LlmCompaction(MockProvider([slow_summary]), summarizer, start_fraction=0.01)

    @tool
    async def read() -> str:
        """Read a lot."""
        return "y" * 2_000

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("read")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[read],
        llm_compaction=compaction,
        limits=ExecutionLimits.unlimited(),
        messages=long_history(),
    )
    await agent.prompt("go")
    assert not compaction.pending
    assert agent.last_run_stats.compaction.requests == 1
    assert agent.last_run_stats.compaction.cost_usd == pytest.approx(3.0)


async def test_an_aborted_run_does_not_wait_for_its_summary() -> None:
    summarizer = ModelConfig.mock("summarizer")
    hanging = MockReply(message=text_reply("- never"), delay=30)
    compaction = LlmCompaction(MockProvider([hanging]), summarizer, start_fraction=0.01)
    agent = Agent.from_provider(
        MockProvider([MockReply(message=text_reply("x" * 400), delay=0.01, chunk_size=4)]),
        ModelConfig.mock(),
        llm_compaction=compaction,
        messages=long_history(),
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.prompt, "go")
            await anyio.sleep(0.05)
            agent.abort()


def test_seek_checkpoint_moves_back_to_where_the_conversation_was_at_rest() -> None:
    session = Session()
    ids = session.extend(
        [
            UserMessage.from_text("one"),
            AssistantMessage(content=[]),  # rest 1
            UserMessage.from_text("two"),
            tool_reply(call("x")),
            ToolResultMessage(tool_call_id="call_x", tool_name="x", content=[]),
            text_reply("answer two"),  # rest 2
            UserMessage.from_text("three"),
            text_reply("answer three"),  # rest 3 (the head)
        ]
    )
    assert session.seek_checkpoint() == ids[5]
    assert session.head == ids[5]
    assert session.seek_checkpoint() == ids[1]
    with pytest.raises(KeyError, match="0 checkpoint"):
        session.seek_checkpoint()
    session.seek(ids[7])
    assert session.seek_checkpoint(2) == ids[1]
    with pytest.raises(ValueError, match="back must be"):
        session.seek_checkpoint(0)


def test_custom_messages_use_the_role_extension_and_old_sessions_still_load() -> None:
    message = CustomMessage(kind="note", data={"a": 1})
    assert message.role == "extension"
    dumped = message_adapter.dump_python(message, mode="json")
    assert dumped["role"] == "extension"
    old = message_adapter.validate_python({"role": "custom", "kind": "note", "data": 1})
    assert isinstance(old, CustomMessage) and old.role == "extension"


async def test_a_batch_size_of_0_runs_the_calls_one_at_a_time() -> None:
    """The spec's ``Batched { size: 0 }`` runs as size 1 (the steering skip count too)."""
    running = peak = 0

    @tool
    async def step(n: int) -> str:
        """One step."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.005)
        running -= 1
        if n == 1:
            agent.steer("stop there")
        return f"step {n}"

    agent = Agent.from_provider(
        MockProvider(
            [tool_reply(*(call("step", f"c{i}", n=i) for i in range(4))), text_reply("ok")]
        ),
        ModelConfig.mock(),
        tools=[step],
        tool_execution=ToolExecution.BATCHED,
        batch_size=0,
    )
    new = await agent.prompt("go")
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    assert peak == 1
    assert [r.text for r in results][:2] == ["step 0", "step 1"]
    assert all(r.text.startswith("Skipped") for r in results[2:])
    assert len(results) == 4


def test_a_negative_batch_size_is_still_refused() -> None:
    with pytest.raises(ValueError, match="batch_size must be >= 0"):
        RunSettings(batch_size=-1)
