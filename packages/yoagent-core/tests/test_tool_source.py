"""Tool sources: asked at run start, re-asked mid-run only when their generation moves."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import Agent, AgentTool, MockProvider, ModelConfig, ToolResultMessage, tool
from yoagent.core._tools.tool_source import ToolSource


def named(name: str, answer: str = "") -> AgentTool:
    @tool(name=name, description=f"The {name} tool.")
    async def impl() -> str:
        return answer or name

    return impl


class Source:
    def __init__(self, *tools: AgentTool) -> None:
        self.current = list(tools)
        self.gen = 0
        self.asked = 0

    async def tools(self) -> Sequence[AgentTool]:
        self.asked += 1
        return list(self.current)

    def generation(self) -> int:
        return self.gen


def offered(provider: MockProvider) -> list[list[str]]:
    return [[d.name for d in request.tools] for request in provider.requests]


async def test_sourced_tools_are_offered_sorted_after_static_ones() -> None:
    source = Source(named("zeta"), named("alpha"))
    assert isinstance(source, ToolSource)
    provider = MockProvider([text_reply("ok"), text_reply("ok")])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[named("static")], tool_sources=[source]
    )
    await agent.prompt("1")
    await agent.prompt("2")
    assert offered(provider) == [["static", "alpha", "zeta"], ["static", "alpha", "zeta"]]
    assert source.asked == 2  # once per run
    assert [t.name for t in agent.tools] == ["static"]  # sourced tools never outlive a run


async def test_a_mid_run_change_is_picked_up_and_a_withdrawn_tool_is_unknown() -> None:
    source = Source(named("first"))

    def change_set() -> None:
        source.current = [named("second")]
        source.gen += 1

    @tool
    async def trigger() -> str:
        """Changes the source."""
        change_set()
        return "changed"

    provider = MockProvider(
        [tool_reply(call("trigger")), tool_reply(call("first")), text_reply("done")]
    )
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[trigger], tool_sources=[source]
    )
    await agent.prompt("go")
    assert offered(provider) == [["trigger", "first"], ["trigger", "second"], ["trigger", "second"]]
    assert source.asked == 2
    withdrawn = [m for m in agent.messages if isinstance(m, ToolResultMessage)][-1]
    assert withdrawn.is_error and withdrawn.text.startswith("Tool 'first' not found")


async def test_an_unchanged_generation_is_not_re_asked_and_a_shrinking_set_shrinks() -> None:
    source = Source(named("a"), named("b"))

    @tool
    async def shrink() -> str:
        """Shrinks the source."""
        source.current = [named("a")]
        source.gen += 1
        return "ok"

    provider = MockProvider(
        [tool_reply(call("shrink", "s1")), tool_reply(call("a")), text_reply("done")]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[shrink], tool_sources=[source])
    await agent.prompt("go")
    assert offered(provider) == [["shrink", "a", "b"], ["shrink", "a"], ["shrink", "a"]]
    assert source.asked == 2


async def test_collisions_keep_static_then_earlier_source_and_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = Source(named("shared", "from first"), named("dup", "one"), named("dup", "two"))
    second = Source(named("shared", "from second"), named("static"))
    provider = MockProvider(
        [tool_reply(call("shared", "x"), call("dup", "y"), call("static", "z")), text_reply("ok")]
    )
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[named("static", "mine")], tool_sources=[first, second]
    )
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        await agent.prompt("go")
    texts = [m.text for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert texts == ["from first", "one", "mine"]
    assert offered(provider)[0] == ["static", "dup", "shared"]
    assert sum("is dropped" in r.message for r in caplog.records) == 3


async def test_a_failing_source_contributes_nothing_and_the_run_goes_on() -> None:
    class Broken:
        async def tools(self) -> Sequence[AgentTool]:
            raise ConnectionError("server gone")

        def generation(self) -> int:
            raise RuntimeError("no generation")

    provider = MockProvider([text_reply("ok")])
    agent = Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=[named("static")],
        tool_sources=[Broken(), Source(named("extra"))],
    )
    await agent.prompt("go")
    assert offered(provider) == [["static", "extra"]]
