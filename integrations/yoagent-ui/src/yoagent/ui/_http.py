"""The HTTP side every endpoint shares: a bounded JSON body, error answers, one run per
thread, and a streamed answer that ends the run cleanly when the client goes away."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from ._errors import BadRunInputError

logger = logging.getLogger("yoagent.ui")

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
"""The largest request body an endpoint reads by default: 10 MiB."""

Producer = Callable[[MemoryObjectSendStream[bytes]], Awaitable[None]]
"""Runs the run, sending the encoded answer's pieces to the stream it is given."""


async def read_json(request: Request, max_bytes: int) -> Any:
    """The request's body as JSON; :class:`BadRunInputError` for a wrong method or content,
    a body over ``max_bytes`` (status 413) or one that is not JSON."""
    if request.method != "POST":
        raise BadRunInputError(f"use POST, not {request.method}", status=405)
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > max_bytes:
        raise BadRunInputError(_too_large(int(size), max_bytes), status=413)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise BadRunInputError(_too_large(len(body), max_bytes), status=413)
    try:
        return json.loads(body)
    except ValueError as error:
        raise BadRunInputError(f"the request body is not JSON: {error}") from None


def _too_large(size: int, limit: int) -> str:
    return f"the request body is over the limit of {limit} bytes (got at least {size})"


def error_response(error: BadRunInputError) -> JSONResponse:
    """The answer to a request that cannot run: its status and ``{"error": text}``."""
    return JSONResponse({"error": str(error)}, status_code=error.status)


def failure_response(error: Exception, where: str) -> JSONResponse:
    """The answer when the server failed before the run began (the agent factory raised, the
    store failed): HTTP 500 naming the error's type, logged with its traceback."""
    logger.error("could not start a run on %s", where, exc_info=error)
    return JSONResponse(
        {"error": f"the server could not start the run: {type(error).__name__}"}, status_code=500
    )


class ThreadBusyError(BadRunInputError):
    """A run is already going on in this thread (answered with 409)."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"a run is already in progress on thread {thread_id!r}; wait for it to end",
            status=409,
        )


class ThreadLocks:
    """One run per thread at a time, in this process."""

    __slots__ = ("_busy",)

    def __init__(self) -> None:
        self._busy: set[str] = set()

    def acquire(self, thread_id: str) -> None:
        """Hold ``thread_id`` for a run; :class:`ThreadBusyError` when it is held."""
        if thread_id in self._busy:
            raise ThreadBusyError(thread_id)
        self._busy.add(thread_id)

    def release(self, thread_id: str) -> None:
        """Let ``thread_id`` run again."""
        self._busy.discard(thread_id)

    def busy(self, thread_id: str) -> bool:
        """Whether ``thread_id`` has a run going on now."""
        return thread_id in self._busy

    @property
    def running(self) -> int:
        """How many threads have a run going on now."""
        return len(self._busy)


async def stream_answer(
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    headers: dict[str, str],
    produce: Producer,
    on_disconnect: Callable[[], None],
) -> None:
    """Answer with status 200 and ``headers``, streaming what ``produce`` sends.

    The run goes on in a task of its own; when the client hangs up, ``on_disconnect``
    is called (it aborts the run), what the run still sends is dropped, and this returns
    once the run has ended, so the run always closes its history.
    """
    del scope
    sender, chunks = anyio.create_memory_object_stream[bytes](math.inf)
    gone = anyio.Event()

    async def watch() -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
                on_disconnect()
                return

    async def run() -> None:
        async with sender:
            await produce(sender)

    async with anyio.create_task_group() as group:
        group.start_soon(run, name="yoagent-ui run")
        group.start_soon(watch, name="yoagent-ui disconnect watch")
        raw = [(key.encode("latin-1"), value.encode("latin-1")) for key, value in headers.items()]
        try:
            await send({"type": "http.response.start", "status": 200, "headers": raw})
            async with chunks:
                async for chunk in chunks:
                    if not gone.is_set():
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not gone.is_set():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client left while we wrote: the watcher ends the run
            on_disconnect()
            async with chunks:
                async for _ in chunks:
                    pass
        group.cancel_scope.cancel()
