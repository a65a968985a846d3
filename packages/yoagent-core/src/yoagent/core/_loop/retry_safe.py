"""RetrySafeEvents: a run's events for a sink that can only append (a terminal, a log file).

A model call that fails in a retryable way is closed with an error ``MessageEnd`` and
followed by a ``ProviderRetry``, after its deltas may already have streamed. A sink that
printed them cannot take them back. This filter holds each assistant attempt — its
``MessageStart`` and deltas — until its ``MessageEnd`` says what became of it:

- kept (any stop but ``ERROR`` / ``ABORTED``): released whole, start, deltas and end;
- failed: held until the next event says whether it is retried — a ``ProviderRetry``
  drops it (the retry notice passes), anything else releases it as its start and its
  ``ERROR`` / ``ABORTED`` end, without the deltas;
- left open by a ``ProviderRetry``, a second ``MessageStart`` or the end of the stream
  (``AgentEnd``, or :meth:`RetrySafeEvents.close`): dropped, never released, with a
  warning.

Every other event overtakes a held attempt (it is delivered at once). A delegated run's
events arrive wrapped in ``SubAgentEvent``s and pass as they are: their text is not
covered. The spec's ``retry::RetrySafeEvents`` / ``retry_safe_events(rx)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable

from yoagent.core._logging import logger
from yoagent.core._types.events import (
    AgentEnd,
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProviderRetry,
)
from yoagent.core._types.messages import AssistantMessage, StopReason

_FAILED = (StopReason.ERROR, StopReason.ABORTED)


class RetrySafeEvents:
    """An event sink that forwards a run's events to ``emit``, holding each assistant
    attempt until it is known to be kept (see the module docstring).

    Pass it where an event sink goes (``agent.prompt(text, on_event=RetrySafeEvents(
    print_event))``); one filter serves one run after another. A run's ``AgentEnd`` ends
    its stream; call :meth:`close` when events stop without one.
    """

    __slots__ = ("_deltas", "_emit", "_end", "_start")

    def __init__(self, emit: Callable[[AgentEvent], None]) -> None:
        self._emit = emit
        self._start: MessageStart | None = None
        """The held attempt's start (``None``: nothing held)."""
        self._deltas: list[MessageUpdate] = []
        self._end: MessageEnd | None = None
        """The held attempt's failed end (``None`` while it is open)."""

    def __call__(self, event: AgentEvent) -> None:
        if self._start is not None and self._end is not None:  # a failure, retried or final?
            if isinstance(event, ProviderRetry):
                self._clear()
            else:
                self._release(self._start, self._end)
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            self._drop_open("a second message start")
            self._start = event
            return
        if self._start is not None and self._end is None:
            if isinstance(event, MessageUpdate):
                self._deltas.append(event)
                return
            if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
                self._settle(self._start, event, event.message)
                return
            if isinstance(event, ProviderRetry):
                self._drop_open("a retry")
        if isinstance(event, AgentEnd):
            self.close()
        self._emit(event)

    def close(self) -> None:
        """The stream ended: an attempt still open is dropped (with a warning); a failure
        still held is released as final."""
        if self._start is not None and self._end is not None:
            self._release(self._start, self._end)
        self._drop_open("the end of the stream")

    def _settle(self, start: MessageStart, end: MessageEnd, message: AssistantMessage) -> None:
        if message.stop_reason in _FAILED:
            self._end = end  # wait: the next event says whether it is retried
            self._deltas = []
            return
        held = [start, *self._deltas, end]
        self._clear()
        for event in held:
            self._emit(event)

    def _release(self, start: MessageStart, end: MessageEnd) -> None:
        self._clear()
        self._emit(start)
        self._emit(end)

    def _drop_open(self, cut_by: str) -> None:
        if self._start is None or self._end is not None:
            return
        logger.warning(
            "retry-safe events: a reply left open by %s was dropped (%d deltas)",
            cut_by,
            len(self._deltas),
        )
        self._clear()

    def _clear(self) -> None:
        self._start = None
        self._deltas = []
        self._end = None


async def retry_safe_events(events: AsyncIterable[AgentEvent]) -> AsyncIterator[AgentEvent]:
    """``events`` (e.g. ``agent.stream(prompt)``'s) through :class:`RetrySafeEvents`: each
    assistant attempt is yielded only once it is known to be kept."""
    ready: list[AgentEvent] = []
    safe = RetrySafeEvents(ready.append)
    async for event in events:
        safe(event)
        while ready:
            yield ready.pop(0)
    safe.close()
    for event in ready:
        yield event
