"""The loop runs under trio as well as asyncio (it uses anyio only)."""

from __future__ import annotations

import trio
from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    MockReply,
    ModelConfig,
    StopReason,
    UserMessage,
    tool,
)
from yoagent.core.extension import CANCELLED_MARKER


@tool
async def nap(seconds: float) -> str:
    """Sleep a little."""
    await trio.sleep(seconds)
    return f"slept {seconds}"


def test_a_run_with_parallel_tools_under_trio() -> None:
    async def main() -> list[object]:
        provider = MockProvider(
            [
                tool_reply(call("nap", "a", seconds=0.01), call("nap", "b", seconds=0.02)),
                text_reply("rested"),
            ]
        )
        agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[nap])
        events = [event.type async for event in agent.stream("rest")]
        assert events[-1] == "agent_end"
        return agent.messages

    messages = trio.run(main)
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "assistant",
    ]  # type: ignore[attr-defined]


def test_abort_under_trio() -> None:
    async def main() -> list[object]:
        slow = MockReply(message=text_reply("y" * 500), delay=0.01, chunk_size=5)
        agent = Agent.from_provider(MockProvider([slow]), ModelConfig.mock())
        async with trio.open_nursery() as nursery:

            async def abort_soon() -> None:
                await trio.sleep(0.05)
                agent.abort()

            nursery.start_soon(abort_soon)
            await agent.prompt("go")
        return agent.messages

    messages = trio.run(main)
    reply = messages[1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ABORTED
    last = messages[-1]
    assert isinstance(last, UserMessage) and last.text == CANCELLED_MARKER


def test_waiting_and_instant_calls_mix_in_one_batch_under_trio() -> None:
    @tool
    async def instant(label: str) -> str:
        """Answers at once."""
        return label

    @tool
    async def waits(label: str) -> str:
        """Waits inside a cancel scope of its own."""
        with trio.fail_after(5):
            await trio.sleep(0.01)
        return label

    async def main() -> list[str]:
        provider = MockProvider(
            [
                tool_reply(
                    call("instant", "a", label="a"),
                    call("waits", "b", label="b"),
                    call("waits", "c", label="c"),
                ),
                text_reply("ok"),
            ]
        )
        agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[instant, waits])
        await agent.prompt("go")
        return [m.text for m in agent.messages if m.role == "tool_result"]  # type: ignore[union-attr]

    assert trio.run(main) == ["a", "b", "c"]
