"""Reading one Bedrock ``ConverseStream`` eventstream body into a reply.

Frames dispatch on their ``:message-type`` (``event``, ``exception``, ``error``) and
``:event-type`` / ``:exception-type`` headers; each payload is the event structure itself.
Blocks accumulate per ``contentBlockIndex``; a tool call only becomes runnable at its
``contentBlockStop``. The reply is complete once ``messageStop`` and ``metadata`` both
arrived (in either order): the read stops there, so a connection that breaks afterwards
costs nothing. Without ``messageStop``, or when the body ends inside a frame before the
reply is complete, the stream is a ``NETWORK`` failure, never an empty reply; a frame that
fails its checksum or is malformed is ``OTHER`` (not retried: the bytes arrived wrong). A frame
longer than ``StreamLimits.max_event_bytes`` is refused from its prelude, before its
bytes are buffered.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from yoagent.core import AssistantMessage, ErrorKind, ProviderError, StopReason, Usage
from yoagent.core.provider import DeltaSink, StreamConfig, classify
from yoagent.core.support import warn_once

from ._assembly import ReplyBuilder
from ._bedrock_request import PROTOCOL
from ._body import DEFAULT_LIMITS, StreamLimits, too_large
from ._eventstream import EventStreamDecoder, EventStreamError, Frame, FrameTooLarge
from ._http_errors import KeySource, ended_early, malformed
from ._json import as_dict, as_int, as_str, parse_json
from ._logging import logger

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "guardrail_intervened": StopReason.REFUSAL,
    "content_filtered": StopReason.REFUSAL,
    "malformed_model_output": StopReason.ERROR,
    "malformed_tool_use": StopReason.ERROR,
}

_UNSURFACED_STARTS = frozenset({"toolResult", "image"})

MAX_MESSAGE = 500
"""Server text kept in an error (cut after the secrets are scrubbed, never before)."""

EXCEPTION_STATUS: dict[str, int] = {
    "internalserverexception": 500,
    "modelstreamerrorexception": 424,
    "validationexception": 400,
    "throttlingexception": 429,
    "serviceunavailableexception": 503,
}
"""The documented HTTP status of each in-stream exception (lower-cased name)."""


def stream_exception(name: str, payload: bytes, key: KeySource) -> ProviderError:
    """The error for an ``exception`` frame, classified by its documented status."""
    try:
        body = as_dict(parse_json(payload))
    except ValueError:
        body = {}
    message = as_str(body.get("message") or body.get("Message"))
    original = as_str(body.get("originalMessage"))
    if original and original not in message:
        message = f"{message} ({original})" if message else original
    text = key.scrub(f"{name}: {message}" if message else name or "exception")
    error = _classified(text, name, EXCEPTION_STATUS.get(name.lower()))
    logger.debug("exception frame in Bedrock stream: %s", error.message)
    return error


def _classified(text: str, code: str, status: int | None = None) -> ProviderError:
    """``text`` classified whole (an overflow phrase may come late), then cut."""
    error = classify(status=status, codes=(code,), message=text)
    if len(error.message) > MAX_MESSAGE:
        error = ProviderError(error.kind, error.message[:MAX_MESSAGE] + "…", status=status)
    return error


class BedrockReader:
    """Decodes frames and builds the reply: :meth:`feed` takes the body, :meth:`finish`
    gives the reply."""

    def __init__(
        self,
        config: StreamConfig,
        sink: DeltaSink,
        key: KeySource,
        limits: StreamLimits = DEFAULT_LIMITS,
    ) -> None:
        self.config = config
        self.key = key
        self.builder = ReplyBuilder(sink)
        self.limits = limits
        self.decoder = EventStreamDecoder(max_frame_bytes=limits.max_event_bytes)
        self.slots: dict[int, int] = {}
        self.redacted: dict[int, bytearray] = {}
        self.ignored: set[int] = set()
        self.warned: set[tuple[int, str]] = set()
        self.stop_reason: StopReason | None = None
        self.stop_name = ""
        self.usage: Usage | None = None

    @property
    def complete(self) -> bool:
        """Both ``messageStop`` and ``metadata`` arrived."""
        return self.stop_reason is not None and self.usage is not None

    def feed(self, chunk: bytes) -> bool:
        """Take the next piece of the body; True once the reply is complete (stop reading)."""
        try:
            for frame in self.decoder.feed(chunk):
                self._on_frame(frame)
                if self.complete:
                    return True
        except FrameTooLarge:
            limit = self.limits.max_event_bytes
            raise too_large("one frame", limit, "max_event_bytes") from None
        except EventStreamError as error:
            # Bytes that arrived (over TLS) and fail their checksum or framing are a fault of
            # the stream's producer, not a dropped connection: re-sending the request would
            # bill it again for the same fault, so it is OTHER (never retried), as the spec
            # says. A body that merely stops inside a frame is NETWORK (see finish).
            raise ProviderError(ErrorKind.OTHER, f"broken Bedrock event stream: {error}") from None
        return False

    def _on_frame(self, frame: Frame) -> None:
        headers = frame.headers
        message_type = headers.get(":message-type", "event")
        if message_type == "exception":
            raise stream_exception(str(headers.get(":exception-type", "")), frame.payload, self.key)
        if message_type == "error":
            code = str(headers.get(":error-code", ""))
            text = self.key.scrub(str(headers.get(":error-message", "")) or code)
            raise _classified(f"{code}: {text}" if code else text, code)
        event = headers.get(":event-type")
        if message_type != "event" or not isinstance(event, str):
            warn_once(
                logger, f"bedrock-frame:{message_type}", "ignored a %r Bedrock frame", message_type
            )
            return
        try:
            data = as_dict(parse_json(frame.payload))
        except ValueError:
            # As in the SSE protocols: a broken event costs itself, never the reply.
            logger.warning("skipped an unparseable %r event in a Bedrock stream", event)
            return
        if event == "contentBlockDelta":
            self._delta(data)
        elif event == "contentBlockStart":
            self._start(data)
        elif event == "contentBlockStop":
            slot = self.slots.get(self._index(data))
            if slot is not None:
                self.builder.close(slot)
        elif event == "messageStop":
            self._message_stop(data)
        elif event == "metadata":
            self._metadata(as_dict(data.get("usage")))
        elif event != "messageStart":
            warn_once(
                logger, f"bedrock-event:{event}", "ignored unknown Bedrock event type %r", event
            )

    def _index(self, data: dict[str, Any]) -> int:
        index = as_int(data.get("contentBlockIndex"))
        if index is None:
            raise malformed("a Bedrock content block event has no contentBlockIndex")
        return index

    def _drop(self, index: int, what: str) -> None:
        if (index, what) not in self.warned:
            self.warned.add((index, what))
            logger.warning("dropped %s in Bedrock content block %d", what, index)

    def _start(self, data: dict[str, Any]) -> None:
        index = self._index(data)
        start = as_dict(data.get("start"))
        if "toolUse" in start:
            tool = as_dict(start["toolUse"])
            if tool.get("type") == "server_tool_use":
                self.ignored.add(index)
                self._drop(index, f"a server tool call ({as_str(tool.get('name'))})")
                return
            self.slots[index] = self.builder.open_tool(
                as_str(tool.get("toolUseId")), as_str(tool.get("name"))
            )
        elif start.keys() & _UNSURFACED_STARTS:
            # A server tool's result or a generated image: the reply does not hold them.
            self.ignored.add(index)
            self._drop(index, f"a {'/'.join(sorted(start))} block")
        elif start:
            # Something newer: no block yet, so the first delta decides what it is.
            warn_once(
                logger,
                f"bedrock-start:{'/'.join(sorted(start))}",
                "unknown Bedrock contentBlockStart member %s",
                "/".join(sorted(start)),
            )

    def _delta(self, data: dict[str, Any]) -> None:
        index = self._index(data)
        if index in self.ignored:
            return
        delta = as_dict(data.get("delta"))
        slot = self.slots.get(index)
        kind = self.builder.kind(slot) if slot is not None else None
        if "text" in delta:
            if slot is None:
                slot = self.slots[index] = self.builder.open_text()
            elif kind != "text":
                self._drop(index, f"text on a {kind} block")
                return
            text = as_str(delta["text"])
            if text:
                self.builder.add_text(slot, text)
        elif "reasoningContent" in delta:
            self._reasoning(index, slot, kind, as_dict(delta["reasoningContent"]))
        elif "toolUse" in delta:
            if kind != "tool":
                self._drop(index, "tool input without its toolUse start")
                return
            assert slot is not None
            self.builder.add_tool_arguments(slot, as_str(as_dict(delta["toolUse"]).get("input")))
        else:
            self._drop(index, "/".join(sorted(delta)) or "an empty delta")

    def _reasoning(
        self, index: int, slot: int | None, kind: str | None, part: dict[str, Any]
    ) -> None:
        if slot is None:
            slot = self.slots[index] = self.builder.open_thinking()
        elif kind != "thinking":
            self._drop(index, f"reasoning on a {kind} block")
            return
        text = as_str(part.get("text"))
        if text:
            self.builder.add_thinking(slot, text)
        signature = as_str(part.get("signature"))
        if signature:
            self.builder.add_signature(slot, signature)
        redacted = part.get("redactedContent")
        if isinstance(redacted, str) and redacted:
            try:
                data = base64.b64decode(redacted, validate=True)
            except (binascii.Error, ValueError):
                raise malformed("Bedrock redactedContent is not base64") from None
            joined = self.redacted.setdefault(index, bytearray())
            joined += data
            self.builder.set_redacted(slot, base64.b64encode(joined).decode(), PROTOCOL)

    def _message_stop(self, data: dict[str, Any]) -> None:
        name = as_str(data.get("stopReason"))
        found = STOP_REASONS.get(name)
        if found is None:
            warn_once(logger, f"bedrock-stop:{name}", "unknown Bedrock stop reason %r", name)
            found = StopReason.STOP
        self.stop_reason = found
        self.stop_name = name

    def _metadata(self, usage: dict[str, Any]) -> None:
        self.usage = Usage(
            input=as_int(usage.get("inputTokens")) or 0,
            output=as_int(usage.get("outputTokens")) or 0,
            cache_read=as_int(usage.get("cacheReadInputTokens")) or 0,
            cache_write=as_int(usage.get("cacheWriteInputTokens")) or 0,
        )

    def finish(self) -> AssistantMessage:
        """The reply once the read ended, or a ``NETWORK`` error when the stream was cut."""
        if not self.complete:
            try:
                self.decoder.close()
            except EventStreamError as error:
                raise ProviderError(
                    ErrorKind.NETWORK, f"the Bedrock stream was cut: {error}"
                ) from None
        if self.stop_reason is None:
            raise ended_early("the Bedrock stream ended before messageStop")
        usage = self.usage
        if usage is None:
            logger.warning(
                "the Bedrock stream ended without its metadata event: usage counted as zero",
                extra={"usage_missing": True},
            )
            usage = Usage()
        model = self.config.model
        reply = self.builder.finish(
            stop_reason=self.stop_reason, usage=usage, model=model.id, provider=model.provider
        )
        if reply.error_message is None and self.stop_reason in (
            StopReason.REFUSAL,
            StopReason.ERROR,
        ):
            reply.error_message = f"Bedrock stopped the reply: {self.stop_name}"
        return reply
