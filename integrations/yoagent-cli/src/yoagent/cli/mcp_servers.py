"""The MCP servers of a session: connected at start-up, offered to the agent as tool sources,
closed when the session ends; and what the banner and ``/mcp`` say about them.

Every client is entered in one :class:`~contextlib.AsyncExitStack`, in the task that runs
the agent (an ``McpClient`` is entered and left in the same task). A stdio server runs in
the working folder, in a process group of its own (killed whole when it ends, and out of
reach of the terminal's Ctrl+C, which stops a run, not the servers), with only the
environment yoagent-mcp passes plus its ``env``. A server that cannot start, or does not
answer its handshake, stops the start-up: :class:`McpStartError` (exit code 2).

Each server's tools are offered as ``<prefix>__<tool>``: the prefix is the config table's
name, or for a server from a flag the name it gives itself (made safe for a tool name,
and made unique). A tool whose name a provider would refuse is offered under a safe one
(yoagent-mcp's rule; ``/mcp`` shows both).
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from yoagent.mcp import PREFIX_SEPARATOR, McpClient, McpError, McpToolSource

from ._errors import CliError
from .mcp_config import McpServerSpec
from .settings import SERVER_NAME_LIMIT

LIST_TIMEOUT = 10.0
"""Seconds ``/mcp`` waits for a server's tool list before saying it did not answer."""


class McpStartError(CliError):
    """An MCP server could not be started or reached at start-up (exit code 2)."""


@dataclass(slots=True)
class ConnectedServer:
    """One connected server: what was asked for, its tool prefix, the client and the source."""

    spec: McpServerSpec
    prefix: str
    client: McpClient
    source: McpToolSource
    tool_count: int
    """How many tools it offered when it connected."""

    def summary(self) -> str:
        """``notes (3 tools)``."""
        return f"{self.prefix} ({self.tool_count} tool{'' if self.tool_count == 1 else 's'})"


class McpServers:
    """The connected servers of one session."""

    def __init__(self, servers: Sequence[ConnectedServer] = ()) -> None:
        self.servers = list(servers)

    @property
    def sources(self) -> list[McpToolSource]:
        """The tool sources to give the agent."""
        return [server.source for server in self.servers]

    def trusted(self, tool_name: str) -> bool:
        """Whether ``tool_name`` is a tool of a server whose table says ``confirm = false``."""
        prefix, separator, _ = tool_name.partition(PREFIX_SEPARATOR)
        return bool(separator) and any(
            server.prefix == prefix and not server.spec.confirm for server in self.servers
        )

    def summary(self) -> str:
        """``notes (3 tools), docs (12 tools)`` for the banner (``""`` with no server)."""
        return ", ".join(server.summary() for server in self.servers)

    async def report(self) -> list[str]:
        """For ``/mcp``: each server, where it came from, and its tools now (or why it
        has gone)."""
        lines: list[str] = []
        for server in self.servers:
            spec = server.spec
            where = f"{spec.label}, from {spec.source}"
            if spec.name is None:
                where = f"{where}; calls itself {server.client.server_name or '?'}"
            gone = server.client.exited()
            if gone is not None:
                lines.append(f"{server.prefix} ({where}): {gone}; its tools are withdrawn")
                continue
            asks = "" if spec.confirm else "; runs without asking"
            listed = None
            with anyio.move_on_after(LIST_TIMEOUT):
                listed = await server.source.tools()
            if listed is None:
                lines.append(
                    f"{server.prefix} ({where}{asks}): no tool list within {LIST_TIMEOUT:g} s"
                )
                continue
            tools = [
                f"{tool.name} (the server's {tool.server_tool_name})" if tool.renamed else tool.name
                for tool in listed
            ]
            lines.append(f"{server.prefix} ({where}{asks}): {len(tools)} tools")
            if tools:
                lines.append(f"  {', '.join(tools)}")
        return lines


def _prefix(announced: str | None, spec: McpServerSpec, taken: set[str]) -> str:
    """A unique tool prefix for a server from a flag: its own name, made safe."""
    base = spec.name
    if base is None:
        raw = announced or spec.label
        base = re.sub(r"[^A-Za-z0-9-]+", "_", raw).strip("_")[:SERVER_NAME_LIMIT] or "mcp"
    prefix, number = base, 2
    while prefix in taken:
        prefix, number = f"{base}_{number}", number + 1
    return prefix


def _client(spec: McpServerSpec, cwd: Path) -> McpClient:
    if spec.url is not None:
        return McpClient.http(spec.url, headers=spec.headers, name=spec.name)
    return McpClient.stdio(
        spec.argv[0],
        spec.argv[1:],
        env=spec.env,
        cwd=cwd,
        own_process_group=True,
        name=spec.label,
    )


def _one_line(error: McpError) -> str:
    """The error's first line and, when it quotes more (a server's stderr), its last."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else type(error).__name__
    return f"{lines[0]} … {lines[-1]}"


def _start_error(spec: McpServerSpec, error: McpError, config_file: Path | None) -> McpStartError:
    hint = ""
    if spec.name is not None:
        where = f" of {config_file}" if config_file is not None else ""
        hint = f" (enabled = false in [mcp_servers.{spec.name}]{where} starts without it)"
    return McpStartError(f"{spec.source}: {_one_line(error)}{hint}")


@asynccontextmanager
async def connect_servers(
    specs: Sequence[McpServerSpec], cwd: Path, config_file: Path | None = None
) -> AsyncGenerator[McpServers]:
    """Connect every server in ``specs`` for the length of the block, in this task.

    Raises :class:`McpStartError` for the first server that cannot start or answer (the
    ones already connected are closed); ``config_file`` is named in its message for a
    server from the file.
    """
    async with AsyncExitStack() as stack:
        connected: list[ConnectedServer] = []
        taken = {spec.name for spec in specs if spec.name is not None}
        for spec in specs:
            try:
                client = await stack.enter_async_context(_client(spec, cwd))
            except McpError as error:
                raise _start_error(spec, error, config_file) from None
            prefix = _prefix(client.server_name, spec, taken - {spec.name} if spec.name else taken)
            taken.add(prefix)
            source = McpToolSource(client, prefix=prefix)
            tools = await source.tools()
            connected.append(ConnectedServer(spec, prefix, client, source, len(tools)))
        yield McpServers(connected)
