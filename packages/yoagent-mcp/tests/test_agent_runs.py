"""MCP tools in real agent runs (MockProvider): list changes, withdrawal, the with-helpers."""

from __future__ import annotations

import sys
from typing import Any

from mcp_helpers import PY_SERVER

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
)
from yoagent.mcp import McpClient, McpToolSource, with_mcp_server, with_mcp_server_stdio

SERVER = [str(PY_SERVER), "stdio"]


def calls(*named: tuple[str, dict[str, Any]]) -> AssistantMessage:
    return AssistantMessage(
        content=[
            ToolCall(id=f"call_{i}_{n}", name=n, arguments=a) for i, (n, a) in enumerate(named)
        ],
        stop_reason=StopReason.TOOL_USE,
    )


def text(reply: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=reply)])


def offered(provider: MockProvider) -> list[set[str]]:
    return [{d.name for d in request.tools} for request in provider.requests]


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


async def test_an_agent_offers_a_new_tool_and_stops_offering_a_withdrawn_one_mid_run() -> None:
    provider = MockProvider(
        [
            calls(("py__add_tool", {})),
            calls(("py__remove_tool", {"name": "echo"})),
            calls(("py__extra", {})),
            calls(("py__echo", {"text": "gone?"})),
            text("done"),
        ]
    )
    async with McpClient.stdio(sys.executable, SERVER) as client:
        agent = Agent.from_provider(
            provider, ModelConfig.mock(), tool_sources=[McpToolSource(client, prefix="py")]
        )
        await agent.prompt("change your tools")
    seen = offered(provider)
    assert "py__echo" in seen[0] and "py__extra" not in seen[0]
    assert "py__extra" in seen[1]  # offered after list_changed
    assert "py__echo" not in seen[2]  # withdrawn after list_changed
    answers = results(agent)
    assert answers[2].text == "extra here" and not answers[2].is_error
    assert answers[3].is_error and answers[3].text.startswith("Tool 'py__echo' not found")


async def test_an_agent_stops_offering_the_tools_of_a_server_that_exited() -> None:
    provider = MockProvider(
        [calls(("exit_after_answer", {})), calls(("echo", {"text": "x"})), text("done")]
    )

    async with McpClient.stdio(sys.executable, SERVER) as client:
        agent = Agent.from_provider(
            provider, ModelConfig.mock(), tool_sources=[McpToolSource(client)], turn_delay=1.0
        )
        await agent.prompt("leave")
        gone = client.exited()
    seen = offered(provider)
    assert "echo" in seen[0]
    assert gone is not None and gone.startswith("exited with status 0")
    assert seen[1] == set() and seen[2] == set()  # withdrawn at once
    assert results(agent)[1].is_error  # the model called it anyway: an unknown tool now


async def test_the_stdio_helper_offers_the_tools_for_the_block_and_removes_them_after() -> None:
    provider = MockProvider([calls(("s__echo", {"text": "hi"})), text("done")])
    agent = Agent.from_provider(provider, ModelConfig.mock())
    async with with_mcp_server_stdio(agent, sys.executable, SERVER, prefix="s") as client:
        assert client.server_name == "py-test-server"
        await agent.prompt("echo")
        assert len(agent.settings.tool_sources) == 1
    assert agent.settings.tool_sources == ()
    assert results(agent)[0].text == "hi"
    assert client.exited() == "was closed"


async def test_the_generic_helper_takes_any_client() -> None:
    agent = Agent.from_provider(MockProvider([text("ok")]), ModelConfig.mock())
    async with with_mcp_server(agent, McpClient.stdio(sys.executable, SERVER)) as client:
        assert isinstance(agent.settings.tool_sources[0], McpToolSource)
        assert agent.settings.tool_sources[0].client is client
    assert agent.settings.tool_sources == ()
