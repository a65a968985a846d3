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

import os
import ssl
import threading
from http.cookiejar import Cookie, CookieJar, CookiePolicy
from typing import Final
from urllib.request import Request

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
1,024, which the requests in flight need anyway), kernel socket buffers, up to ~45 KB of
the process's memory each (httpcore, h11 and transport state: the bench's 1,000 conversations
at once grew from 64 to 109 KB per live run), and a socket on the server, for at most 5 s
after the burst; a TLS connection's state costs more."""

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

    It uses :data:`HTTP_TIMEOUT` unless given ``timeout``, :data:`HTTP_POOL_LIMITS` (with
    an httpcore other than 1.0, whose pool scans every idle connection per request, the
    idle ones capped at 20), the
    :func:`shared_ssl_context`, and keeps no cookie: a ``Set-Cookie`` in one reply never
    reaches another request (a client may be shared by unrelated callers). Redirects are
    followed only with ``follow_redirects`` (one to another host would carry the
    request's credential along). Proxy variables are read as httpx does, when it is built.
    """
    from .http_pool import CAPPED_POOL_LIMITS, LINEAR_ASSIGNMENT, use_linear_pools

    client = httpx.AsyncClient(
        timeout=timeout,
        limits=HTTP_POOL_LIMITS if LINEAR_ASSIGNMENT else CAPPED_POOL_LIMITS,
        verify=shared_ssl_context(),
        cookies=CookieJar(_NoCookies()),
        follow_redirects=follow_redirects,
    )
    use_linear_pools(client)
    return client
