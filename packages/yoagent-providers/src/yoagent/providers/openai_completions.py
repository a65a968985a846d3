"""The OpenAI Chat Completions API and its many compatible servers (streamed)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    AssistantMessage,
    DeltaSink,
    ErrorKind,
    ImageContent,
    ModelConfig,
    OpenAiCompat,
    ProviderError,
    StopReason,
    StreamConfig,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.core.provider import Message
from yoagent.core.support import warn_once

from ._assembly import ReplyBuilder
from ._http import (
    HttpProvider,
    encode_body,
    json_text,
    merge_headers,
    nested_too_deeply,
    resolve_key,
    utf8,
)
from ._http_errors import KeySource, ended_early, from_stream_error
from ._json import as_dict, as_int, as_list, as_str, parse_json
from ._logging import logger
from ._messages import WireCache, WireMessage, merge_same_role, notes_index
from ._sse import SseEvent

DEFAULT_BASE_URL = "https://api.openai.com/v1"

FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.STOP,
    "end_turn": StopReason.STOP,
    "length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "content_filter": StopReason.REFUSAL,
}

_REASONING_KEYS = frozenset({"reasoning_content", "reasoning", "reasoning_details"})
"""The delta fields :meth:`_Reader._reasoning` reads."""

_LEVEL_ORDER = (ThinkingLevel.MINIMAL, ThinkingLevel.LOW, ThinkingLevel.MEDIUM, ThinkingLevel.HIGH)


def _compat(model: ModelConfig) -> OpenAiCompat:
    return model.compat if isinstance(model.compat, OpenAiCompat) else OpenAiCompat()


def reasoning_effort(level: ThinkingLevel, ceiling: ThinkingLevel) -> str | None:
    """The ``reasoning_effort`` value for ``level``, capped at the vendor's ``ceiling``."""
    if level is ThinkingLevel.OFF:
        return None
    if ceiling is ThinkingLevel.OFF:
        return None
    return _LEVEL_ORDER[min(_LEVEL_ORDER.index(level), _LEVEL_ORDER.index(ceiling))].value


def _parts(blocks: Sequence[TextContent | ImageContent]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        else:
            url = f"data:{block.mime_type};base64,{block.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _assistant(message: AssistantMessage, compat: OpenAiCompat) -> WireMessage:
    wire: WireMessage = {"role": "assistant"}
    text = [{"type": "text", "text": b.text} for b in message.content if isinstance(b, TextContent)]
    wire["content"] = [part for part in text if part["text"]]
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": _arguments_text(block.arguments)},
        }
        for block in message.content
        if isinstance(block, ToolCall)
    ]
    if calls:
        wire["tool_calls"] = calls
    if compat.replay_reasoning:
        reasoning = "".join(
            block.thinking
            for block in message.content
            if isinstance(block, ThinkingContent) and block.redacted is None
        )
        if reasoning:
            field = "reasoning" if compat.reasoning_field == "reasoning" else "reasoning_content"
            wire[field] = reasoning
    return wire


def _arguments_text(arguments: dict[str, Any]) -> str:
    try:
        return json.dumps(arguments)
    except RecursionError:  # a history built by hand can hold any value
        raise nested_too_deeply() from None


def _finalize(message: WireMessage) -> WireMessage:
    """Collapse the content list built for merging into what the API expects."""
    role = message["role"]
    parts = cast(list[dict[str, Any]], message.get("content", []))
    if role == "tool":
        return message
    if all(part["type"] == "text" for part in parts):
        text = "\n\n".join(part["text"] for part in parts)
        if role == "assistant":
            message["content"] = text or None
        else:
            message["content"] = text
    return message


KEPT_JSON_MAX = 8192
"""The longest message JSON (in characters) a :class:`WireCache` entry keeps for later
requests; most messages of an agent run (calls, short results, replies) are far below."""


class _Converted:
    """One history message as converted: its wire form, the image parts that follow its run
    of tool results, the message as sent when it stands alone (``None``: it is dropped as
    empty), and that message's JSON once a request has been encoded from it.

    A provider keeps these in its :class:`WireCache` across turns; none of them is ever
    edited after it is made (what merging changes goes into new dicts and lists).
    """

    __slots__ = ("_json", "final", "pictures", "wire")

    def __init__(
        self, wire: WireMessage, pictures: list[dict[str, Any]], final: WireMessage | None
    ) -> None:
        self.wire = wire
        self.pictures = pictures
        self.final = final
        self._json: str | None = None

    def final_json(self) -> str:
        """:attr:`final` as JSON text (asked only of a message that is sent), kept after the
        first time when it is short: the text is a second copy of what the message holds,
        so a large one (a file read, an image) is encoded again for each request, as the
        whole history was before, rather than held twice."""
        text = self._json
        if text is None:
            text = json_text(self.final)
            if len(text) <= KEPT_JSON_MAX:
                self._json = text
        return text


def _kept(message: WireMessage) -> bool:
    # A tool message always stays (every call needs its answer); others only when non-empty.
    return message["role"] == "tool" or bool(message.get("content") or message.get("tool_calls"))


def _detached(message: WireMessage) -> WireMessage:
    """A copy whose top-level lists are copies too (what merging and notes may change)."""
    copy = dict(message)
    for key in ("content", "tool_calls"):
        value = copy.get(key)
        if isinstance(value, list):
            copy[key] = list(cast(list[Any], value))
    return copy


def _convert(message: Message, compat: OpenAiCompat) -> _Converted:
    pictures: list[dict[str, Any]] = []
    if isinstance(message, UserMessage):
        wire: WireMessage = {"role": "user", "content": _parts(message.content)}
    elif isinstance(message, AssistantMessage):
        wire = _assistant(message, compat)
    else:
        text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
        wire = {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
        images = [b for b in message.content if isinstance(b, ImageContent)]
        if images:
            note = {"type": "text", "text": f"Images returned by {message.tool_name}:"}
            pictures = [note, *_parts(images)]
    return _Converted(wire, pictures, _finalize(_detached(wire)) if _kept(wire) else None)


def _usual_finals(converted: Sequence[_Converted]) -> list[WireMessage] | None:
    """Each message's own finalized form when no message is dropped, merged or followed by
    images (the usual history, sent as it is), else ``None``. The cache's own dicts:
    copy before handing them out."""
    finals: list[WireMessage] = []
    previous = ""
    for entry in converted:
        final = entry.final
        if entry.pictures or final is None:
            return None
        role = final["role"]
        if role == previous and role != "tool":
            return None
        previous = role
        finals.append(final)
    return finals


def _standalone(converted: Sequence[_Converted]) -> list[WireMessage] | None:
    """The usual history as sent (copies of each message's finalized form), else ``None``."""
    finals = _usual_finals(converted)
    return None if finals is None else [_detached(final) for final in finals]


def _system_message(system_prompt: str, compat: OpenAiCompat) -> WireMessage:
    return {
        "role": "developer" if compat.supports_developer_role else "system",
        "content": system_prompt,
    }


def build_messages(
    system_prompt: str,
    messages: Sequence[Message],
    turn_notes: Sequence[str],
    compat: OpenAiCompat,
    cache: WireCache[_Converted] | None = None,
) -> list[WireMessage]:
    """The ``messages`` array: system prompt, history with tool results as ``tool`` messages.

    With a ``cache``, each message converted on an earlier call is reused; what is
    merged, finalized or noted goes into new dicts and lists, so the cache's entries
    never change.
    """
    converted = _converted_history(messages, compat, cache)
    return _wire_messages(system_prompt, messages, converted, turn_notes, compat)


def _converted_history(
    messages: Sequence[Message], compat: OpenAiCompat, cache: WireCache[_Converted] | None
) -> list[_Converted]:
    if cache is None:
        return [_convert(message, compat) for message in messages]
    return cache.convert(messages, compat, lambda message: _convert(message, compat))


def _wire_messages(
    system_prompt: str,
    messages: Sequence[Message],
    converted: Sequence[_Converted],
    turn_notes: Sequence[str],
    compat: OpenAiCompat,
) -> list[WireMessage]:
    notes = [{"type": "text", "text": note} for note in turn_notes if note]
    out = None if notes else _standalone(converted)
    if out is None:
        out = _merged(messages, converted, notes)
    if system_prompt:
        out.insert(0, _system_message(system_prompt, compat))
    return out


def _merged(
    messages: Sequence[Message], converted: Sequence[_Converted], notes: list[dict[str, Any]]
) -> list[WireMessage]:
    """The history as sent, the general way: images placed, empty messages dropped,
    same-role neighbours merged, the turn's notes added, then each finalized."""
    wire: list[WireMessage] = []
    # Tool messages carry text only, and must directly follow their assistant message:
    # images from a run of tool results follow the whole run as one user message.
    images: list[dict[str, Any]] = []
    for message, entry in zip(messages, converted, strict=True):
        if not isinstance(message, ToolResultMessage) and images:
            wire.append({"role": "user", "content": images})
            images = []
        wire.append(entry.wire)
        images += entry.pictures
    if images:
        wire.append({"role": "user", "content": images})
    wire = [m for m in wire if _kept(m)]
    wire = merge_same_role(wire, ("content", "tool_calls"), keep_apart=frozenset({"tool"}))
    if notes:
        index = notes_index(wire)
        if index is None:
            wire.append({"role": "user", "content": notes})
        else:
            wire[index]["content"] = [*wire[index]["content"], *notes]
    return [_finalize(m) for m in wire]


def build_request_body(
    config: StreamConfig, cache: WireCache[_Converted] | None = None
) -> dict[str, Any]:
    """The JSON body of one streamed Chat Completions request for ``config``.

    Vendor differences come from ``OpenAiCompat``: the max-tokens field name, whether usage
    can be requested in the stream, the reasoning-effort field and its ceiling, DeepSeek's
    thinking toggle, and which optional fields the vendor rejects.
    """
    compat = _compat(config.model)
    converted = _converted_history(config.messages, compat, cache)
    return _body(config, compat, converted)


def _body(
    config: StreamConfig, compat: OpenAiCompat, converted: Sequence[_Converted]
) -> dict[str, Any]:
    messages = _wire_messages(
        config.system_prompt, config.messages, converted, config.turn_notes, compat
    )
    return {"model": config.model.id, "messages": messages, **_settings(config, compat)}


def encode_request(config: StreamConfig, cache: WireCache[_Converted]) -> bytes:
    """``build_request_body(config, cache)`` as the JSON bytes that are sent.

    The usual history (nothing merged, dropped, noted or followed by images) is written
    from each message's JSON, encoded the first time the message was sent: a turn no
    longer re-encodes the whole history (≈ 125 → 40 µs for 80 messages, ≈ 275 → 80 µs for
    200 on the bench machine; the text this keeps per message is measured in
    ``benchmarks/RESULTS.md``).
    """
    compat = _compat(config.model)
    converted = _converted_history(config.messages, compat, cache)
    if any(config.turn_notes) or _usual_finals(converted) is None:
        return encode_body(_body(config, compat, converted))  # the general way
    parts = [entry.final_json() for entry in converted]
    if config.system_prompt:
        parts.insert(0, json_text(_system_message(config.system_prompt, compat)))
    settings = json_text(_settings(config, compat))  # never empty: it holds "stream"
    return utf8(
        f'{{"model":{json_text(config.model.id)},"messages":[{",".join(parts)}],{settings[1:]}'
    )


def _settings(config: StreamConfig, compat: OpenAiCompat) -> dict[str, Any]:
    """Every field of the body but the model and the messages."""
    model = config.model
    body: dict[str, Any] = {"stream": True}
    if compat.supports_usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    body[compat.max_tokens_field] = config.max_tokens or model.max_tokens
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if config.tools:
        tools: list[dict[str, Any]] = []
        for tool in config.tools:
            function: dict[str, Any] = {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            if (
                compat.supports_strict_tools
                and tool.parameters.get("additionalProperties") is False
            ):
                function["strict"] = True
            tools.append({"type": "function", "function": function})
        body["tools"] = tools
    if compat.thinking_toggle:
        off = config.thinking_level is ThinkingLevel.OFF
        body["thinking"] = {"type": "disabled" if off else "enabled"}
    elif compat.supports_reasoning_effort and model.reasoning:
        effort = reasoning_effort(config.thinking_level, compat.max_reasoning_effort)
        if effort is not None:
            body["reasoning_effort"] = effort
    schema = config.output_schema
    if schema is not None:
        if compat.supports_structured_output:
            json_schema: dict[str, Any] = {"name": schema.name, "schema": schema.schema}
            if schema.description:
                json_schema["description"] = schema.description
            json_schema["strict"] = schema.strict
            body["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        else:
            warn_once(
                logger,
                f"openai-structured:{model.provider}",
                "%s does not support structured output; the schema is not sent",
                model.provider,
            )
    return body


class _Reader:
    """Reads one Chat Completions chunk stream (choice 0) into a reply."""

    def __init__(self, config: StreamConfig, sink: DeltaSink, key: KeySource) -> None:
        self.config = config
        self.key = key
        self.builder = ReplyBuilder(sink)
        self.current: int | None = None
        self.tools: dict[int, int] = {}
        self.tool_ids: dict[str, int] = {}
        self.usage = Usage()
        self.finish_reason: StopReason | None = None
        self.refused = False
        self.done = False

    def on_event(self, event: SseEvent) -> bool:
        if event.data.strip() == "[DONE]":
            self.done = True
            return True
        try:
            payload = parse_json(event.data)
        except ValueError:
            logger.warning("skipped an unparseable event in a chat completions stream")
            return False
        data = as_dict(payload)
        if data.get("error"):
            raise from_stream_error(data, self.key)
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._read_usage(cast(dict[str, Any], usage))
        for raw_choice in as_list(data.get("choices")):
            choice = as_dict(raw_choice)
            if (as_int(choice.get("index")) or 0) == 0:
                self._choice(choice)
        return False

    def _read_usage(self, usage: dict[str, Any]) -> None:
        prompt = as_int(usage.get("prompt_tokens")) or 0
        details = as_dict(usage.get("prompt_tokens_details"))
        cached = as_int(details.get("cached_tokens"))
        if cached is None:
            cached = as_int(usage.get("prompt_cache_hit_tokens")) or 0  # DeepSeek
        self.usage = Usage(
            input=max(prompt - cached, 0),
            output=as_int(usage.get("completion_tokens")) or 0,
            cache_read=cached,
        )

    def _open(self, kind: str) -> int:
        if self.current is None or self.builder.kind(self.current) != kind:
            self.current = (
                self.builder.open_text() if kind == "text" else self.builder.open_thinking()
            )
        return self.current

    def _reasoning(self, delta: dict[str, Any]) -> None:
        text = as_str(delta.get("reasoning_content")) or as_str(delta.get("reasoning"))
        if text:
            self.builder.add_thinking(self._open("thinking"), text)
            return
        for raw in as_list(delta.get("reasoning_details")):
            item = as_dict(raw)
            kind = as_str(item.get("type"))
            if kind in ("reasoning.text", "reasoning.summary"):
                piece = as_str(item.get("text")) or as_str(item.get("summary"))
                if piece:
                    self.builder.add_thinking(self._open("thinking"), piece)
            signature = as_str(item.get("signature"))
            if signature:
                self.builder.add_signature(self._open("thinking"), signature)

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = as_dict(choice.get("delta"))
        if not _REASONING_KEYS.isdisjoint(delta):  # most chunks carry none: skip the reads
            self._reasoning(delta)
        content = as_str(delta.get("content"))
        if content:
            self.builder.add_text(self._open("text"), content)
        refusal = as_str(delta.get("refusal"))
        if refusal:
            self.refused = True
            self.builder.add_text(self._open("text"), refusal)
        for raw_call in as_list(delta.get("tool_calls")):
            self._tool_call(as_dict(raw_call))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            if reason == "error":
                raise ProviderError(ErrorKind.API, "the server ended the reply with an error")
            found = FINISH_REASONS.get(reason)
            if found is None:
                warn_once(logger, f"openai-finish:{reason}", "unknown finish_reason %r", reason)
                found = StopReason.STOP
            self.finish_reason = found

    def _tool_call(self, call: dict[str, Any]) -> None:
        index = as_int(call.get("index"))
        function = as_dict(call.get("function"))
        call_id = as_str(call.get("id"))
        name = as_str(function.get("name"))
        if index is None:
            # No index (some local servers): a new id starts a call, else the last continues.
            if call_id and call_id not in self.tool_ids:
                index = len(self.tools)
            else:
                index = self.tool_ids.get(call_id, max(self.tools, default=0))
        if call_id:
            self.tool_ids.setdefault(call_id, index)
        slot = self.tools.get(index)
        if slot is None:
            slot = self.builder.open_tool(call_id, name)
            self.tools[index] = slot
        else:
            self.builder.name_tool(slot, call_id, name)
        self.current = None
        arguments = as_str(function.get("arguments"))
        if arguments:
            self.builder.add_tool_arguments(slot, arguments)

    def finish(self) -> AssistantMessage:
        if not self.done and self.finish_reason is None:
            raise ended_early("the chat completions stream ended before finish_reason")
        stop = self.finish_reason or StopReason.STOP
        if self.refused:
            stop = StopReason.REFUSAL
        # A call cut off by the token limit is the last one; earlier calls are complete.
        self.builder.close_all(except_last_tool=stop is StopReason.LENGTH)
        model = self.config.model
        return self.builder.finish(
            stop_reason=stop, usage=self.usage, model=model.id, provider=model.provider
        )


class OpenAiCompletionsProvider(HttpProvider):
    """Streams replies from OpenAI Chat Completions or any compatible server.

    Vendor quirks come from ``ModelConfig.compat`` (:class:`~yoagent.core.OpenAiCompat`).
    One ``httpx.AsyncClient`` per instance is reused across turns, and each history
    message is converted to its wire form once (:class:`WireCache`).
    """

    _wire_cache: WireCache[_Converted] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        key, source = resolve_key(model)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        headers = merge_headers(headers, model.headers)
        url = (model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        reader = _Reader(config, sink, source)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = encode_request(config, cache)
        return await self._read_sse(url, headers, body, source, reader)
