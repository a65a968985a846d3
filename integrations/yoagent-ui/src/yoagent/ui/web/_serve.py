"""Serving the web app on this machine: on loopback unless asked otherwise."""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Callable

import anyio
from starlette.types import Receive, Scope, Send

from yoagent.ui._errors import UiError

from ._app import WebApp

logger = logging.getLogger("yoagent.ui")

DEFAULT_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve(
    app: WebApp,
    *,
    host: str = DEFAULT_HOST,
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``app`` with uvicorn at ``host``:``port`` (0: a free port) until cancelled or
    interrupted; ``on_ready`` gets the page's URL (with its token) once it listens.

    The default host is loopback: only this machine can connect. Another ``host`` is
    served as asked, and logged as a warning. Runs under asyncio (uvicorn's loop).
    """
    try:
        import uvicorn
    except ImportError as error:  # pragma: no cover - the [web] extra brings it
        raise UiError("serving the web app needs uvicorn: pip install 'yoagent-ui[web]'") from error
    if not is_loopback(host):
        logger.warning(
            "the web app listens on %s: other machines can reach it (the token still guards it)",
            host,
        )
    listener = bind(host, port)

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        # A function, not the app itself: uvicorn calls an object with no arguments to see
        # whether it is an app factory and guesses its interface from how `__call__` looks,
        # which a wrapped `__call__` (a decorator, mutmut's trampoline) defeats.
        await app(scope, receive, send)

    config = uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    bound = int(listener.getsockname()[1])
    with listener:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[listener]))
            while not server.started:
                if server.should_exit:
                    return
                await anyio.sleep(0.01)
            if on_ready is not None:
                on_ready(app.url(DEFAULT_HOST if host in ("0.0.0.0", "::") else host, bound))


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket at ``host``:``port``; :class:`UiError` saying why not."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise UiError(f"cannot listen on {host}: {error.strerror}") from None
    family, kind, protocol, _, address = found[0]
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError as error:
        listener.close()
        raise UiError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    listener.setblocking(False)
    return listener
