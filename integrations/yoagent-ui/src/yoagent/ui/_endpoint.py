"""What every protocol endpoint does around its own wire format: read the request, hold its
thread, prepare the run, stream it, and store the thread when it ends."""

from __future__ import annotations

import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from yoagent.core.loop import AgentFactory

from ._errors import BadRunInputError
from ._http import (
    DEFAULT_MAX_BODY_BYTES,
    ThreadLocks,
    error_response,
    failure_response,
    read_json,
    stream_answer,
)
from ._run import LentAgent
from ._store import MemoryThreadStore, StoredThread, ThreadStore

logger = logging.getLogger("yoagent.ui")


def new_id() -> str:
    """A fresh id for a message, a run or a sub-agent invocation."""
    return str(uuid.uuid4())


class PreparedRun(ABC):
    """One request's run, ready to stream: its lent agent, its thread, and the ids the
    thread's messages had before it (by message identity)."""

    headers: dict[str, str]
    fallback_id: str = ""
    """The id of a message the run added that no event named (a stop marker the loop adds):
    empty, a message the client is never shown, unless the protocol says otherwise."""

    def __init__(self, *, thread_id: str, lent: LentAgent, known_ids: dict[int, str]) -> None:
        self.thread_id = thread_id
        self.lent = lent
        self.agent = lent.agent
        self.known_ids = known_ids

    @abstractmethod
    async def stream(self, out: MemoryObjectSendStream[bytes]) -> None:
        """Run, sending the encoded answer's pieces to ``out``; never raises."""

    @abstractmethod
    def new_ids(self) -> dict[int, str]:
        """The ids the run gave the messages it added (by message identity)."""

    def stored(self) -> StoredThread:
        """The thread as it stands after the run."""
        messages = self.agent.messages
        known = self.known_ids | self.new_ids()
        ids = [known.get(id(message)) for message in messages]
        fallback = self.fallback_id
        return StoredThread(messages=messages, ids=[fallback if i is None else i for i in ids])


class RunEndpoint(ABC):
    """An ASGI app answering ``POST`` with a protocol's run request by streaming the run."""

    def __init__(
        self,
        agent: AgentFactory,
        *,
        store: ThreadStore | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.factory = agent
        self.store: ThreadStore = store if store is not None else MemoryThreadStore()
        self.max_body_bytes = max_body_bytes
        self.locks = ThreadLocks()
        """Which threads have a run going on (``locks.running`` counts them)."""
        self._app = Starlette(routes=[Route("/", self.handle, methods=["POST", "GET"])])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    @abstractmethod
    def _parse(self, body: Any) -> tuple[str, Any]:
        """The request's thread id and its parsed form (:class:`BadRunInputError` if bad)."""

    @abstractmethod
    async def _prepare(self, request: Any, stored: StoredThread) -> PreparedRun:
        """The run the parsed request asks for, on its stored thread."""

    async def handle(self, request: Request) -> Response:
        """Answer one request (the endpoint's Starlette handler, for a route of your own)."""
        try:
            thread_id, parsed = self._parse(await read_json(request, self.max_body_bytes))
            self.locks.acquire(thread_id)
        except BadRunInputError as error:
            return error_response(error)
        try:
            stored = await self.store.load(thread_id) or StoredThread()
            run = await self._prepare(parsed, stored)
        except BadRunInputError as error:
            self.locks.release(thread_id)
            return error_response(error)
        except Exception as error:
            self.locks.release(thread_id)
            return failure_response(error, f"thread {thread_id!r}")
        except BaseException:
            self.locks.release(thread_id)
            raise
        return _RunResponse(run, self.store, lambda: self.locks.release(thread_id))


class _RunResponse(Response):
    """The streamed answer of one run. When it ends the thread is stored (if the run began
    on it), the agent's per-run changes are undone, and the thread is released."""

    def __init__(self, run: PreparedRun, store: ThreadStore, release: Callable[[], None]) -> None:
        super().__init__(status_code=200, headers=run.headers)
        self.run = run
        self.store = store
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        run = self.run

        async def produce(out: MemoryObjectSendStream[bytes]) -> None:
            try:
                await run.stream(out)
            finally:
                if run.lent.began:  # else another conversation's history is on the agent
                    with anyio.CancelScope(shield=True):
                        try:
                            await self.store.save(run.thread_id, run.stored())
                        except Exception:
                            logger.exception("could not store thread %s", run.thread_id)

        try:
            await stream_answer(
                scope,
                receive,
                send,
                headers=run.headers,
                produce=produce,
                on_disconnect=run.lent.client_left,
            )
        finally:
            run.lent.restore()
            self.release()
