"""McpToolSource: an MCP server's tools, following its list and withdrawn when it goes."""

from __future__ import annotations

from collections.abc import Sequence

from ._adapter import McpToolAdapter
from ._client import McpClient
from ._errors import McpError
from ._log import logger


class McpToolSource:
    """A :class:`~yoagent.core.ToolSource` for one connected :class:`McpClient`.

    The agent asks :meth:`tools` at the start of every run (a ``tools/list``) and again
    mid-run when :meth:`generation` moves: that is, when the server sends
    ``notifications/tools/list_changed``, and once when the server has gone — its tools
    are then withdrawn at once (an empty list, warned about once). A listing that fails
    keeps the last good list (or none).
    """

    def __init__(self, client: McpClient, *, prefix: str | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self._last: list[McpToolAdapter] = []
        self._withdrawn = False

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
        self._last = [McpToolAdapter(self.client, tool, prefix=self.prefix) for tool in listed]
        return list(self._last)

    def _withdraw(self, reason: str) -> None:
        self._last = []
        if not self._withdrawn:
            self._withdrawn = True
            server = self.client.server_name or self.client.name
            prefix = f" (prefix {self.prefix!r})" if self.prefix else ""
            logger.warning("MCP server %s%s %s: its tools are withdrawn", server, prefix, reason)

    def __repr__(self) -> str:
        return f"McpToolSource(server={self.client.name!r}, prefix={self.prefix!r})"
