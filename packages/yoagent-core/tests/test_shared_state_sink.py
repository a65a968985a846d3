"""A truncated tool output is stashed whole in shared state; the marker names the key."""

from __future__ import annotations

from core_helpers import call, text_reply, tool_reply

from yoagent.core import Agent, MockProvider, ModelConfig, SharedState, ToolResultMessage, tool
from yoagent.core.state import MemoryBackend


@tool
async def dump() -> str:
    """Prints a lot."""
    return "".join(f"line {i}\n" for i in range(2_000))


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


async def test_the_full_output_can_be_read_back_by_the_key_the_marker_names() -> None:
    state = SharedState(MemoryBackend())
    provider = MockProvider(
        [
            tool_reply(call("dump", "c1")),
            # Read back in pages that fit the output limit (a bigger page is cut again).
            tool_reply(
                call(
                    "shared_state",
                    "c2",
                    action="get",
                    key="tool-output-c1",
                    offset=400,
                    max_chars=400,
                )
            ),
            text_reply("read it all"),
        ]
    )
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[dump], shared_state=state, max_tool_output_chars=500
    )
    await agent.prompt("dump and read back")

    truncated, read_back = results(agent)
    assert (
        "characters truncated; the full output is in shared state under 'tool-output-c1'"
        in truncated.text
    )
    assert len(truncated.text) < 700
    full = "".join(f"line {i}\n" for i in range(2_000))
    assert await state.get("tool-output-c1") == full
    assert full[400:800] in read_back.text
    assert "shared_state" in [d.name for d in provider.requests[0].tools]
    assert [t.name for t in agent.tools] == ["dump"]  # offered per run, never stored


async def test_a_full_store_truncates_without_naming_a_key() -> None:
    state = SharedState(MemoryBackend(max_bytes=10))
    provider = MockProvider([tool_reply(call("dump", "c1")), text_reply("ok")])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[dump], shared_state=state, max_tool_output_chars=500
    )
    await agent.prompt("dump")
    (result,) = results(agent)
    assert "characters truncated ...]" in result.text
    assert "shared state" not in result.text
