"""The request-to-connection assignment :func:`~.http.http_client` gives httpx's pools.

Imported with the first client (httpx itself imports httpcore only when it builds a
transport): importing :mod:`.http` loads neither.
"""

from __future__ import annotations

import contextlib
from collections import deque
from typing import Final, TypeAlias, cast

import httpcore
import httpx

_Connection: TypeAlias = httpcore.AsyncConnectionInterface
_Origin: TypeAlias = tuple[bytes, bytes, int]


class _Bookkeeping:
    """What a :class:`_LinearAssignment` pool knows between two passes."""

    __slots__ = ("free", "held", "origin")

    def __init__(self) -> None:
        self.free: dict[_Origin, deque[_Connection]] = {}
        """Per origin, the connections no request holds, in the order they were let go; an
        origin with none is removed (a client reaching many hosts walks only the live ones)."""
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
    a new connection (at ``max_connections``, a free connection of another origin is
    closed to make room: the first freed of the origin whose free ones go back furthest).
    A free connection is handed to one request only, and one handed to a request is not
    closed under it. Expired connections are closed from the oldest free one on, and free ones
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
        for key, lane in list(state.free.items()):
            while lane and (
                lane[0].is_closed()
                or lane[0].has_expired()
                or len(self._connections) > self._max_keepalive_connections
            ):
                connection = lane.popleft()
                self._forget(state, connection)
                if not connection.is_closed():
                    closing.append(connection)
            if not lane:  # an origin with nothing free is not walked again
                del state.free[key]

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
            if lane is not None and not lane:
                del state.free[key]
            if chosen is None:
                if len(self._connections) >= self._max_connections:
                    oldest_key = next(iter(state.free), None)  # every lane kept is non-empty
                    if oldest_key is None:
                        continue  # waits for a connection to come free
                    oldest = state.free[oldest_key]
                    victim = oldest.popleft()
                    if not oldest:
                        del state.free[oldest_key]
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


LINEAR_ASSIGNMENT: Final = bool(_LINEAR_POOLS)
"""Whether this httpcore's pools get the linear assignment."""

CAPPED_POOL_LIMITS: Final = httpx.Limits(
    max_connections=None, max_keepalive_connections=20, keepalive_expiry=5.0
)
"""The limits for an httpcore this module does not know: its own assignment scans every
idle connection per request, so the idle ones are capped (churn at high concurrency,
rather than a scan of a thousand sockets per request)."""


def use_linear_pools(client: httpx.AsyncClient) -> None:
    """Gives the client's direct and HTTP-proxy transports the linear assignment (the
    pools httpx built, with their TLS context, limits and proxy, are kept as they are)."""
    transports = [client._transport, *client._mounts.values()]  # pyright: ignore[reportPrivateUsage]
    for transport in transports:
        if isinstance(transport, httpx.AsyncHTTPTransport):
            pool = cast(httpcore.AsyncConnectionPool, transport._pool)  # pyright: ignore[reportPrivateUsage]
            linear = _LINEAR_POOLS.get(type(pool))
            if linear is not None:
                pool.__class__ = linear
