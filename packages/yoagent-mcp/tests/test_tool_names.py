"""Tool names: whatever a server calls its tools, the model gets names every provider accepts
(``^[a-zA-Z0-9_-]{1,64}$``), unique and stable, and the server is called by its own."""

from __future__ import annotations

import hashlib
import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import TESTS

from yoagent.core import Agent, MockProvider, ModelConfig, ToolContext
from yoagent.mcp import McpClient, McpToolAdapter, McpToolSource, with_mcp_server_stdio
from yoagent.mcp._names import provider_tool_name

HOSTILE_SERVER = TESTS / "servers" / "hostile_names_server.py"
PROVIDER_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
LONG = "search_" + "x" * 80


def _hash(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def hostile_client() -> McpClient:
    return McpClient.stdio(sys.executable, [str(HOSTILE_SERVER)], call_timeout=30)


async def test_hostile_server_tool_names_become_provider_safe_and_call_the_real_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with hostile_client() as client:
        source = McpToolSource(client, prefix="srv")
        with caplog.at_level(logging.WARNING, logger="yoagent.mcp"):
            tools = await source.tools()
            assert [tool.name for tool in await source.tools()] == [tool.name for tool in tools]
        names = {tool.name: tool.tool.name for tool in tools}
        answers = {
            tool.name: (
                await tool.execute(
                    {"text": "hi"}, ToolContext(tool_call_id="c", tool_name=tool.name)
                )
            ).text
            for tool in tools
        }

    assert len(tools) == 8 and len(names) == 8  # every tool offered, every name unique
    assert all(PROVIDER_TOOL_NAME.fullmatch(name) for name in names), sorted(names)
    renamed = f"files_read_{_hash('files.read')}"
    assert (
        names
        == {
            "srv__files_read": "files_read",  # already fine: kept as it is
            f"srv__{renamed}": "files.read",
            f"srv__files_read_{_hash('files/read')}": "files/read",
            f"srv__{renamed}_2": renamed,  # the server's own name clashed with a rename
            f"srv__{LONG[:50]}_{_hash(LONG)}": LONG,
            f"srv__{LONG[:50]}_{_hash(LONG + 'y')}": LONG + "y",
            "srv__ok-name": "ok-name",
            f"srv___moji_tool_{_hash('émoji✓ tool')}": "émoji✓ tool",
        }
    )
    assert {tool.server_tool_name for tool in tools if tool.renamed} == set(names.values()) - {
        "files_read",
        "ok-name",
    }
    renamings = [r.message for r in caplog.records if "is offered to the model as" in r.message]
    assert len(renamings) == 6  # each renamed tool warned about once, not once per listing
    expected = f"the tool 'files.read' is offered to the model as 'srv__{renamed}'"
    assert expected in "".join(renamings)
    # Each adapter called the server's tool by its own name.
    assert answers == {name: f"{server_name}: hi" for name, server_name in names.items()}


async def test_an_adapter_alone_names_its_tool_the_same_way_without_a_prefix() -> None:
    async with hostile_client() as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        dotted = McpToolAdapter(client, tools["files.read"])
        long = McpToolAdapter(client, tools[LONG])
        plain = McpToolAdapter(client, tools["ok-name"])
        result = await dotted.execute(
            {"text": "x"}, ToolContext(tool_call_id="c", tool_name=dotted.name)
        )

    assert dotted.name == f"files_read_{_hash('files.read')}"
    assert long.name == f"{LONG[:55]}_{_hash(LONG)}" and len(long.name) == 64
    assert plain.name == "ok-name"
    assert result.text == "files.read: x"
    assert repr(dotted).startswith(f"McpToolAdapter('{dotted.name}', server_tool='files.read'")
    assert "server_tool" not in repr(plain)


@pytest.mark.parametrize(
    ("tool_name", "prefix"),
    [
        ("", None),
        ("", "p"),
        ("a" * 64, None),
        ("a" * 63, "p"),
        ("\n\t", "p" * 40),
        ("x" * 500, "p" * 40),
        ("__", None),
    ],
)
def test_every_provider_tool_name_fits_the_strictest_rule(tool_name: str, prefix: Any) -> None:
    name = provider_tool_name(tool_name, prefix)

    assert PROVIDER_TOOL_NAME.fullmatch(name), name
    if prefix:
        assert name.startswith(f"{prefix}__")
    assert provider_tool_name(tool_name, prefix) == name  # the same every time


def test_a_name_that_fits_is_kept_exactly() -> None:
    assert provider_tool_name("a" * 64) == "a" * 64
    assert provider_tool_name("create_issue", "github") == "github__create_issue"
    assert provider_tool_name("a" * 61, "p") == "p__" + "a" * 61  # 64 characters
    assert provider_tool_name("a" * 62, "p") == f"p__{'a' * 52}_{_hash('a' * 62)}"  # 65: cut


@pytest.mark.parametrize("prefix", ["", "my.server", "p" * 41, "a b"])
def test_a_prefix_no_provider_accepts_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="must be 1 to 40 of a-z"):
        McpToolSource(hostile_client(), prefix=prefix)


async def test_an_explicit_name_must_be_one_providers_accept() -> None:
    async with hostile_client() as client:
        tool = (await client.list_tools())[0]
        assert McpToolAdapter(client, tool, name="read").name == "read"
        with pytest.raises(ValueError, match=r"tool name 'files\.read' must be 1 to 64"):
            McpToolAdapter(client, tool, name="files.read")


class _Listing:
    """A stand-in client whose listing names one tool twice (the SDK's server never does)."""

    name = "stdio server"
    server_name = None
    tools_list_changes = 0

    def __init__(self, tools: list[Any]) -> None:
        self.listed = tools
        self.call_timeout = None

    def exited(self) -> None:
        return None

    async def list_tools(self) -> list[Any]:
        return self.listed


async def test_a_tool_listed_twice_is_offered_once_and_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from mcp_types import Tool

    twice = [
        Tool(name="search", input_schema={"type": "object"}),
        Tool(name="search", input_schema={"type": "object"}),
        Tool(name="fetch", input_schema={"type": "object"}),
    ]
    source = McpToolSource(_Listing(twice), prefix="web")  # type: ignore[arg-type]
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")

    first = await source.tools()
    again = await source.tools()

    assert [tool.name for tool in first] == ["web__search", "web__fetch"]
    assert [tool.name for tool in again] == ["web__search", "web__fetch"]
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        "MCP server stdio server lists the tool 'search' more than once; offering the first"
    ]


async def test_a_bad_prefix_fails_before_the_server_is_started(tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = f"open({str(started)!r}, 'w').close()"
    agent = Agent.from_provider(MockProvider.text("unused"), ModelConfig.mock())

    with pytest.raises(ValueError, match=r"prefix 'my\.server' must be 1 to 40"):
        async with with_mcp_server_stdio(agent, sys.executable, ["-c", script], prefix="my.server"):
            pass

    assert not started.exists() and agent.settings.tool_sources == ()
