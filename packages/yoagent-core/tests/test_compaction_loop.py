"""The loop compacts as it goes: before a request that would not fit, and after an overflow."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentMessage,
    AssistantMessage,
    ErrorKind,
    ExecutionLimits,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    RetryConfig,
    RunFailedError,
    StopReason,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
    tool,
)
from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.estimate import estimate_messages
from yoagent.core._types.markers import COMPACTION_MARKER, SUMMARY_PREFIX
from yoagent.core.provider import DeltaSink, StreamConfig

TASK = "Refactor the parser module and keep every test green."


@tool
async def read_chunk(n: int) -> str:
    """Read one chunk of a big file."""
    return f"chunk {n}: " + ("lorem ipsum dolor sit amet " * 120)


def small_model() -> ModelConfig:
    return replace(ModelConfig.mock(), context_window=24_000, max_tokens=2_000)


async def test_a_300_turn_session_compacts_as_it_goes_and_keeps_the_task() -> None:
    turns = 300
    provider = MockProvider(
        [
            *(tool_reply(call("read_chunk", f"c{i}", n=i)) for i in range(turns)),
            text_reply("refactored"),
        ]
    )
    agent = Agent.from_provider(
        provider,
        small_model(),
        tools=[read_chunk],
        limits=ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None),
    )
    await agent.prompt(TASK)

    final = agent.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text == "refactored"
    compactions = agent.last_run_stats.compactions
    assert compactions >= 5
    budget = ContextConfig.for_model(small_model()).budget()
    for request in provider.requests:
        first = request.messages[0]
        assert isinstance(first, UserMessage) and first.text == TASK
        assert estimate_messages(request.messages) <= budget
    last_request = provider.requests[-1].messages
    assert any(
        isinstance(m, UserMessage) and m.text.startswith((SUMMARY_PREFIX, COMPACTION_MARKER))
        for m in last_request
    )
    # The newest turn always survives whole: its call and its result.
    assert (
        isinstance(last_request[-1], ToolResultMessage)
        and last_request[-1].tool_call_id == f"c{turns - 1}"
    )
    print(f"compactions over {turns} turns: {compactions}")


async def test_an_overflow_compacts_once_and_retries() -> None:
    history: list[AgentMessage] = [UserMessage.from_text(TASK)]
    for i in range(12):
        history += [
            tool_reply(call("read_chunk", f"h{i}", n=i)),
            ToolResultMessage(
                tool_call_id=f"h{i}", tool_name="read_chunk", content=[TextContent(text="x" * 3000)]
            ),
        ]
    overflow = ProviderError(
        ErrorKind.CONTEXT_OVERFLOW, "prompt is too long: 250000 tokens > 200000 maximum", status=400
    )
    provider = MockProvider([overflow, text_reply("fits now")])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), messages=history, retry=RetryConfig.none()
    )
    await agent.prompt("continue")
    assert agent.last_run_stats.compactions == 1
    assert len(provider.requests) == 2
    assert len(provider.requests[1].messages) < len(provider.requests[0].messages)
    final = agent.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text == "fits now"


async def test_a_second_overflow_is_the_answer() -> None:
    history: list[AgentMessage] = [UserMessage.from_text(TASK)]
    for i in range(6):
        history += [
            tool_reply(call("read_chunk", f"h{i}", n=i)),
            ToolResultMessage(
                tool_call_id=f"h{i}", tool_name="read_chunk", content=[TextContent(text="y" * 3000)]
            ),
        ]
    overflow = ProviderError(ErrorKind.CONTEXT_OVERFLOW, "maximum context length exceeded")
    provider = MockProvider([overflow, overflow, text_reply("never")])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), messages=history, retry=RetryConfig.none()
    )
    with pytest.raises(RunFailedError) as raised:
        await agent.prompt("continue")
    assert raised.value.kind is ErrorKind.CONTEXT_OVERFLOW
    final = agent.messages[-1]
    assert isinstance(final, AssistantMessage) and final.stop_reason is StopReason.ERROR
    assert final.error_message == "CONTEXT_OVERFLOW: maximum context length exceeded"
    assert len(provider.requests) == 2


async def test_compaction_can_be_turned_off() -> None:
    provider = MockProvider([ProviderError(ErrorKind.CONTEXT_OVERFLOW, "prompt is too long")])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), context="off", retry=RetryConfig.none()
    )
    with pytest.raises(RunFailedError):
        await agent.prompt("hi")
    assert agent.last_run_stats.compactions == 0
    assert len(provider.requests) == 1


async def test_model_written_summaries_are_used_when_ready_and_their_spend_recorded() -> None:
    from yoagent.core import CostConfig, LlmCompaction, Usage

    summarizer_model = replace(
        ModelConfig.mock("summarizer"), cost=CostConfig(input=1.0, output=1.0)
    )
    summaries = MockProvider(
        [
            text_reply(
                f"- summary {i}: read chunks, nothing broken", usage=Usage(input=900, output=20)
            )
            for i in range(50)
        ]
    )
    turns = 60
    provider = MockProvider(
        [*(tool_reply(call("read_chunk", f"c{i}", n=i)) for i in range(turns)), text_reply("done")]
    )
    agent = Agent.from_provider(
        provider,
        small_model(),
        tools=[read_chunk],
        llm_compaction=LlmCompaction(summaries, summarizer_model),
        limits=ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None),
    )
    await agent.prompt(TASK)

    stats = agent.last_run_stats
    assert stats.compactions >= 1
    assert stats.compaction.requests == len(summaries.requests) >= 1
    assert stats.compaction.usage == Usage(
        input=900 * stats.compaction.requests, output=20 * stats.compaction.requests
    )
    assert stats.compaction.cost_usd is not None and stats.compaction.cost_usd > 0
    assert stats.total_usage().input == stats.usage.input + stats.compaction.usage.input
    # The summarizer saw the turns after the head (the task stays verbatim) as a transcript,
    # and its words reached the model.
    first_summary_request = summaries.requests[0].messages[0]
    assert isinstance(first_summary_request, UserMessage)
    assert first_summary_request.text.startswith(
        'TOOL CALL read_chunk: {"n": 0}\nTOOL RESULT read_chunk (ok): chunk 0:'
    )
    assert any(
        isinstance(m, UserMessage) and m.text.startswith(SUMMARY_PREFIX) and "- summary" in m.text
        for request in provider.requests
        for m in request.messages
    )


async def test_a_failing_summarizer_leaves_the_mechanical_summary() -> None:
    from yoagent.core import LlmCompaction

    summaries = MockProvider([ProviderError(ErrorKind.API, "summarizer down") for _ in range(50)])
    turns = 40
    provider = MockProvider(
        [*(tool_reply(call("read_chunk", f"c{i}", n=i)) for i in range(turns)), text_reply("done")]
    )
    agent = Agent.from_provider(
        provider,
        small_model(),
        tools=[read_chunk],
        llm_compaction=LlmCompaction(summaries, ModelConfig.mock("summarizer")),
        limits=ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None),
    )
    await agent.prompt(TASK)
    final = agent.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text == "done"
    assert agent.last_run_stats.compactions >= 1
    assert agent.last_run_stats.compaction.requests == 0


async def test_a_provider_counting_three_times_the_estimate_still_gets_requests_that_fit() -> None:
    """Dense text: the real usage the provider reports is 3x the heuristic. Compaction
    learns that and keeps every later request within the budget in real tokens."""
    model = replace(ModelConfig.mock(), context_window=10_000, max_tokens=1_000)
    budget = ContextConfig.for_model(model).budget()
    real_sizes: list[int] = []

    class Dense(MockProvider):
        async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
            real = 3 * estimate_messages(config.messages)
            real_sizes.append(real)
            reply = await super().stream(config, sink)
            reply.usage = Usage(input=real, output=10)
            return reply

    agent = Agent.from_provider(Dense([text_reply("ok " + "x" * 4_000) for _ in range(6)]), model)
    for _ in range(5):
        await agent.prompt("q" * 4_000)
    assert all(size <= budget for size in real_sizes[2:]), real_sizes
    assert agent.stats.compactions >= 1


async def test_llm_summaries_follow_each_compaction_and_lose_no_turn() -> None:
    """After a compaction used a model-written summary, the next summary is requested for
    the new history, and turns summarized mechanically meanwhile are never dropped."""
    from yoagent.core import LlmCompaction

    summaries = MockProvider([text_reply(f"- model summary {i}") for i in range(50)])
    turns = 80
    provider = MockProvider(
        [
            MockReply(message=tool_reply(call("read_chunk", f"c{i}", n=i)), delay=0.001)
            for i in range(turns)
        ]
        + [text_reply("done")]
    )
    agent = Agent.from_provider(
        provider,
        small_model(),
        tools=[read_chunk],
        llm_compaction=LlmCompaction(summaries, ModelConfig.mock("summarizer")),
        limits=ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None),
    )
    await agent.prompt(TASK)
    compactions = agent.last_run_stats.compactions
    assert compactions >= 3
    # More than one summary request: a fresh one after compactions consumed the last.
    assert len(summaries.requests) >= 2
    summary = next(
        m
        for m in agent.messages
        if isinstance(m, UserMessage) and m.text.startswith(SUMMARY_PREFIX)
    )
    assert "- model summary" in summary.text
