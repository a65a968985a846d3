"""McpToolAdapter: one tool of an MCP server, as an AgentTool the loop can call."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from yoagent.core import TextContent, ToolContext, ToolError, ToolResult

from ._content import error_text, result_details, to_tool_result
from ._errors import McpError
from ._names import PREFIX_SEPARATOR, check_prefix, is_tool_name, provider_tool_name

if TYPE_CHECKING:
    from mcp_types import Tool

    from ._client import McpClient

_UNSET: Any = object()


class McpToolAdapter:
    """The server's tool ``tool`` as an :class:`~yoagent.core.AgentTool`.

    The name is the server's, or ``<prefix>__<name>`` with ``prefix`` (to tell apart
    two servers' tools of the same name), made one every provider accepts
    (``^[a-zA-Z0-9_-]{1,64}$``): a name that is not is cut if need be, its other
    characters replaced by ``_``, and ends in a hash of the server's name (``files.read``
    → ``files_read_<8 hex digits>``); ``name`` sets it outright. The server is always
    called by its own name, ``tool.name``. The description and input schema are the
    server's, passed through. A result's ``is_error`` fails the call with the result's
    text (the model reads it; ``details`` keeps any structured content). A server that
    is gone, times out or refuses fails the call with the :class:`McpError` text.
    ``call_timeout`` defaults to the client's.
    """

    def __init__(
        self,
        client: McpClient,
        tool: Tool,
        *,
        prefix: str | None = None,
        call_timeout: float | None = _UNSET,
        name: str | None = None,
    ) -> None:
        check_prefix(prefix)
        if name is not None and not is_tool_name(name):
            raise ValueError(f"tool name {name!r} must be 1 to 64 of a-z, A-Z, 0-9, '_' and '-'")
        self.client = client
        self.tool = tool
        self._name = name if name is not None else provider_tool_name(tool.name, prefix)
        as_given = f"{prefix}{PREFIX_SEPARATOR}{tool.name}" if prefix else tool.name
        self._renamed = self._name != as_given
        self._call_timeout = client.call_timeout if call_timeout is _UNSET else call_timeout

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self._name

    @property
    def server_tool_name(self) -> str:
        """The server's own name for the tool: the one it is called by."""
        return self.tool.name

    @property
    def renamed(self) -> bool:
        """Whether the model's name is not ``<prefix>__<server's name>`` (it had to be made
        one every provider accepts, or unique)."""
        return self._renamed

    @property
    def description(self) -> str:
        """The server's description (or its title, when it gave no description)."""
        return self.tool.description or self.tool.title or ""

    @property
    def parameters(self) -> dict[str, Any]:
        """The server's input schema, as given."""
        return dict(self.tool.input_schema)

    async def execute(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on the server; the result converted for the model."""
        result = None
        with ctx.cancel.scope():
            try:
                result = await self.client.call_tool(
                    self.tool.name, arguments, call_timeout=self._call_timeout
                )
            except McpError as error:
                raise ToolError(str(error)) from None
        if result is None:
            raise ToolError(f"{self.name}: cancelled")
        redact = self.client.redact
        details = result_details(result)
        if details is not None:
            # Re-read after redaction: a URL piece never holds a JSON escape.
            details = json.loads(redact(json.dumps(details, ensure_ascii=False)))
        if result.is_error:
            raise ToolError(redact(error_text(result)), details=details)
        converted = to_tool_result(result)
        converted.details = details
        for block in converted.content:
            if isinstance(block, TextContent):
                block.text = redact(block.text)
        return converted

    def __repr__(self) -> str:
        own = f", server_tool={self.tool.name!r}" if self._renamed else ""
        return f"McpToolAdapter({self.name!r}{own}, server={self.client.name!r})"
