"""One turn's model call: stream it, retry what is retryable, and settle on one reply.

The call returns the reply; the driver appends it. Only a call that an exception ends
(an outer cancellation, a bug) appends on its own: the part that streamed, as ABORTED,
so the history still shows what the caller saw.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import anyio

from yoagent.core._logging import logger
from yoagent.core._provider.pricing import cost_of, resolve_cost
from yoagent.core._provider.protocol import StreamConfig
from yoagent.core._types.content import AssistantContent, TextContent, ThinkingContent
from yoagent.core._types.errors import ErrorKind, ProviderError
from yoagent.core._types.events import (
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProviderRetry,
    StreamDelta,
    TextDelta,
    ThinkingDelta,
)
from yoagent.core._types.messages import AssistantMessage, StopReason

from .call_ids import CallIds
from .compactor import Compactor
from .state import RunState
from .telemetry import SPAN_LLM_STREAM, describe_reply, describe_request, mark_error, start_span


class ModelReply(NamedTuple):
    """A turn's reply and how many history messages its request was built from."""

    message: AssistantMessage
    sent_count: int


_TEXT_DELTAS = (TextDelta, ThinkingDelta)
"""Built once: ``isinstance(x, A | B)`` builds the union on every call (≈ 40 ns per delta)."""


class Attempt:
    """One call to the provider: relays its deltas (each tool call's under its unique id)
    and remembers the text seen so far."""

    __slots__ = ("call_ids", "model", "provider", "started", "state", "text")

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.call_ids = CallIds()
        self.started = False
        self.text: dict[int, tuple[bool, list[str]]] = {}
        self.model = state.config.model.id
        self.provider = state.config.model.provider

    def sink(self, delta: StreamDelta) -> None:
        if not self.started:
            self.started = True
            self.state.emit(
                MessageStart(message=AssistantMessage(model=self.model, provider=self.provider))
            )
        if isinstance(delta, _TEXT_DELTAS):
            entry = self.text.get(delta.content_index)
            if entry is None:
                entry = (isinstance(delta, ThinkingDelta), list[str]())
                self.text[delta.content_index] = entry
            entry[1].append(delta.delta)
        else:
            delta = self.call_ids.streamed(delta)
        self.state.emit(MessageUpdate(delta=delta))

    def partial(
        self, stop_reason: StopReason, error: str, kind: ErrorKind | None = None
    ) -> AssistantMessage:
        """The reply as far as it streamed (text and thinking only: no call is runnable)."""
        content: list[AssistantContent] = []
        for index in sorted(self.text):
            is_thinking, parts = self.text[index]
            joined = "".join(parts)
            content.append(
                ThinkingContent(thinking=joined) if is_thinking else TextContent(text=joined)
            )
        return AssistantMessage(
            content=content,
            stop_reason=stop_reason,
            model=self.model,
            provider=self.provider,
            error_message=error,
            error_kind=kind,
        )

    def close_failed(self, error: ProviderError) -> None:
        """End a started attempt that will be retried: consumers see it fail."""
        if self.started:
            self.state.emit(
                MessageEnd(message=self.partial(StopReason.ERROR, str(error), error.kind))
            )


def _request(state: RunState, notes: list[str], tools: Any) -> StreamConfig:
    settings = state.settings
    return StreamConfig(
        model=state.config.model,
        system_prompt=state.context.system_prompt,
        messages=list(state.sendable),
        tools=tools,
        thinking_level=settings.thinking_level,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        output_schema=state.config.output_schema,
        cache=settings.cache,
        turn_notes=tuple(notes),
    )


async def call_model(
    state: RunState, notes: list[str], tools: Any, compactor: Compactor
) -> ModelReply:
    """Get this turn's reply (not yet in the history).

    Retries RATE_LIMITED and NETWORK failures per the run's RetryConfig (each failed
    attempt that had started is closed with an error, then a ``ProviderRetry`` event);
    compacts once and retries after a context overflow; a cancellation, during the
    stream or the backoff, ends the reply as ABORTED. A reply whose streaming had not
    started gets its ``MessageStart`` here. Tool-call ids the reply repeats are made
    unique before anyone sees the reply whole (see ``call_ids``).
    """
    call = _ModelCall(state, notes, tools, compactor)
    try:
        reply = await call.settle()
        reply = call.attempt.call_ids.settle(reply)
    except BaseException:
        if call.attempt.started:  # the caller saw it start: the history shows how far it got
            state.quiet()
            state.append(call.attempt.partial(StopReason.ABORTED, "cancelled"))
        raise
    if not call.attempt.started:
        state.emit(MessageStart(message=reply))
    return ModelReply(reply, call.sent)


class _ModelCall:
    __slots__ = ("attempt", "compactor", "notes", "sent", "state", "tools")

    def __init__(self, state: RunState, notes: list[str], tools: Any, compactor: Compactor):
        self.state = state
        self.notes = notes
        self.tools = tools
        self.compactor = compactor
        self.attempt = Attempt(state)
        self.sent = 0

    def _retrying(self, error: ProviderError, attempt: int, delay: float) -> None:
        """Close the failed attempt for consumers, announce the retry, start afresh."""
        self.attempt.close_failed(error)
        self.attempt = Attempt(self.state)
        self.state.emit(
            ProviderRetry(
                attempt=attempt,
                max_retries=self.state.settings.retry.max_retries,
                delay_seconds=delay,
                kind=error.kind,
                error=str(error),
            )
        )

    async def settle(self) -> AssistantMessage:
        state = self.state
        retry = state.settings.retry
        retries = 0
        overflow_compacted = False
        with start_span(SPAN_LLM_STREAM, state.tracing, client=True) as span:
            describe_request(span, state.config.model, state.turn)
            while True:
                reply, error = await self._once()
                if reply is not None:
                    break
                assert error is not None
                if (
                    error.kind is ErrorKind.CONTEXT_OVERFLOW
                    and not overflow_compacted
                    and not state.cancel.cancelled
                    and self.compactor.compact(overflowed=True)
                ):
                    overflow_compacted = True  # once: a second overflow is the answer
                    self._retrying(error, retries + 1, 0.0)
                    continue
                if retry.should_retry(error, retries) and not state.cancel.cancelled:
                    delay = retry.delay(retries, error.retry_after)
                    retries += 1
                    self._retrying(error, retries, delay)
                    with state.cancel.scope() as backoff:
                        await anyio.sleep(delay)
                    if not backoff.cancelled_caught:
                        continue
                    reply = self.attempt.partial(StopReason.ABORTED, "cancelled")
                    break
                reply = self.attempt.partial(StopReason.ERROR, str(error), error.kind)
                span.set_attribute("error.type", error.kind.value)
                break
            if state.tracing:
                _describe(span, reply, state)
        return reply

    async def _once(self) -> tuple[AssistantMessage | None, ProviderError | None]:
        """One request: its reply (ABORTED when cancelled), or the error it failed with."""
        state = self.state
        attempt = self.attempt
        if state.cancel.cancelled:  # aborted before the request: nothing is sent
            return attempt.partial(StopReason.ABORTED, "cancelled"), None
        error: ProviderError | None = None
        reply: AssistantMessage | None = None
        with state.cancel.scope() as scope:
            try:
                self.sent = len(state.context.messages)
                request = _request(state, self.notes, self.tools)
                reply = await state.config.provider.stream(request, attempt.sink)
            except ProviderError as failure:
                error = failure
            except Exception as failure:  # a broken provider must not crash the loop
                logger.exception("provider raised an unexpected error")
                error = ProviderError(
                    ErrorKind.OTHER, f"provider failed: {type(failure).__name__}: {failure}"
                )
        if scope.cancelled_caught or (reply is None and error is None):
            return attempt.partial(StopReason.ABORTED, "cancelled"), None
        return reply, error


def _describe(span: Any, reply: AssistantMessage, state: RunState) -> None:
    """The reply's tokens, cost and outcome as attributes of its ``llm_stream`` span."""
    describe_reply(span, reply, cost_of(reply.usage, resolve_cost(state.config.model)))
    if reply.stop_reason is StopReason.ERROR and reply.error_message:
        mark_error(span, reply.error_message)
