"""One shared ``httpx.AsyncClient`` per event loop, origin and proxy settings.

A provider built without a client of its own borrows one from here at its first
request, so constructing agents costs nothing on the network side and a fleet of
agents (sub-agents, an evaluation of many tasks) reuses one connection pool per
server instead of opening its own. Clients live per event loop (anyio ``RunVar``):
connections belong to the loop that opened them and cannot move to another one
(``anyio.run`` twice, or asyncio then trio). Within a loop the key is the process id
(a forked child never reuses its parent's sockets), the URL's origin, and the proxy
environment variables httpx reads when a client is built. One TLS context is shared by
every client of the process: building one (≈ 15 ms) was most of what a new client cost.
"""

from __future__ import annotations

import os
import ssl
import threading

import httpx
from anyio.lowlevel import RunVar

DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=30.0)
"""Read is the longest silence allowed between two chunks of a stream: a stalled stream ends
with a NETWORK error after it. Reasoning models can think for minutes before their first
token, hence the generous default."""

POOL_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

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
_clients: RunVar[dict[_Key, httpx.AsyncClient]] = RunVar("yoagent_providers_clients")

_tls_lock = threading.Lock()
_tls: dict[tuple[str | None, ...], ssl.SSLContext] = {}


def _tls_context(certificates: tuple[str | None, ...]) -> ssl.SSLContext:
    """One TLS context per certificate setting (``SSL_CERT_FILE`` / ``SSL_CERT_DIR``)."""
    with _tls_lock:
        context = _tls.get(certificates)
        if context is None:
            context = _tls[certificates] = httpx.create_ssl_context()
        return context


def _origin(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.host}:{parsed.port or ''}"


def shared_client(url: str) -> httpx.AsyncClient:
    """The running event loop's shared client for ``url``'s origin (made on first use).

    Call it from inside the event loop that will use the client.
    """
    try:
        clients = _clients.get()
    except LookupError:
        clients = dict[_Key, httpx.AsyncClient]()
        _clients.set(clients)
    settings = tuple(os.environ.get(name) for name in _PROXY_VARIABLES)
    key: _Key = (os.getpid(), _origin(url), settings)
    client = clients.get(key)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT, limits=POOL_LIMITS, verify=_tls_context(settings[-2:])
        )
        clients[key] = client
    return client


def shared_clients() -> list[httpx.AsyncClient]:
    """The running event loop's shared clients (for inspection and tests)."""
    try:
        return list(_clients.get().values())
    except LookupError:
        return []


async def aclose_shared_clients() -> None:
    """Close the running event loop's shared clients; later requests open new ones.

    Optional: call it before the loop ends to close idle connections politely
    (otherwise they are dropped with the loop).
    """
    try:
        clients = _clients.get()
    except LookupError:
        return
    pending = list(clients.values())
    clients.clear()
    for client in pending:
        await client.aclose()
