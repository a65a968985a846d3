"""``with_mcp_server_stdio`` and ``with_mcp_server_http`` pass every option to the client
they build (and keep the safe defaults), and offer its tools to the agent under the prefix."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import PY_SERVER

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    TextContent,
    ToolCall,
    ToolResultMessage,
)
from yoagent.mcp import (
    CLOSE_GRACE,
    HANDSHAKE_TIMEOUT,
    STDIO_CALL_TIMEOUT,
    McpClient,
    with_mcp_server_http,
    with_mcp_server_stdio,
)


def echo_then_done(tool: str, text: str) -> MockProvider:
    return MockProvider(
        [
            AssistantMessage(content=[ToolCall(id="c1", name=tool, arguments={"text": text})]),
            AssistantMessage(content=[TextContent(text="done")]),
        ]
    )


def answered(agent: Agent) -> list[str]:
    return [m.text for m in agent.messages if isinstance(m, ToolResultMessage)]


async def env_value(client: McpClient, name: str) -> str:
    return (await client.call_tool("env", {"name": name})).content[0].text  # type: ignore[union-attr]


def launch_options(client: McpClient) -> dict[str, Any]:
    return dict(client._transport.launch.keywords)  # type: ignore[attr-defined]


async def test_with_mcp_server_stdio_keeps_the_safe_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("YOAGENT_TEST_SECRET", "sk-must-not-leak")
    agent = Agent.from_provider(echo_then_done("echo", "plain"), ModelConfig.mock())
    async with with_mcp_server_stdio(agent, sys.executable, [str(PY_SERVER), "stdio"]) as client:
        await agent.prompt("echo")
        assert await env_value(client, "YOAGENT_TEST_SECRET") == ""
        options = launch_options(client)
    assert answered(agent) == ["plain"]
    assert client.name == "python py_server.py"
    assert client.call_timeout == STDIO_CALL_TIMEOUT
    assert client.handshake_timeout == HANDSHAKE_TIMEOUT
    assert client._transport.close_grace == CLOSE_GRACE  # type: ignore[attr-defined]
    assert options["own_process_group"] is False and options["cwd"] is None


async def test_with_mcp_server_stdio_passes_every_option_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YOAGENT_TEST_SECRET", "sk-inherited")
    agent = Agent.from_provider(echo_then_done("py__echo", "prefixed"), ModelConfig.mock())
    async with with_mcp_server_stdio(
        agent,
        sys.executable,
        [str(PY_SERVER), "stdio"],
        prefix="py",
        env={"GIVEN": "yes"},
        inherit_env=True,
        cwd=tmp_path,
        own_process_group=True,
        call_timeout=17.0,
        handshake_timeout=19.0,
        close_grace=0.25,
        name="my server",
    ) as client:
        await agent.prompt("echo")
        assert await env_value(client, "GIVEN") == "yes"
        assert await env_value(client, "YOAGENT_TEST_SECRET") == "sk-inherited"
        pid = client._transport.state.process.pid  # type: ignore[attr-defined]
        assert os.getpgid(pid) == pid  # a process group of its own
        assert os.readlink(f"/proc/{pid}/cwd") == str(tmp_path)
    assert answered(agent) == ["prefixed"]
    assert client.name == "my server"
    assert (client.call_timeout, client.handshake_timeout) == (17.0, 19.0)
    assert client._transport.close_grace == 0.25  # type: ignore[attr-defined]
    assert agent.settings.tool_sources == ()


async def test_with_mcp_server_http_keeps_the_defaults(py_http_url: str) -> None:
    agent = Agent.from_provider(echo_then_done("echo", "over http"), ModelConfig.mock())
    async with with_mcp_server_http(agent, py_http_url) as client:
        await agent.prompt("echo")
        transport: Any = client._transport  # type: ignore[attr-defined]
    assert answered(agent) == ["over http"]
    assert client.name == py_http_url.removesuffix("/mcp")
    assert client.call_timeout is None and client.handshake_timeout == HANDSHAKE_TIMEOUT
    assert (transport.headers, transport.timeout, transport.redirects) == ({}, 30.0, "same-origin")


async def test_with_mcp_server_http_passes_every_option_on(py_http_url: str) -> None:
    agent = Agent.from_provider(echo_then_done("web__echo", "prefixed"), ModelConfig.mock())
    async with with_mcp_server_http(
        agent,
        py_http_url,
        prefix="web",
        headers={"X-Team": "blue"},
        call_timeout=11.0,
        handshake_timeout=13.0,
        timeout=7.0,
        redirects="none",
        name="the api",
    ) as client:
        await agent.prompt("echo")
        transport: Any = client._transport  # type: ignore[attr-defined]
        assert client.server_name == "py-test-server"
    assert answered(agent) == ["prefixed"]
    assert client.name == "the api"
    assert (client.call_timeout, client.handshake_timeout) == (11.0, 13.0)
    assert (transport.url, transport.headers) == (py_http_url, {"X-Team": "blue"})
    assert (transport.timeout, transport.redirects) == (7.0, "none")
    assert agent.settings.tool_sources == ()
