"""HTTP clients set up one way: the project's timeouts and pool limits, one TLS context
per process, no cookie jar, and the redirect policy the caller chooses.

Needs ``httpx`` (``pip install yoagent-core[http]``); :mod:`yoagent.core.support` loads
this module on first use, so ``import yoagent.core`` does not. Building a TLS context
costs 15-75 ms (most of what a new client cost); with the shared one a client costs
about a millisecond, so a package may open a client per call.

A client keeps every idle connection until its keep-alive expiry, and its pool's
bookkeeping is linear in the connections it holds (httpcore 1.0's own is quadratic in the
idle ones: see :class:`_LinearPool`).
"""

from __future__ import annotations

import contextlib
import os
import ssl
import threading
from collections import deque
from http.cookiejar import Cookie, CookieJar, CookiePolicy
from typing import Final, TypeAlias, cast
from urllib.request import Request

import httpcore
import httpx

HTTP_TIMEOUT: Final = httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=10.0)
"""The project's per-operation limits for a request and its answer (a client for long
streams, such as a model's, passes its own ``timeout``)."""

HTTP_POOL_LIMITS: Final = httpx.Limits(
    max_connections=None, max_keepalive_connections=None, keepalive_expiry=5.0
)
"""No cap on connections per server (a cap makes the 101st concurrent stream wait, then
fail) and none on the idle ones kept for reuse: an idle connection is closed when it has
been idle for ``keepalive_expiry`` (5 s), so a client never holds more sockets than it had
requests in flight in the last 5 s. A cap below the concurrency churns instead: httpcore
closes idle connections while the pool holds more than the cap, so at 1,000 concurrent
conversations with a cap of 20 almost every request opened a new connection (a TLS
handshake each against a real endpoint). What the idle sockets cost a process serving
1,000 conversations at once: a file descriptor each (the soft ``RLIMIT_NOFILE`` is often
1,024, which the requests in flight need anyway), a few KB of kernel buffers and of
httpcore state each, and the same on the server, for at most 5 s after the burst."""

_CERTIFICATE_VARIABLES: Final = ("SSL_CERT_FILE", "SSL_CERT_DIR")

_tls_lock = threading.Lock()
_tls: dict[tuple[str | None, ...], ssl.SSLContext] = {}


class _NoCookies(CookiePolicy):
    """Refuses to store or send any cookie."""

    netscape = True
    rfc2965 = False
    hide_cookie2 = True

    def set_ok(self, cookie: Cookie, request: Request) -> bool:
        return False

    def return_ok(self, cookie: Cookie, request: Request) -> bool:
        return False

    def domain_return_ok(self, domain: str, request: Request) -> bool:
        return False

    def path_return_ok(self, path: str, request: Request) -> bool:
        return False


_Connection: TypeAlias = httpcore.AsyncConnectionInterface
_Origin: TypeAlias = tuple[bytes, bytes, int]


class _Bookkeeping:
    """What a :class:`_LinearAssignment` pool knows between two passes."""

    __slots__ = ("free", "held", "origin")

    def __init__(self) -> None:
        self.free: dict[_Origin, deque[_Connection]] = {}
        """Per origin, the connections no request holds, in the order they were let go."""
        self.held: dict[int, _Connection] = {}
        """The connections requests held at the end of the last pass, by ``id``."""
        self.origin: dict[int, tuple[_Connection, _Origin]] = {}
        """Each connection this pool opened (kept alive here) and its origin, by ``id``."""


class _LinearAssignment(httpcore.AsyncConnectionPool):
    """httpcore 1.0's request-to-connection assignment, without its scans of every connection.

    httpcore 1.0.9 runs the assignment on every request and every response's end. It
    asks every connection whether it is closed, expired (a ``poll`` of its socket) and
    idle, and counts every connection again for each idle one: with 1,000 idle
    connections a request cost ~15 ms of CPU. And it may hand one idle HTTP/1.1
    connection to several requests that arrive before the first one sends on it; all but
    one then fail with ``ConnectionNotAvailable`` and go round the pool again.

    This pool keeps, per origin, the connections no request holds, in the order they were
    let go (found by comparing the connections the requests hold with the last pass's). A
    request gets the most recently freed one that is open, unexpired and available, else
    a new connection (at ``max_connections``, the oldest free one is replaced). A free
    connection is handed to one request only, and one handed to a request is not closed
    under it. Expired connections are closed from the oldest free one on, and free ones
    while the pool holds more than ``max_keepalive_connections``, as httpcore does. A pass
    looks at each request once and at the connections it hands out or closes, not at
    every connection. An HTTP/2 pool (several requests per connection) keeps httpcore's.
    """

    def _bookkeeping(self) -> _Bookkeeping:
        state: _Bookkeeping | None = self.__dict__.get("_yoagent_bookkeeping")
        if state is None:
            state = self.__dict__["_yoagent_bookkeeping"] = _Bookkeeping()
        return state

    def _forget(self, state: _Bookkeeping, connection: _Connection) -> None:
        state.origin.pop(id(connection), None)
        with contextlib.suppress(ValueError):  # the pool was closed, which empties the list
            self._connections.remove(connection)

    def _assign_requests_to_connections(self) -> list[_Connection]:
        if self._http2:
            return super()._assign_requests_to_connections()
        state = self._bookkeeping()
        held = {id(r.connection): r.connection for r in self._requests if r.connection}
        for key in state.held.keys() - held.keys():
            known = state.origin.get(key)
            if known is not None:
                state.free.setdefault(known[1], deque()).append(known[0])
        state.held = held

        closing: list[_Connection] = []
        for lane in state.free.values():
            while lane and (
                lane[0].is_closed()
                or lane[0].has_expired()
                or len(self._connections) > self._max_keepalive_connections
            ):
                connection = lane.popleft()
                self._forget(state, connection)
                if not connection.is_closed():
                    closing.append(connection)

        for request in self._requests:
            if request.connection is not None:
                continue
            origin = request.request.url.origin
            key = (origin.scheme, origin.host, origin.port)
            lane = state.free.get(key)
            chosen: _Connection | None = None
            while lane and chosen is None:
                connection = lane.pop()
                if (
                    connection.can_handle_request(origin)
                    and connection.is_available()
                    and not connection.has_expired()
                ):
                    chosen = connection
                else:  # closed, expired or never connected
                    self._forget(state, connection)
                    if not connection.is_closed():
                        closing.append(connection)
            if chosen is None:
                if len(self._connections) >= self._max_connections:
                    oldest = next((lane for lane in state.free.values() if lane), None)
                    if oldest is None:
                        continue  # waits for a connection to come free
                    victim = oldest.popleft()
                    self._forget(state, victim)
                    closing.append(victim)
                chosen = self.create_connection(origin)
                self._connections.append(chosen)
                state.origin[id(chosen)] = (chosen, key)
            held[id(chosen)] = chosen
            request.assign_to_connection(chosen)
        return closing


class _LinearPool(_LinearAssignment):
    """:class:`httpcore.AsyncConnectionPool` with the linear assignment."""


class _LinearHTTPProxy(_LinearAssignment, httpcore.AsyncHTTPProxy):
    """:class:`httpcore.AsyncHTTPProxy` with the linear assignment."""


_LINEAR_POOLS: Final[dict[type[httpcore.AsyncConnectionPool], type[_LinearAssignment]]] = (
    {httpcore.AsyncConnectionPool: _LinearPool, httpcore.AsyncHTTPProxy: _LinearHTTPProxy}
    if httpcore.__version__.startswith("1.0.")
    else {}
)
"""The pools whose assignment this module replaces, for the httpcore it was written
against (a later httpcore keeps its own)."""


def _use_linear_pools(client: httpx.AsyncClient) -> None:
    """Gives the client's direct and HTTP-proxy transports the linear assignment (the
    pools httpx built, with their TLS context, limits and proxy, are kept as they are)."""
    transports = [client._transport, *client._mounts.values()]  # pyright: ignore[reportPrivateUsage]
    for transport in transports:
        if isinstance(transport, httpx.AsyncHTTPTransport):
            pool = cast(httpcore.AsyncConnectionPool, transport._pool)  # pyright: ignore[reportPrivateUsage]
            linear = _LINEAR_POOLS.get(type(pool))
            if linear is not None:
                pool.__class__ = linear


def shared_ssl_context() -> ssl.SSLContext:
    """The process's TLS context for the current certificate settings (``SSL_CERT_FILE``,
    ``SSL_CERT_DIR``), built on first use and shared by every client."""
    certificates = tuple(os.environ.get(name) for name in _CERTIFICATE_VARIABLES)
    with _tls_lock:
        context = _tls.get(certificates)
        if context is None:
            context = _tls[certificates] = httpx.create_ssl_context()
        return context


def http_client(
    *,
    timeout: httpx.Timeout | float | None = HTTP_TIMEOUT,
    follow_redirects: bool = False,
) -> httpx.AsyncClient:
    """A new ``httpx.AsyncClient`` set up the project's way (the caller closes it).

    It uses :data:`HTTP_TIMEOUT` unless given ``timeout``, :data:`HTTP_POOL_LIMITS`, the
    :func:`shared_ssl_context`, and keeps no cookie: a ``Set-Cookie`` in one reply never
    reaches another request (a client may be shared by unrelated callers). Redirects are
    followed only with ``follow_redirects`` (one to another host would carry the
    request's credential along). Proxy variables are read as httpx does, when it is built.
    """
    client = httpx.AsyncClient(
        timeout=timeout,
        limits=HTTP_POOL_LIMITS,
        verify=shared_ssl_context(),
        cookies=CookieJar(_NoCookies()),
        follow_redirects=follow_redirects,
    )
    _use_linear_pools(client)
    return client
