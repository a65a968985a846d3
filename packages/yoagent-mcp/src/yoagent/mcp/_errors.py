"""The one error this package raises."""

from __future__ import annotations

from yoagent.core import YoagentError


class McpError(YoagentError):
    """An MCP server could not be reached, refused a request, failed, or went away.

    The message names the server (a stdio server by its command, an HTTP server by its
    origin only) and never holds a secret from the server's URL.
    """

    def __init__(self, message: str, *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status
        """The HTTP status of the answer that failed the request (``401``, ``404`` for a
        session the server no longer knows, ``503``, a redirect's ``307`` that was not
        followed); ``None`` when there was no such answer (stdio, a timeout, a JSON-RPC
        error in a 2xx answer, a connection that failed)."""
