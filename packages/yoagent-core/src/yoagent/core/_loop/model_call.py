"""One turn's model call: stream it, retry what is retryable, and settle on one reply."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from opentelemetry.trace import Status, StatusCode

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

from .telemetry import SPAN_LLM_STREAM, start_span

if TYPE_CHECKING:
    from .driver import RunState


class Attempt:
    """One call to the provider: relays its deltas and remembers the text seen so far."""

    __slots__ = ("model", "provider", "run", "started", "text")

    def __init__(self, run: RunState) -> None:
        self.run = run
        self.started = False
        self.text: dict[int, tuple[bool, list[str]]] = {}
        self.model = run.config.model.id
        self.provider = run.config.model.provider

    def sink(self, delta: StreamDelta) -> None:
        if not self.started:
            self.started = True
            self.run.emit(
                MessageStart(message=AssistantMessage(model=self.model, provider=self.provider))
            )
        if isinstance(delta, TextDelta | ThinkingDelta):
            entry = self.text.get(delta.content_index)
            if entry is None:
                entry = (isinstance(delta, ThinkingDelta), list[str]())
                self.text[delta.content_index] = entry
            entry[1].append(delta.delta)
        self.run.emit(MessageUpdate(delta=delta))

    def partial(self, stop_reason: StopReason, error: str) -> AssistantMessage:
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
        )

    def close_failed(self, error: ProviderError) -> None:
        """End a started attempt that will be retried: consumers see it fail."""
        if self.started:
            self.run.emit(MessageEnd(message=self.partial(StopReason.ERROR, str(error))))


def _stream_config(run: RunState, notes: list[str]) -> StreamConfig:
    config = run.config
    return StreamConfig(
        model=config.model,
        system_prompt=run.context.system_prompt,
        messages=list(run.sendable),
        tools=run.tools.definitions,
        thinking_level=config.thinking_level,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        output_schema=config.output_schema,
        cache=config.cache,
        turn_notes=tuple(notes),
    )


async def stream_reply(run: RunState, notes: list[str]) -> AssistantMessage:
    """Get this turn's reply, append it to the history, and return it.

    Retries RATE_LIMITED and NETWORK failures per the run's RetryConfig (each failed
    attempt that had started is closed with an error, then a ``ProviderRetry`` event);
    a cancellation, during the stream or the backoff, ends the reply as ABORTED.
    """
    retry = run.config.retry
    retries = 0
    overflow_compacted = False
    with start_span(SPAN_LLM_STREAM, run.tracing) as span:
        span.set_attribute("gen_ai.request.model", run.config.model.id)
        span.set_attribute("yoagent.turn", run.turn)
        while True:
            attempt = Attempt(run)
            error: ProviderError | None = None
            reply: AssistantMessage | None = None
            if run.cancel.cancelled:  # aborted before the request: nothing is sent
                reply = attempt.partial(StopReason.ABORTED, "cancelled")
                break
            run.open_attempt = attempt
            with run.cancel.scope() as scope:
                try:
                    run.sent_count = len(run.context.messages)
                    reply = await run.config.provider.stream(
                        _stream_config(run, notes), attempt.sink
                    )
                except ProviderError as failure:
                    error = failure
                except Exception as failure:  # a broken provider must not crash the loop
                    logger.exception("provider raised an unexpected error")
                    error = ProviderError(
                        ErrorKind.OTHER, f"provider failed: {type(failure).__name__}: {failure}"
                    )
            run.open_attempt = None
            if scope.cancelled_caught or (reply is None and error is None):
                reply = attempt.partial(StopReason.ABORTED, "cancelled")
            elif error is not None:
                if (
                    error.kind is ErrorKind.CONTEXT_OVERFLOW
                    and not overflow_compacted
                    and not run.cancel.cancelled
                    and run.compact(overflowed=True)
                ):
                    overflow_compacted = True  # once: a second overflow is the answer
                    attempt.close_failed(error)
                    run.emit(
                        ProviderRetry(
                            attempt=retries + 1,
                            max_retries=retry.max_retries,
                            delay_seconds=0.0,
                            kind=error.kind,
                            error=str(error),
                        )
                    )
                    continue
                if retry.should_retry(error, retries) and not run.cancel.cancelled:
                    attempt.close_failed(error)
                    delay = retry.delay(retries, error.retry_after)
                    retries += 1
                    run.emit(
                        ProviderRetry(
                            attempt=retries,
                            max_retries=retry.max_retries,
                            delay_seconds=delay,
                            kind=error.kind,
                            error=str(error),
                        )
                    )
                    with run.cancel.scope() as backoff:
                        await anyio.sleep(delay)
                    if not backoff.cancelled_caught:
                        continue
                    reply = AssistantMessage(
                        stop_reason=StopReason.ABORTED,
                        model=attempt.model,
                        provider=attempt.provider,
                        error_message="cancelled",
                    )
                    attempt = Attempt(run)
                else:
                    reply = attempt.partial(StopReason.ERROR, str(error))
                    span.set_attribute("error.type", error.kind.value)
            assert reply is not None
            break
        if run.tracing:
            _describe(span, reply, run)
    if not attempt.started:
        run.emit(MessageStart(message=reply))
    run.append(reply)
    return reply


def _describe(span: Any, reply: AssistantMessage, run: RunState) -> None:
    """The reply's tokens, cost and outcome as attributes of its ``llm_stream`` span."""
    usage = reply.usage
    span.set_attribute("gen_ai.usage.input_tokens", usage.input)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output)
    span.set_attribute("gen_ai.usage.cache_read_tokens", usage.cache_read)
    span.set_attribute("gen_ai.usage.cache_write_tokens", usage.cache_write)
    cost = cost_of(usage, resolve_cost(run.config.model))
    if cost is not None:
        span.set_attribute("yoagent.cost_usd", cost)
    span.set_attribute("yoagent.stop_reason", reply.stop_reason.value)
    if reply.stop_reason is StopReason.ERROR and reply.error_message:
        span.set_status(Status(StatusCode.ERROR, reply.error_message))
