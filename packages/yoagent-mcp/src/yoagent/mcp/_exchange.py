"""What the HTTP exchange behind one MCP message ended with (:class:`Exchange`).

The SDK's Streamable HTTP transport turns a non-2xx answer into a JSON-RPC error without
its status, and says nothing of a notification's. Its HTTP client is ours, though
(``_http_client``), and it sends each message's POST in the context of the task that
wrote the message: an :class:`Exchange` set around a request or a notification
(:func:`watching`) is where that client writes down how the POST ended. Over stdio, or a
transport of the caller's own, it stays empty.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final, Literal

import anyio

Redirects = Literal["same-origin", "none", "any"]
"""Which redirects an HTTP client follows: within the endpoint's origin, none, or any."""

REDIRECT_POLICIES: Final[tuple[Redirects, ...]] = ("same-origin", "none", "any")


@dataclass(slots=True)
class Exchange:
    """How the POST that carried one message ended, as far as it has."""

    status: int | None = None
    """The final response's status (``None``: no response, or not an HTTP transport)."""
    reason: str = ""
    """Its reason phrase (``Service Unavailable``)."""
    refused_redirect: str | None = None
    """Why the final response, a redirect, was not followed (origins only)."""
    transport_error: Exception | None = None
    """Why the POST got no response at all (the connection dropped, say)."""
    settled: anyio.Event = field(default_factory=anyio.Event)
    """Set once the POST has a final response or has failed."""

    @property
    def failed(self) -> bool:
        """The POST got a final response outside 2xx."""
        return self.status is not None and not 200 <= self.status < 300

    def describe(self) -> str:
        """``HTTP 503 Service Unavailable``, or the redirect that was refused and why."""
        if self.refused_redirect is not None:
            return self.refused_redirect
        return f"HTTP {self.status} {self.reason}".rstrip()


_CURRENT: ContextVar[Exchange | None] = ContextVar("yoagent_mcp_exchange", default=None)


def current() -> Exchange | None:
    """The exchange a message sent from this context reports to, if one is watched."""
    return _CURRENT.get()


@contextmanager
def watching(exchange: Exchange) -> Generator[None]:
    """Inside the block, the POST of a message sent from this context fills in ``exchange``."""
    token = _CURRENT.set(exchange)
    try:
        yield
    finally:
        _CURRENT.reset(token)
