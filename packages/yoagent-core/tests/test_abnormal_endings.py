"""Runs that end abnormally still leave a history a model accepts and every event closed."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import anyio
import pytest
from core_helpers import Recorder, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AssistantMessage,
    ExecutionLimits,
    MockProvider,
    ModelConfig,
    StopReason,
    ToolError,
    ToolResultMessage,
    UserMessage,
    tool,
)
from yoagent.core._sub_agent import SubAgentTool
from yoagent.core.context import context_messages
from yoagent.core.extension import CANCELLED_MARKER
from yoagent.core.provider import validate_transcript

PAIRS = [
    ("tool_execution_start", "tool_execution_end"),
    ("message_start", "message_end"),
    ("turn_start", "turn_end"),
]


def assert_closed(recorder: Recorder) -> None:
    """Every start event has its end, and the run ended exactly once."""
    counts = Counter(recorder.types)
    for start, end in PAIRS:
        assert counts[start] == counts[end], (start, counts[start], end, counts[end])
    assert counts["agent_start"] == counts["agent_end"] == 1


def assert_sendable(agent: Agent) -> None:
    """What the agent would send next is a transcript a real API accepts."""
    validate_transcript([*context_messages(agent.messages), UserMessage.from_text("next")])


@tool
async def slow() -> str:
    """Takes ten seconds."""
    await anyio.sleep(10)
    return "done"


@tool
async def interrupt() -> str:
    """Ctrl+C arrives while this runs."""
    raise KeyboardInterrupt


@tool
async def quick() -> str:
    """Returns at once."""
    return "quick"


async def test_an_outer_timeout_mid_tool_closes_the_run_cleanly(recorder: Recorder) -> None:
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("slow"), call("quick")), text_reply("later")]),
        ModelConfig.mock(),
        tools=[slow, quick],
    )
    # Long enough for the first agent run of a fresh process to reach the tools (tens of
    # ms, more under load), far short of slow's ten seconds.
    with anyio.move_on_after(2):
        await agent.prompt("go", on_event=recorder)
    assert not agent.is_running
    assert_closed(recorder)
    assert_sendable(agent)
    # The finished call keeps its result; the interrupted one is answered "cancelled".
    texts = sorted(m.text for m in agent.messages if isinstance(m, ToolResultMessage))
    assert texts == ["Tool execution cancelled.", "quick"]
    last = agent.messages[-1]
    assert isinstance(last, UserMessage) and last.text == CANCELLED_MARKER
    new = await agent.prompt("try again")
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "later"


def test_a_keyboard_interrupt_in_a_tool_propagates_unwrapped() -> None:
    """Run under trio: asyncio re-raises a KeyboardInterrupt from inside its event loop,
    past any test harness, whereas trio lets it travel up the call stack like any error."""
    import trio

    recorder = Recorder()
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("quick"), call("interrupt"))]),
        ModelConfig.mock(),
        tools=[quick, interrupt],
    )
    with pytest.raises(KeyboardInterrupt):
        trio.run(agent.prompt, "go")
    assert not agent.is_running
    assert_sendable(agent)
    agent2 = Agent.from_provider(
        MockProvider([tool_reply(call("interrupt"))]), ModelConfig.mock(), tools=[interrupt]
    )

    async def main() -> None:
        await agent2.prompt("go", on_event=recorder)

    with pytest.raises(KeyboardInterrupt):
        trio.run(main)
    assert_closed(recorder)
    assert_sendable(agent2)


async def test_a_raising_consumer_is_switched_off_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    def consumer(event: Any) -> None:
        seen.append(event.type)
        if event.type == "message_update":
            raise RuntimeError("consumer bug")

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("quick")), text_reply("fine")]),
        ModelConfig.mock(),
        tools=[quick],
    )
    with caplog.at_level(logging.ERROR, logger="yoagent.core"):
        new = await agent.prompt("go", on_event=consumer)
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "fine"
    assert seen[-1] == "message_update"  # nothing after the failure
    assert any("event consumer raised" in r.message for r in caplog.records)


async def test_an_abort_from_a_hook_sends_no_request() -> None:
    holder: list[Agent] = []

    def abort_now(ctx: object) -> list[str]:
        holder[0].abort()
        return []

    provider = MockProvider([text_reply("never")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), turn_hooks=[abort_now])
    holder.append(agent)
    await agent.prompt("go")
    assert provider.requests == []
    reply = agent.messages[1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ABORTED


async def test_an_abort_during_a_slow_input_filter_returns_at_once() -> None:
    async def slow_filter(text: str) -> object:
        await anyio.sleep(10)
        raise AssertionError("unreachable")

    provider = MockProvider([text_reply("never")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), input_filters=[slow_filter])

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        agent.abort()

    with anyio.fail_after(2):
        async with anyio.create_task_group() as group:
            group.start_soon(abort_soon)
            await agent.prompt("go")
    assert provider.requests == []


async def test_the_wall_time_limit_cuts_a_long_tool() -> None:
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("slow")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[slow],
        limits=ExecutionLimits(max_duration=0.1),
    )
    with anyio.fail_after(3):
        await agent.prompt("go")
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.text == "Tool execution cancelled."
    last = agent.messages[-1]
    assert isinstance(last, UserMessage) and last.text == "[Agent stopped: time limit reached (0s)]"


async def test_a_failing_tools_output_is_cut_too() -> None:
    @tool
    async def noisy() -> str:
        """Fails loudly."""
        raise ToolError("Exit code: 1\n" + "x" * 20_000)

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("noisy")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[noisy],
        max_tool_output_chars=1_000,
    )
    await agent.prompt("go")
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert "characters truncated" in result.text and len(result.text) < 1_100
    assert result.text.startswith("Exit code: 1")


async def test_a_text_only_turn_breaks_a_repetition() -> None:
    provider = MockProvider(
        [
            tool_reply(call("quick", "a")),
            text_reply("done 1"),
            tool_reply(call("quick", "b")),
            tool_reply(call("quick", "c")),
            text_reply("done 2"),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[quick])
    agent.follow_up("check again")
    await agent.prompt("go")
    final = agent.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text == "done 2"


async def test_a_tool_with_a_broken_definition_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        name = "broken"
        description = "Its schema cannot be built."

        @property
        def parameters(self) -> dict[str, Any]:
            raise RuntimeError("schema generation failed")

        async def execute(self, arguments: dict[str, Any], ctx: object) -> object:
            raise AssertionError("never offered, never run")

    provider = MockProvider([text_reply("ok")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[Broken(), quick])  # type: ignore[list-item]
    await agent.prompt("go")
    assert [d.name for d in provider.requests[0].tools] == ["quick"]
    assert any("definition could not be read" in r.message for r in caplog.records)


async def test_a_refusal_holding_only_tool_calls_is_not_sent_back() -> None:
    refusal = AssistantMessage(content=[call("quick")], stop_reason=StopReason.REFUSAL)
    provider = MockProvider([refusal, text_reply("ok")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[quick])
    await agent.prompt("first")
    await agent.prompt("second")
    assert [m.role for m in provider.requests[1].messages] == ["user", "user"]


async def test_a_sub_agent_stopped_before_answering_says_which_limit() -> None:
    child = SubAgentTool(
        "worker",
        "Works.",
        provider=MockProvider(),
        model=ModelConfig.mock(),
        limits=ExecutionLimits(max_turns=0),
    )
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("worker", task="t")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    await agent.prompt("go")
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert (
        result.text
        == "the sub-agent stopped before answering: [Agent stopped: turn limit reached (0 turns)]"
    )


async def test_stream_continue_raises_the_plain_error() -> None:
    agent = Agent.from_provider(
        MockProvider(), ModelConfig.mock(), messages=[UserMessage.from_text("q"), text_reply("a")]
    )
    with pytest.raises(ValueError, match="nothing to continue from"):
        async for _ in agent.stream_continue():
            pass
