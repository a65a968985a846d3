"""The HTTP client factory: the project's defaults, one TLS context, and httpx only on demand."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from yoagent.core.support import (
    HTTP_TIMEOUT,
    http_client,
    shared_ssl_context,
)


class _Handler(BaseHTTPRequestHandler):
    cookies_seen: list[str | None]

    def do_GET(self) -> None:
        self.cookies_seen.append(self.headers.get("cookie"))
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("location", "/landing")
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = self.path.encode()
        self.send_response(200)
        self.send_header("set-cookie", "session=tenant-a; Path=/")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str | None]]]:
    cookies: list[str | None] = []
    handler = type("Handler", (_Handler,), {"cookies_seen": cookies})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", cookies
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


async def test_a_client_keeps_no_cookie_from_one_request_for_the_next(
    server: tuple[str, list[str | None]],
) -> None:
    url, cookies = server
    async with http_client() as client:
        first = await client.get(f"{url}/one")
        assert first.headers["set-cookie"].startswith("session=tenant-a")
        await client.get(f"{url}/two")
        assert len(client.cookies) == 0
    assert cookies == [None, None]


async def test_redirects_are_followed_only_when_asked(
    server: tuple[str, list[str | None]],
) -> None:
    url, _ = server
    async with http_client() as client:
        response = await client.get(f"{url}/redirect")
        assert response.status_code == 302
    async with http_client(follow_redirects=True) as client:
        response = await client.get(f"{url}/redirect")
        assert (response.status_code, response.text) == (200, "/landing")


async def test_the_projects_timeouts_apply_unless_the_caller_gives_its_own() -> None:
    assert httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=10.0) == HTTP_TIMEOUT
    async with http_client() as client:
        assert client.timeout == HTTP_TIMEOUT
    async with http_client(timeout=3.0) as client:
        assert client.timeout == httpx.Timeout(3.0)


def test_one_tls_context_per_certificate_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = shared_ssl_context()
    assert shared_ssl_context() is context
    monkeypatch.setenv("SSL_CERT_DIR", "/nonexistent-cert-dir")
    other = shared_ssl_context()
    assert other is not context
    assert shared_ssl_context() is other
    monkeypatch.delenv("SSL_CERT_DIR")
    assert shared_ssl_context() is context
