"""The one error this package raises."""

from __future__ import annotations

from yoagent.core import YoagentError


class McpError(YoagentError):
    """An MCP server could not be reached, refused a request, failed, or went away.

    The message names the server (a stdio server by its command, an HTTP server by its
    origin only) and never holds a secret from the server's URL.
    """
