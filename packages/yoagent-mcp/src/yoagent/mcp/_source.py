"""McpToolSource: an MCP server's tools, following its list and withdrawn when it goes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._adapter import McpToolAdapter
from ._client import McpClient
from ._errors import McpError
from ._log import logger
from ._names import check_prefix, provider_tool_name, with_suffix

if TYPE_CHECKING:
    from mcp_types import Tool


class McpToolSource:
    """A :class:`~yoagent.core.ToolSource` for one connected :class:`McpClient`.

    The agent asks :meth:`tools` at the start of every run (a ``tools/list``) and again
    mid-run when :meth:`generation` moves: that is, when the server sends
    ``notifications/tools/list_changed``, and once when the server has gone — its tools
    are then withdrawn at once (an empty list, warned about once). A listing that fails
    keeps the last good list (or none).

    Each tool gets a name every provider accepts (see :class:`McpToolAdapter`), unique
    in the list: a tool the server lists twice under one name is offered once (warned
    about once).
    """

    def __init__(self, client: McpClient, *, prefix: str | None = None) -> None:
        check_prefix(prefix)
        self.client = client
        self.prefix = prefix
        self._last: list[McpToolAdapter] = []
        self._withdrawn = False
        self._warned: set[str] = set()
        self._warned_renamed: set[str] = set()

    def generation(self) -> int:
        """The server's ``list_changed`` count, plus one once it has gone."""
        changes = self.client.tools_list_changes
        return changes + 1 if self.client.exited() is not None else changes

    async def tools(self) -> Sequence[McpToolAdapter]:
        """The server's tools now: none once it has gone, the last list if listing fails."""
        gone = self.client.exited()
        if gone is not None:
            self._withdraw(gone)
            return []
        try:
            listed = await self.client.list_tools()
        except McpError as error:
            gone = self.client.exited()
            if gone is not None:
                self._withdraw(gone)
                return []
            logger.warning("%s; keeping its last list of %d tools", error, len(self._last))
            return list(self._last)
        self._last = self._adapters(listed)
        return list(self._last)

    def _adapters(self, listed: Sequence[Tool]) -> list[McpToolAdapter]:
        adapters: list[McpToolAdapter] = []
        listed_names: set[str] = set()
        taken: set[str] = set()
        for tool in listed:
            if tool.name in listed_names:
                if tool.name not in self._warned:
                    self._warned.add(tool.name)
                    logger.warning(
                        "MCP server %s lists the tool %r more than once; offering the first",
                        self.client.name,
                        tool.name,
                    )
                continue
            listed_names.add(tool.name)
            name = base = provider_tool_name(tool.name, self.prefix)
            number = 2
            while name in taken:  # two of the server's names came out the same
                name, number = with_suffix(base, number), number + 1
            taken.add(name)
            adapter = McpToolAdapter(self.client, tool, prefix=self.prefix, name=name)
            if adapter.renamed and tool.name not in self._warned_renamed:
                self._warned_renamed.add(tool.name)
                logger.warning(
                    "MCP server %s: the tool %r is offered to the model as %r (tool names "
                    "hold only letters, digits, '_' and '-', at most 64, and are unique)",
                    self.client.server_name or self.client.name,
                    tool.name,
                    name,
                )
            adapters.append(adapter)
        return adapters

    def _withdraw(self, reason: str) -> None:
        self._last = []
        if not self._withdrawn:
            self._withdrawn = True
            server = self.client.server_name or self.client.name
            prefix = f" (prefix {self.prefix!r})" if self.prefix else ""
            logger.warning("MCP server %s%s %s: its tools are withdrawn", server, prefix, reason)

    def __repr__(self) -> str:
        return f"McpToolSource(server={self.client.name!r}, prefix={self.prefix!r})"
