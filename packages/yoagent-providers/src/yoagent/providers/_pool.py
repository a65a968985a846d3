"""One shared ``httpx.AsyncClient`` per event loop, origin and proxy settings.

A provider built without a client of its own borrows one from here at its first
request, so constructing agents costs nothing on the network side and a fleet of
agents (sub-agents, an evaluation of many tasks) reuses one connection pool per
server instead of opening its own. Clients live per event loop (anyio ``RunVar``):
connections belong to the loop that opened them and cannot move to another one
(``anyio.run`` twice, or asyncio then trio). Within a loop the key is the process id
(a forked child never reuses its parent's sockets), the URL's origin, and the proxy
environment variables httpx reads when a client is built. Each client is made by the
floor's :func:`yoagent.core.support.http_client` with the stream timeout below: the
process's one TLS context, the project's pool limits, no cookie jar.

A loop's clients are closed as the loop ends: an async generator started with them is
closed by the loop's async-generator finalization (``anyio.run``, ``asyncio.run`` and
``trio.run`` all run it), and closes them. ``RunVar`` keys its values weakly by the loop,
but a client with an open connection holds the loop, so without that close the loop,
the client and its socket were never freed (300 runs kept 600 files open).

The shared clients are for many unrelated agents at once, so they keep nothing from one
request for the next beyond the connection: no cookie is stored or sent (a ``Set-Cookie``
in one tenant's reply must not reach another tenant's request), and there is no cap on
connections per server (a cap makes the 101st concurrent stream wait, then fail); both are
the floor's defaults.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncGenerator
from functools import lru_cache

import anyio
import httpx
from anyio.lowlevel import RunVar

from yoagent.core.support import http_client

DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=None)
"""Read is the longest silence allowed between two chunks of a stream: a stalled stream ends
with a NETWORK error after it. Reasoning models can think for minutes before their first
token, hence the generous default. No pool timeout: the shared pool never makes a request
wait for a connection."""

_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)

_Key = tuple[int, str, tuple[str | None, ...]]


class _LoopClients:
    """One event loop's shared clients, closed when the loop finalizes its async generators."""

    def __init__(self) -> None:
        self.clients: dict[_Key, httpx.AsyncClient] = {}
        self._closer: AsyncGenerator[None] | None = self._close_at_loop_end()
        # Run to its first `yield` now (it awaits nothing before it), which registers it with
        # the running loop's async-generator hooks: the loop closes it as it ends.
        with contextlib.suppress(StopIteration):
            self._closer.asend(None).send(None)

    # Not mutated: mutmut wraps an async generator in a second one, and the loop, closing
    # both at once as it ends, closes the inner one while the outer is running it.
    async def _close_at_loop_end(self) -> AsyncGenerator[None]:  # pragma: no mutate block
        try:
            yield
        finally:
            self._closer = None  # even finished, a generator holds its loop's finalizer hook
            await self.aclose()

    async def aclose(self) -> None:
        """Close every client (trio finalizes in a cancelled scope: shielded here)."""
        pending = list(self.clients.values())
        self.clients.clear()
        with anyio.CancelScope(shield=True):
            for client in pending:
                await client.aclose()


_clients: RunVar[_LoopClients] = RunVar("yoagent_providers_clients")


@lru_cache(maxsize=256)
def _origin(url: str) -> str:
    # Cached: parsing the URL again on every request was 2 % of a turn's CPU.
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.host}:{parsed.port or ''}"


def shared_client(url: str) -> httpx.AsyncClient:
    """The running event loop's shared client for ``url``'s origin (made on first use).

    Call it from inside the event loop that will use the client.
    """
    try:
        clients = _clients.get().clients
    except LookupError:
        loop_clients = _LoopClients()
        _clients.set(loop_clients)
        clients = loop_clients.clients
    settings = tuple(os.environ.get(name) for name in _PROXY_VARIABLES)
    key: _Key = (os.getpid(), _origin(url), settings)
    client = clients.get(key)
    if client is None or client.is_closed:
        client = http_client(timeout=DEFAULT_TIMEOUT)
        clients[key] = client
    return client


def shared_clients() -> list[httpx.AsyncClient]:
    """The running event loop's shared clients (for inspection and tests)."""
    try:
        return list(_clients.get().clients.values())
    except LookupError:
        return []


async def aclose_shared_clients() -> None:
    """Close the running event loop's shared clients; later requests open new ones.

    Optional under ``anyio.run``, ``asyncio.run`` and ``trio.run``, which close them as the
    loop ends; needed before closing a loop run another way (``loop.run_until_complete``
    then ``loop.close()`` finalizes no async generator, so its clients would stay open).
    """
    try:
        loop_clients = _clients.get()
    except LookupError:
        return
    await loop_clients.aclose()
