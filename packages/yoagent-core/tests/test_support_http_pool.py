"""The HTTP client factory's pool: idle connections kept and reused, never churned, counted
by the connections a local server accepted."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpcore
import httpx
import pytest

from yoagent.core._support.http_pool import (
    _LinearAssignment,  # pyright: ignore[reportPrivateUsage]
    use_linear_pools,
)
from yoagent.core.support import HTTP_POOL_LIMITS, http_client


@dataclass
class _Server:
    url: str
    accepted: int = 0
    closed: int = 0
    barrier: threading.Barrier | None = None
    """When set, each request waits until this many are in flight (or fails after 10 s)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_closed(self, count: int) -> None:
        deadline = time.monotonic() + 5
        while self.closed < count and time.monotonic() < deadline:
            time.sleep(0.01)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    state: _Server

    def setup(self) -> None:
        super().setup()
        with self.state.lock:
            self.state.accepted += 1

    def finish(self) -> None:
        super().finish()
        with self.state.lock:
            self.state.closed += 1

    def do_GET(self) -> None:
        if self.state.barrier is not None:
            self.state.barrier.wait(timeout=10)
        body = b"ok"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.path == "/then-hang-up":
            self.close_connection = True  # closes without a "connection: close" header

    def log_message(self, format: str, *args: object) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog: 5 drops the SYNs of 60 connects at once


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Server]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
    state = _Server(f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.RequestHandlerClass = type("Handler", (_Handler,), {"state": state})
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_pool_keeps_every_idle_connection_until_its_keepalive_expiry() -> None:
    assert httpx.Limits(
        max_connections=None, max_keepalive_connections=None, keepalive_expiry=5.0
    ) == (HTTP_POOL_LIMITS)


async def test_the_factorys_clients_get_the_linear_assignment(server: _Server) -> None:
    """A later httpcore keeps its own pool: this fails so that someone measures it again."""
    assert httpcore.__version__.startswith("1.0.")
    async with http_client() as client:
        assert isinstance(client._transport._pool, _LinearAssignment)  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue, reportUnknownMemberType]
        assert (await client.get(server.url)).text == "ok"


async def _rounds(server: _Server, concurrent: int, rounds: int) -> None:
    server.barrier = threading.Barrier(concurrent)
    async with http_client() as client:
        for _ in range(rounds):
            replies = await asyncio.gather(*(client.get(server.url) for _ in range(concurrent)))
            assert [reply.text for reply in replies] == ["ok"] * concurrent


async def test_n_concurrent_requests_then_n_more_reuse_the_n_connections(server: _Server) -> None:
    await _rounds(server, concurrent=60, rounds=3)
    assert server.accepted == 60  # was 60 + 2 x 40: all but 20 idle ones closed each round


def test_the_connections_are_reused_under_trio(server: _Server) -> None:
    import trio

    async def main() -> None:
        server.barrier = threading.Barrier(20)
        async with http_client() as client:
            for _ in range(2):
                async with trio.open_nursery() as nursery:
                    for _ in range(20):
                        nursery.start_soon(client.get, server.url)

    trio.run(main)
    assert server.accepted == 20


async def test_an_expired_connection_is_closed_and_replaced(server: _Server) -> None:
    async with httpx.AsyncClient(limits=httpx.Limits(keepalive_expiry=0.05)) as client:
        use_linear_pools(client)
        await client.get(server.url)
        await asyncio.sleep(0.2)
        await client.get(server.url)
        server.wait_closed(1)
        assert (server.accepted, server.closed) == (2, 1)


async def test_a_connection_the_server_hung_up_is_not_reused(server: _Server) -> None:
    async with http_client() as client:
        assert (await client.get(f"{server.url}/then-hang-up")).text == "ok"
        server.wait_closed(1)
        await asyncio.sleep(0.05)  # the FIN reaches the client's socket
        assert (await client.get(server.url)).text == "ok"
        assert server.accepted == 2


async def test_a_keepalive_cap_closes_the_oldest_idle_connections(server: _Server) -> None:
    server.barrier = threading.Barrier(3)
    limits = httpx.Limits(max_keepalive_connections=1)
    async with httpx.AsyncClient(limits=limits) as client:
        use_linear_pools(client)
        await asyncio.gather(*(client.get(server.url) for _ in range(3)))
        server.barrier = None
        server.wait_closed(2)
        assert server.closed == 2
        await client.get(server.url)
        assert server.accepted == 3


async def test_a_connection_cap_queues_requests_until_one_is_free(server: _Server) -> None:
    limits = httpx.Limits(max_connections=2, max_keepalive_connections=2)
    async with httpx.AsyncClient(limits=limits) as client:
        use_linear_pools(client)
        replies = await asyncio.gather(*(client.get(server.url) for _ in range(8)))
        assert [reply.text for reply in replies] == ["ok"] * 8
    assert server.accepted == 2


async def test_a_request_does_not_look_at_every_idle_connection(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpcore 1.0.9 polls every connection's socket on each request and response end;
    with 1,000 idle connections that cost milliseconds per request."""
    await _rounds(server, concurrent=40, rounds=1)
    polls = 0
    original = httpcore.AsyncHTTPConnection.has_expired

    def counted(connection: httpcore.AsyncHTTPConnection) -> bool:
        nonlocal polls
        polls += 1
        return original(connection)

    monkeypatch.setattr(httpcore.AsyncHTTPConnection, "has_expired", counted)
    server.barrier = None
    async with http_client() as client:
        await asyncio.gather(*(client.get(server.url) for _ in range(40)))
        polls = 0
        await client.get(server.url)
        assert polls <= 2 * 2  # the oldest idle one and the one handed out, per pass


async def test_requests_through_an_http_proxy_reuse_its_connections(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stands in for a forward proxy (it answers every absolute-form request)."""
    monkeypatch.setenv("HTTP_PROXY", server.url)
    server.barrier = threading.Barrier(5)
    async with http_client() as client:
        for _ in range(2):
            replies = await asyncio.gather(
                *(client.get("http://upstream.invalid/") for _ in range(5))
            )
            assert [reply.text for reply in replies] == ["ok"] * 5
    assert server.accepted == 5


async def test_an_httpcore_without_the_linear_assignment_keeps_at_most_20_idle_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from yoagent.core._support import http_pool

    monkeypatch.setattr(http_pool, "LINEAR_ASSIGNMENT", False)
    monkeypatch.setattr(http_pool, "_LINEAR_POOLS", {})
    async with http_client() as client:
        pool = client._transport._pool  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        assert type(pool) is httpcore.AsyncConnectionPool  # pyright: ignore[reportUnknownArgumentType]
        assert pool._max_keepalive_connections == 20  # pyright: ignore[reportUnknownMemberType]


async def test_an_origin_with_no_free_connection_is_forgotten(server: _Server) -> None:
    """A client that reached many hosts walks only the origins with a free connection."""
    elsewhere = server.url.replace("127.0.0.1", "localhost")
    async with httpx.AsyncClient(limits=httpx.Limits(keepalive_expiry=0.05)) as client:
        use_linear_pools(client)
        await client.get(elsewhere)
        await asyncio.sleep(0.2)  # its connection expires
        await client.get(server.url)
        pool = client._transport._pool  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        free = pool._bookkeeping().free  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        assert [host for _, host, _ in free] == [b"127.0.0.1"]  # pyright: ignore[reportUnknownVariableType]
