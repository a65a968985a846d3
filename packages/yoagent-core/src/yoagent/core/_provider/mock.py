"""MockProvider: scripted replies, streamed like a real API, for tests (ours and yours)."""

from __future__ import annotations

import json
import operator
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import anyio

from yoagent.core._types.content import TextContent, ThinkingContent, ToolCall
from yoagent.core._types.errors import ErrorKind, ProviderError
from yoagent.core._types.events import TextDelta, ThinkingDelta, ToolCallDelta
from yoagent.core._types.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .protocol import DeltaSink, StreamConfig


@dataclass(slots=True, kw_only=True)
class MockReply:
    """One scripted reply with streaming behaviour.

    ``delay`` is slept before each delta (so a test can cancel mid-stream);
    ``fail_after`` raises ``error`` after that many deltas (a stream that dies midway).
    """

    message: AssistantMessage | None = None
    error: ProviderError | None = None
    delay: float = 0.0
    fail_after: int | None = None
    chunk_size: int = 16


Script = AssistantMessage | ProviderError | MockReply | Callable[[StreamConfig], AssistantMessage]


class TranscriptError(ProviderError):
    """The request holds a transcript a real API would refuse."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorKind.API, f"invalid transcript: {message}", status=400)


class MockProvider:
    """Plays scripted replies in order, streaming their content as deltas.

    Each request is checked the way a real API checks it (see :func:`validate_transcript`)
    and recorded in :attr:`requests`. When the script runs out, the call fails with an
    ``OTHER`` error that says so.
    """

    def __init__(self, replies: Iterable[Script] = (), *, validate: bool = True) -> None:
        self._replies: deque[Script] = deque(replies)
        self.validate = validate
        self.requests: list[StreamConfig] = []
        self._validator = TranscriptValidator()

    @classmethod
    def text(cls, *texts: str) -> MockProvider:
        """A provider answering each request with the next plain-text reply."""
        return cls(AssistantMessage(content=[TextContent(text=t)]) for t in texts)

    def add(self, *replies: Script) -> None:
        """Append more scripted replies."""
        self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._replies)

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Validate the request, then stream and return the next scripted reply."""
        self.requests.append(config)
        if self.validate:
            self._validator.check(config.messages)
        if not self._replies:
            raise ProviderError(ErrorKind.OTHER, "MockProvider has no more scripted replies")
        script = self._replies.popleft()
        if isinstance(script, ProviderError):
            raise script
        if isinstance(script, AssistantMessage):
            script = MockReply(message=script)
        elif not isinstance(script, MockReply):
            script = MockReply(message=script(config))
        return await self._play(script, config, sink)

    async def _play(
        self, reply: MockReply, config: StreamConfig, sink: DeltaSink
    ) -> AssistantMessage:
        scripted = reply.message or AssistantMessage()
        # A fresh message each time (a script may be replayed); blocks are shared, as
        # nothing downstream mutates them.
        message = AssistantMessage(
            content=list(scripted.content),
            stop_reason=scripted.stop_reason,
            usage=Usage(
                input=scripted.usage.input,
                output=scripted.usage.output,
                cache_read=scripted.usage.cache_read,
                cache_write=scripted.usage.cache_write,
            ),
            model=scripted.model or config.model.id,
            provider=scripted.provider or config.model.provider,
            error_message=scripted.error_message,
            error_kind=scripted.error_kind,
        )
        sent = 0
        for delta in _deltas(message, reply.chunk_size):
            if reply.fail_after is not None and sent >= reply.fail_after:
                break
            if reply.delay > 0:
                await anyio.sleep(reply.delay)
            sink(delta)
            sent += 1
        if reply.fail_after is not None and sent >= reply.fail_after:
            raise reply.error or ProviderError(ErrorKind.NETWORK, "mock stream ended early")
        if reply.error is not None:
            raise reply.error
        if reply.delay > 0:
            await anyio.sleep(reply.delay)
        return message


def _chunks(text: str, size: int) -> Iterable[str]:
    size = max(size, 1)
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _deltas(
    message: AssistantMessage, chunk_size: int
) -> Iterable[TextDelta | ThinkingDelta | ToolCallDelta]:
    for index, block in enumerate(message.content):
        if isinstance(block, TextContent):
            for piece in _chunks(block.text, chunk_size):
                yield TextDelta(content_index=index, delta=piece)
        elif isinstance(block, ThinkingContent):
            for piece in _chunks(block.thinking, chunk_size):
                yield ThinkingDelta(content_index=index, delta=piece)
        elif isinstance(block, ToolCall):
            raw = json.dumps(block.arguments)
            for piece in _chunks(raw, chunk_size):
                yield ToolCallDelta(content_index=index, id=block.id, name=block.name, delta=piece)


def validate_transcript(messages: Sequence[Message]) -> None:
    """Raise :class:`TranscriptError` for a transcript a real API would refuse.

    The rules: the request is not empty and starts with a user message; every tool result
    answers a call of the assistant message before it, once; every tool call is answered
    before anything else follows; nothing ends on unanswered calls; no message is empty.
    """
    TranscriptValidator().check(messages)


class TranscriptValidator:
    """:func:`validate_transcript` for a growing conversation.

    A request that extends the last one checked (the very same message objects first) is
    checked from where the last check stopped; the prefix comparison is by identity, in C,
    so a long run costs little more than its new messages per request.
    """

    __slots__ = ("_checked",)

    def __init__(self) -> None:
        self._checked: list[Message] = []

    def check(self, messages: Sequence[Message]) -> None:
        if not messages:
            raise TranscriptError("no messages")
        if not isinstance(messages[0], UserMessage):
            raise TranscriptError(f"the first message is {messages[0].role}, not user")
        # A checked transcript never ends on open calls, so the check resumes with none.
        checked = self._checked
        extends = len(checked) <= len(messages) and all(map(operator.is_, checked, messages))
        _check_from(messages, len(checked) if extends else 0)
        self._checked = list(messages)


def _check_from(messages: Sequence[Message], start: int) -> None:
    """Check ``messages[start:]``; ``messages[:start]`` were checked and closed every call."""
    open_calls: dict[str, str] = {}
    for position in range(start, len(messages)):
        message = messages[position]
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id not in open_calls:
                raise TranscriptError(
                    f"message {position}: tool result {message.tool_call_id!r} "
                    "has no matching tool call"
                )
            del open_calls[message.tool_call_id]
            continue
        if open_calls:
            raise TranscriptError(
                f"message {position}: tool calls {sorted(open_calls)} have no results"
            )
        if not message.content:
            raise TranscriptError(f"message {position} ({message.role}) is empty")
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id in open_calls:
                    raise TranscriptError(f"message {position}: duplicate tool call id {call.id!r}")
                open_calls[call.id] = call.name
    if open_calls:
        raise TranscriptError(f"the transcript ends on unanswered tool calls {sorted(open_calls)}")
