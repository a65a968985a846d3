"""Adding an MCP server to an Agent for the length of an ``async with``."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from yoagent.core import Agent

from ._client import CLOSE_GRACE, HANDSHAKE_TIMEOUT, STDIO_CALL_TIMEOUT, McpClient
from ._exchange import Redirects
from ._http import DEFAULT_HTTP_TIMEOUT
from ._source import McpToolSource


@asynccontextmanager
async def with_mcp_server(
    agent: Agent, client: McpClient, *, prefix: str | None = None
) -> AsyncGenerator[McpClient]:
    """Connect ``client`` and offer its tools to ``agent`` until the block ends.

    The tools come from an :class:`McpToolSource` added to the agent's
    ``settings.tool_sources``: they follow the server's ``list_changed`` and are withdrawn
    if the server goes. Leaving the block removes the source and closes the connection.
    """
    source = McpToolSource(client, prefix=prefix)  # a bad prefix fails before connecting
    async with client:
        sources = agent.settings.tool_sources
        agent.settings = agent.settings.replace(tool_sources=(*sources, source))
        try:
            yield client
        finally:
            sources = agent.settings.tool_sources
            agent.settings = agent.settings.replace(
                tool_sources=tuple(other for other in sources if other is not source)
            )


def with_mcp_server_stdio(
    agent: Agent,
    command: str,
    args: Sequence[str] = (),
    *,
    prefix: str | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    own_process_group: bool = False,
    call_timeout: float | None = STDIO_CALL_TIMEOUT,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
    close_grace: float = CLOSE_GRACE,
    name: str | None = None,
) -> AbstractAsyncContextManager[McpClient]:
    """``async with`` the stdio server ``command args...``'s tools offered to ``agent``.

    The options are :meth:`McpClient.stdio`'s; the block's value is the client.
    """
    client = McpClient.stdio(
        command,
        args,
        env=env,
        inherit_env=inherit_env,
        cwd=cwd,
        own_process_group=own_process_group,
        call_timeout=call_timeout,
        handshake_timeout=handshake_timeout,
        close_grace=close_grace,
        name=name,
    )
    return with_mcp_server(agent, client, prefix=prefix)


def with_mcp_server_http(
    agent: Agent,
    url: str,
    *,
    prefix: str | None = None,
    headers: Mapping[str, str] | None = None,
    call_timeout: float | None = None,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
    timeout: float = DEFAULT_HTTP_TIMEOUT,
    redirects: Redirects = "same-origin",
    name: str | None = None,
) -> AbstractAsyncContextManager[McpClient]:
    """``async with`` the Streamable HTTP server at ``url``'s tools offered to ``agent``.

    The options are :meth:`McpClient.http`'s; the block's value is the client. (A
    transport of your own: ``with_mcp_server(agent, McpClient(transport))``.)
    """
    client = McpClient.http(
        url,
        headers=headers,
        call_timeout=call_timeout,
        handshake_timeout=handshake_timeout,
        timeout=timeout,
        redirects=redirects,
        name=name,
    )
    return with_mcp_server(agent, client, prefix=prefix)
