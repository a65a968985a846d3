"""McpToolAdapter: one tool of an MCP server, as an AgentTool the loop can call."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from yoagent.core import TextContent, ToolContext, ToolError, ToolResult

from ._content import error_text, result_details, to_tool_result
from ._errors import McpError

if TYPE_CHECKING:
    from mcp_types import Tool

    from ._client import McpClient

PREFIX_SEPARATOR = "__"
"""Between a prefix and the server's tool name: ``github__create_issue``."""

_UNSET: Any = object()


class McpToolAdapter:
    """The server's tool ``tool`` as an :class:`~yoagent.core.AgentTool`.

    The name is the server's, or ``<prefix>__<name>`` with ``prefix`` (to tell apart
    two servers' tools of the same name); the description and input schema are the
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
    ) -> None:
        self.client = client
        self.tool = tool
        self._name = f"{prefix}{PREFIX_SEPARATOR}{tool.name}" if prefix else tool.name
        self._call_timeout = client.call_timeout if call_timeout is _UNSET else call_timeout

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self._name

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
        return f"McpToolAdapter({self.name!r}, server={self.client.name!r})"
