"""The linear pool's assignment pass driven directly, with scripted connections and
requests: which connection a request gets, which are closed and forgotten, and what the
pool keeps between passes (no sockets)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpcore

from yoagent.core._support.http_pool import (
    _LinearPool,  # pyright: ignore[reportPrivateUsage]
)

A = httpcore.Origin(b"http", b"a.test", 80)
B = httpcore.Origin(b"http", b"b.test", 80)


@dataclass(eq=False)
class Connection:
    origin: httpcore.Origin
    handles: bool = True
    available: bool = True
    expired: bool = False
    closed: bool = False

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return self.handles and origin == self.origin

    def is_available(self) -> bool:
        return self.available

    def has_expired(self) -> bool:
        return self.expired

    def is_closed(self) -> bool:
        return self.closed


class Request:
    def __init__(self, origin: httpcore.Origin) -> None:
        url = httpcore.URL(scheme=origin.scheme, host=origin.host, port=origin.port, target=b"/")
        self.request = httpcore.Request(b"GET", url)
        self.connection: Any = None

    def assign_to_connection(self, connection: Any) -> None:
        self.connection = connection


class Pool(_LinearPool):
    def create_connection(self, origin: httpcore.Origin) -> Any:
        return Connection(origin)


def pass_with(pool: Pool, *requests: Request) -> list[Any]:
    pool._requests = list(requests)  # type: ignore[assignment]  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    return pool._assign_requests_to_connections()  # pyright: ignore[reportPrivateUsage]


def freed(pool: Pool, origin: httpcore.Origin, **state: bool) -> Connection:
    """A connection to ``origin`` made by one request, then let go."""
    request = Request(origin)
    assert pass_with(pool, request) == []
    connection = request.connection
    assert isinstance(connection, Connection)
    for name, value in state.items():
        setattr(connection, name, value)
    assert pass_with(pool) == []
    return connection


def bookkeeping(pool: Pool) -> Any:
    return pool._bookkeeping()  # pyright: ignore[reportPrivateUsage]


def test_at_the_cap_a_free_connection_of_another_origin_is_closed_to_make_room() -> None:
    pool = Pool(max_connections=1)
    old = freed(pool, A)
    request = Request(B)
    assert pass_with(pool, request) == [old]
    new = request.connection
    assert isinstance(new, Connection) and new.origin == B
    assert pool._connections == [new]  # pyright: ignore[reportPrivateUsage]
    state = bookkeeping(pool)
    assert state.origin == {id(new): (new, (b"http", b"b.test", 80))}
    assert state.free == {}


def test_a_free_connection_that_is_not_available_is_closed_and_forgotten() -> None:
    pool = Pool()
    old = freed(pool, A, available=False)
    request = Request(A)
    assert pass_with(pool, request) == [old]
    assert request.connection is not old
    assert pool._connections == [request.connection]  # pyright: ignore[reportPrivateUsage]
    assert id(old) not in bookkeeping(pool).origin


def test_a_free_connection_that_cannot_handle_the_origin_is_not_handed_out() -> None:
    pool = Pool()
    old = freed(pool, A, handles=False)
    request = Request(A)
    assert pass_with(pool, request) == [old]
    assert request.connection is not old


def test_a_free_connection_already_closed_is_forgotten_without_closing_it_again() -> None:
    pool = Pool()
    old = freed(pool, A, available=False)
    old.closed = True
    request = Request(A)
    assert pass_with(pool, request) == []
    assert request.connection is not old
    assert pool._connections == [request.connection]  # pyright: ignore[reportPrivateUsage]


def test_a_free_connection_of_a_closed_pool_is_forgotten_quietly() -> None:
    pool = Pool()
    old = freed(pool, A, available=False)
    pool._connections.clear()  # pyright: ignore[reportPrivateUsage]  # what closing the pool does
    request = Request(A)
    assert pass_with(pool, request) == [old]
    assert id(old) not in bookkeeping(pool).origin
