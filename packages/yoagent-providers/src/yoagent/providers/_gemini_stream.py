"""The ``streamGenerateContent?alt=sse`` stream read into one reply (Gemini API and Vertex AI).

Each chunk is a ``GenerateContentResponse``; candidate 0's parts become blocks: text,
thought text (``thought: true``) as thinking, ``functionCall`` as a tool call. A part's
``thoughtSignature`` is kept as a thinking block of its own, placed just before the block
the part starts, holding the signature as ``redacted`` data of this protocol, so it is
replayed on the same part and only to the API that produced it. Gemini 3 may stream a
call's arguments (``partialArgs`` with a ``jsonPath``, ``willContinue``): they are
assembled here (lists in order, within ``StreamLimits.max_event_bytes``), and a call
still open when the stream ends is never run. The reply ends
at a ``finishReason`` (or a blocked prompt); a body that ends first is a cut
(``NETWORK``). Usage: ``promptTokenCount`` less ``cachedContentTokenCount`` is input,
``candidatesTokenCount`` plus ``thoughtsTokenCount`` is output.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
from typing import Any, cast

from yoagent.core import ApiProtocol, AssistantMessage, ErrorKind, ProviderError, StopReason, Usage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import warn_once

from ._assembly import ReplyBuilder
from ._body import DEFAULT_LIMITS, StreamLimits
from ._gemini_request import GENERATED_ID_PREFIX
from ._http_errors import KeySource, ended_early, from_stream_error
from ._json import as_dict, as_int, as_list, as_str, parse_json
from ._logging import logger
from ._sse import SseEvent

FINISH_REASONS: dict[str, StopReason] = {
    "STOP": StopReason.STOP,
    "MAX_TOKENS": StopReason.LENGTH,
    "SAFETY": StopReason.REFUSAL,
    "RECITATION": StopReason.REFUSAL,
    "BLOCKLIST": StopReason.REFUSAL,
    "PROHIBITED_CONTENT": StopReason.REFUSAL,
    "SPII": StopReason.REFUSAL,
    "IMAGE_SAFETY": StopReason.REFUSAL,
    "MALFORMED_FUNCTION_CALL": StopReason.ERROR,
    "UNEXPECTED_TOOL_CALL": StopReason.ERROR,
}

MAX_PATH_DEPTH = 64
"""The deepest ``jsonPath`` a streamed argument may have."""

_UNSET = object()
_PATH_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d{1,9})\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")
_SCALAR_COST = 8


def _path(json_path: str) -> list[str | int] | None:
    """``$.a.b[2]`` → ``["a", "b", 2]``; ``None`` when it cannot be used."""
    if not json_path.startswith("$"):
        return None
    steps: list[str | int] = []
    position = 1
    while position < len(json_path):
        match = _PATH_STEP.match(json_path, position)
        if match is None or len(steps) >= MAX_PATH_DEPTH:
            return None
        name, index, quoted, double = match.groups()
        if index is not None:
            steps.append(int(index))
        else:
            steps.append(name if name is not None else (quoted if quoted is not None else double))
        position = match.end()
    return steps


class _OpenString:
    """A string argument still streaming (``willContinue``): its pieces, joined once.

    Appending each piece to a ``str`` copied the whole string every time: a long argument
    streamed in small pieces took time quadratic in its length.
    """

    __slots__ = ("parts",)

    def __init__(self, first: str) -> None:
        self.parts = [first]


class _StreamedCall:
    """A call whose arguments arrive as ``partialArgs`` pieces.

    A list grows one item at a time (an index may name an item or the next one: a gap
    would fill the list with nulls), and the assembled size (estimated from each piece's
    path and value, over-counting) may not pass ``max_bytes``: past either, the call is
    unusable and later pieces are ignored.
    """

    def __init__(self, slot: int, max_bytes: int) -> None:
        self.slot = slot
        self.max_bytes = max_bytes
        self.size = 0
        self.broken = False
        self._arguments: dict[str, Any] = {}
        self._open: list[tuple[object, str | int, _OpenString]] = []

    def add(self, piece: dict[str, Any]) -> None:
        if self.broken:
            return
        steps = _path(as_str(piece.get("jsonPath")))
        value: object = _UNSET
        for field in ("stringValue", "numberValue", "boolValue"):
            if field in piece:
                value = piece[field]
        if "nullValue" in piece:
            value = None
        if steps is None or not steps or value is _UNSET:
            self._break("an unusable jsonPath or no value")
            return
        self.size += sum(len(str(step)) + 4 for step in steps)
        self.size += len(value) + 2 if isinstance(value, str) else _SCALAR_COST
        if self.size > self.max_bytes:
            self._break(f"past {self.max_bytes} bytes (StreamLimits.max_event_bytes)")
            return
        container: object = self._arguments
        for step, following in itertools.pairwise(steps):
            container = _child(container, step, [] if isinstance(following, int) else {})
            if container is None:
                self._break("a path through a value, or a list index out of order")
                return
        last = steps[-1]
        current = _get(container, last)
        if isinstance(value, str) and isinstance(current, _OpenString):
            current.parts.append(value)  # the string at this path goes on
            value = current
        elif isinstance(value, str) and piece.get("willContinue") is True:
            value = _OpenString(value)
            self._open.append((container, last, value))
        if isinstance(value, _OpenString) and piece.get("willContinue") is not True:
            value = "".join(value.parts)
        if not _set(container, last, value):
            self._break("a path through a value, or a list index out of order")

    def _break(self, why: str) -> None:
        self.broken = True
        logger.warning("Gemini: unusable streamed call arguments (%s)", why)

    def arguments(self) -> dict[str, Any]:
        """The assembled arguments, with any string still streaming as far as it got."""
        for container, step, string in self._open:
            if _get(container, step) is string:
                _set(container, step, "".join(string.parts))
        self._open.clear()
        return self._arguments


def _child(container: object, step: str | int, fresh: object) -> object:
    current = _get(container, step)
    if isinstance(current, list | dict):
        return cast(object, current)
    return fresh if _set(container, step, fresh) else None


def _get(container: object, step: str | int) -> object:
    if isinstance(step, int):
        items = as_list(container)
        return items[step] if step < len(items) else None
    return as_dict(container).get(step)


def _set(container: object, step: str | int, value: object) -> bool:
    """Put ``value`` at ``step``: a key of a dict, an item of a list or the list's next one."""
    if isinstance(step, int):
        items = as_list(container)
        if items is not container or step > len(items):
            return False
        if step == len(items):
            items.append(value)
        else:
            items[step] = value
        return True
    fields = as_dict(container)
    if fields is not container:
        return False
    fields[step] = value
    return True


class GeminiReader:
    """Reads one ``streamGenerateContent`` SSE stream into a reply."""

    def __init__(
        self,
        config: StreamConfig,
        sink: DeltaSink,
        key: KeySource,
        protocol: ApiProtocol,
        limits: StreamLimits = DEFAULT_LIMITS,
    ) -> None:
        self.config = config
        self.key = key
        self.protocol = protocol
        self.limits = limits
        self.builder = ReplyBuilder(sink)
        self.current: int | None = None  # the text or thinking block parts continue
        self.streamed: _StreamedCall | None = None
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self.explanation: str | None = None
        self.response_id = ""
        self.calls = 0

    def on_event(self, event: SseEvent) -> bool:
        """Handle one chunk; True once the reply is complete."""
        try:
            data = as_dict(parse_json(event.data))
        except ValueError:
            logger.warning("skipped an unparseable chunk in a Gemini stream")
            return False
        if data.get("error"):
            raise from_stream_error(data, self.key)
        if not self.response_id:
            self.response_id = as_str(data.get("responseId"))
        if "usageMetadata" in data:
            self._read_usage(as_dict(data["usageMetadata"]))
        if "promptFeedback" in data:
            blocked = as_str(as_dict(data["promptFeedback"]).get("blockReason"))
            if blocked:
                self.stop_reason = StopReason.REFUSAL
                self.explanation = f"the prompt was blocked ({blocked})"
                return True
        candidates = data.get("candidates")
        if not candidates or not isinstance(candidates, list):
            return False
        candidate = as_dict(cast(list[Any], candidates)[0])
        parts = as_dict(candidate.get("content")).get("parts")
        if isinstance(parts, list):
            for part in cast(list[Any], parts):
                if isinstance(part, dict):
                    self._part(cast(dict[str, Any], part))
        reason = candidate.get("finishReason")
        if reason:
            self._finish_reason(as_str(reason), as_str(candidate.get("finishMessage")))
            return True
        return False

    def _part(self, part: dict[str, Any]) -> None:
        text = part.get("text")
        if len(part) == 1 and isinstance(text, str):  # the common case: plain text
            if text:
                self._text("text", text)
            return
        signature = as_str(part.get("thoughtSignature"))
        if signature:
            self.builder.add_redacted(signature, self.protocol)
            self.current = None  # the part's content starts a block after its signature
        if isinstance(part.get("functionCall"), dict):
            self._function_call(as_dict(part["functionCall"]))
            return
        if isinstance(text, str) and text:
            self._text("thinking" if part.get("thought") is True else "text", text)
        elif "inlineData" in part or "executableCode" in part:
            warn_once(
                logger, f"gemini-part:{sorted(part)}", "ignored a Gemini %s part", sorted(part)
            )

    def _text(self, kind: str, text: str) -> None:
        current = self.current
        if current is None or self.builder.kind(current) != kind:
            current = self.current = (
                self.builder.open_thinking() if kind == "thinking" else self.builder.open_text()
            )
        if kind == "thinking":
            self.builder.add_thinking(current, text)
        else:
            self.builder.add_text(current, text)

    def _new_call(self, call: dict[str, Any]) -> int:
        self._end_streamed()
        self.current = None
        self.calls += 1
        call_id = as_str(call.get("id")) or (
            f"{GENERATED_ID_PREFIX}{self.response_id or secrets.token_hex(6)}_{self.calls}"
        )
        return self.builder.open_tool(call_id, as_str(call.get("name")))

    def _function_call(self, call: dict[str, Any]) -> None:
        pieces = as_list(call.get("partialArgs"))
        continues = call.get("willContinue") is True
        if as_str(call.get("name")) and (continues or pieces):
            self.streamed = _StreamedCall(self._new_call(call), self.limits.max_event_bytes)
        elif as_str(call.get("name")):
            slot = self._new_call(call)
            args = call.get("args")
            self.builder.add_tool_arguments(slot, json.dumps(args if args is not None else {}))
            self.builder.close(slot)
            return
        streamed = self.streamed
        if streamed is None:
            if pieces or continues:
                warn_once(logger, "gemini-orphan-args", "Gemini: streamed arguments with no call")
            return
        for piece in pieces:
            streamed.add(as_dict(piece))
        if not continues:  # `functionCall: {}` or the last piece: the call is whole
            self._end_streamed()

    def _end_streamed(self) -> None:
        streamed, self.streamed = self.streamed, None
        if streamed is None:
            return
        if streamed.broken:
            self.builder.add_tool_arguments(streamed.slot, "<unusable streamed arguments>")
        else:
            self.builder.add_tool_arguments(streamed.slot, json.dumps(streamed.arguments()))
        self.builder.close(streamed.slot)

    def _finish_reason(self, reason: str, message: str) -> None:
        found = FINISH_REASONS.get(reason)
        if found is None:
            warn_once(logger, f"gemini-finish:{reason}", "unknown Gemini finishReason %r", reason)
            found = StopReason.STOP
        if found is StopReason.ERROR:
            raise ProviderError(
                ErrorKind.API, f"Gemini ended the reply with {reason}: {message or 'no detail'}"
            )
        if found is StopReason.REFUSAL:
            self.explanation = f"the response was blocked ({reason})"
        self.stop_reason = found

    def _read_usage(self, usage: dict[str, Any]) -> None:
        cached = as_int(usage.get("cachedContentTokenCount")) or 0
        prompt = as_int(usage.get("promptTokenCount")) or 0
        output = (as_int(usage.get("candidatesTokenCount")) or 0) + (
            as_int(usage.get("thoughtsTokenCount")) or 0
        )
        self.usage = Usage(input=max(prompt - cached, 0), output=output, cache_read=cached)

    def finish(self) -> AssistantMessage:
        """The complete reply, or a NETWORK error when the stream ended before its end."""
        if self.stop_reason is None:
            raise ended_early("the Gemini stream ended before a finishReason")
        # A call whose arguments were still streaming is left open: it is never run.
        model = self.config.model
        reply = self.builder.finish(
            stop_reason=self.stop_reason,
            usage=self.usage,
            model=model.id,
            provider=model.provider,
        )
        if reply.stop_reason is StopReason.REFUSAL and self.explanation:
            reply.error_message = self.explanation
        return reply
