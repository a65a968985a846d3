"""RunStream: one run as a stream of events, safe to leave early in its ``async with`` form.

An async generator that yields from inside a task group breaks the moment its consumer
stops early (the group is then closed from another task). So the safe form opens the
group in ``__aenter__`` and closes it in ``__aexit__``, both in the consumer's own task,
the way ``httpx``'s ``client.stream(...)`` does; leaving early ends the run like
``abort()`` and waits for it to close its history.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from types import TracebackType

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._loop.task_groups import ungrouped
from ._types.errors import ErrorKind, YoagentError
from ._types.events import AgentEvent
from ._types.messages import AgentMessage

Producer = Callable[[Callable[[AgentEvent], None]], Awaitable[list[AgentMessage]]]
"""Runs the run, sending each event to the given sink; returns the messages it added."""


class RunStream(AsyncIterator[AgentEvent]):
    """The events of one run, in order; iterate it inside ``async with``.

    ``async with agent.stream(...) as events: async for event in events: ...`` is safe to
    leave at any point (``break``, an exception, a cancel): the run is aborted and closed
    before the block exits. Plain ``async for event in agent.stream(...)`` also works, but
    leaving that loop early needs ``contextlib.aclosing``.

    When the run fails (it ends in ``StopReason.ERROR``) every event is delivered first,
    then the iteration raises :class:`RunFailedError` instead of ending.
    """

    __slots__ = (
        "_abort",
        "_done",
        "_failure",
        "_group",
        "_iterator",
        "_leaving",
        "_produce",
        "_receive",
        "_send",
    )

    def __init__(self, produce: Producer, abort: Callable[[], None]) -> None:
        self._produce = produce
        self._abort = abort
        self._group: TaskGroup | None = None
        self._send: MemoryObjectSendStream[AgentEvent] | None = None
        self._receive: MemoryObjectReceiveStream[AgentEvent] | None = None
        self._failure: BaseException | None = None
        self._done = False
        self._leaving = False
        self._iterator: AsyncGenerator[AgentEvent] | None = None

    async def __aenter__(self) -> RunStream:
        if self._group is not None:
            raise RuntimeError("this stream was already started; call stream() again")
        self._send, self._receive = anyio.create_memory_object_stream[AgentEvent](math.inf)
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        group.start_soon(self._run, name="yoagent run")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        group = self._group
        if group is None:
            return
        if not self._done:
            # Left early: end the run the way abort() does (a run not started yet never
            # starts: the producer looks at ``_leaving`` before anything else).
            self._leaving = True
            self._abort()
        cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
        try:
            with ungrouped():
                # Only a cancellation is handed to the group (it must see the cancel); any
                # other exception of the body is the caller's and passes through as itself.
                if cancelled:
                    await group.__aexit__(exc_type, exc, traceback)
                else:
                    await group.__aexit__(None, None, None)
        finally:
            if self._receive is not None:
                self._receive.close()

    async def _run(self) -> None:
        send = self._send
        assert send is not None

        def emit(event: AgentEvent) -> None:
            # The consumer may have gone away: the run is being aborted then. (try, not
            # contextlib.suppress: this runs for every event, ≈ 50 per turn.)
            try:  # noqa: SIM105
                send.send_nowait(event)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

        async with send:
            try:
                if not self._leaving:
                    await self._produce(emit)
            except RunFailedError as failure:
                self._failure = failure  # raised at the end of the iteration
            finally:
                self._done = True

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        if self._group is None:
            if self._iterator is None:
                self._iterator = self._unmanaged()
            return self._iterator
        return self

    async def aclose(self) -> None:
        """Close a stream iterated without ``async with`` (``contextlib.aclosing`` calls
        this): the run is aborted and closed, in the calling task."""
        if self._iterator is not None:
            await self._iterator.aclose()

    async def __anext__(self) -> AgentEvent:
        receive = self._receive
        if receive is None:
            raise RuntimeError("iterate the stream inside `async with` (or with `async for`)")
        try:
            # An event already buffered is handed over at once: ``receive()`` would first
            # yield to the event loop, one loop iteration per event (≈ 50 per turn). The
            # consumer still waits, and sees cancellation, whenever the buffer is empty.
            try:
                return receive.receive_nowait()
            except anyio.WouldBlock:
                return await receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            failure, self._failure = self._failure, None
            if failure is not None:
                raise failure from None
            raise StopAsyncIteration from None

    async def _unmanaged(self) -> AsyncGenerator[AgentEvent]:
        """``async for`` without ``async with``: the same stream, held by a generator."""
        async with self as events:
            async for event in events:
                yield event


class RunFailedError(YoagentError):
    """A run ended in ``StopReason.ERROR``: the model call failed for good (after any
    retries), or a required extension failed the run.

    ``kind`` is the failure's :class:`ErrorKind` (``OTHER`` for an extension), ``message``
    what went wrong (the failed reply's ``error_message``), and ``messages`` the messages
    the run added (the agent's history keeps them too).
    """

    def __init__(self, kind: ErrorKind, message: str, messages: list[AgentMessage]) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.messages = messages

    def __repr__(self) -> str:
        return f"RunFailedError({self.kind.name}, {self.message!r})"
