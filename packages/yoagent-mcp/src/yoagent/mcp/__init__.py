"""MCP servers as yoagent tools: stdio and Streamable HTTP, on the official ``mcp`` SDK.

Importing this package does not import the SDK: it is loaded when a client connects.
"""

from ._adapter import McpToolAdapter
from ._agent import with_mcp_server, with_mcp_server_http, with_mcp_server_stdio
from ._client import (
    CLOSE_GRACE,
    HANDSHAKE_TIMEOUT,
    INHERITED_ENV,
    STDIO_CALL_TIMEOUT,
    McpClient,
)
from ._errors import McpError
from ._http import RESERVED_HEADERS
from ._names import PREFIX_SEPARATOR
from ._source import McpToolSource
from ._transport import McpTransport

__all__ = [
    "CLOSE_GRACE",
    "HANDSHAKE_TIMEOUT",
    "INHERITED_ENV",
    "PREFIX_SEPARATOR",
    "RESERVED_HEADERS",
    "STDIO_CALL_TIMEOUT",
    "McpClient",
    "McpError",
    "McpToolAdapter",
    "McpToolSource",
    "McpTransport",
    "with_mcp_server",
    "with_mcp_server_http",
    "with_mcp_server_stdio",
]
