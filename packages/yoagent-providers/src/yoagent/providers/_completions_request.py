"""The Chat Completions request body: the ``messages`` array and the settings around it.

History messages are converted once and kept in the provider's :class:`WireCache` across
turns; the usual history (nothing merged, dropped, noted or followed by images) is then
written from each message's JSON encoded the first time it was sent
(:func:`encode_request`). Vendor differences come from ``OpenAiCompat``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    AssistantMessage,
    ImageContent,
    ModelConfig,
    OpenAiCompat,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig
from yoagent.core.support import warn_once

from ._http import encode_body, json_text, nested_too_deeply, utf8
from ._logging import logger
from ._messages import WireCache, WireMessage, converted, merge_same_role, notes_index

_LEVEL_ORDER = (ThinkingLevel.MINIMAL, ThinkingLevel.LOW, ThinkingLevel.MEDIUM, ThinkingLevel.HIGH)


_DEFAULT_COMPAT = OpenAiCompat()  # frozen: one shared by every model without its own


def compat_of(model: ModelConfig) -> OpenAiCompat:
    """The model's ``OpenAiCompat`` (defaults when it has none)."""
    return model.compat if isinstance(model.compat, OpenAiCompat) else _DEFAULT_COMPAT


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


class ConvertedMessage:
    """One history message as converted: the message as sent when it stands alone
    (``None``: it is dropped as empty), the image parts that follow its run of tool
    results, that message's JSON once a request has been encoded from it, and its form
    for merging (:attr:`wire`).

    A provider keeps these in its :class:`WireCache` across turns; none of them is ever
    edited after it is made (what merging changes goes into new dicts and lists). The
    merge form is what a history with notes, images or same-role neighbours is built
    from; the usual history never needs it, so it is kept only for a message that is
    always merged (dropped as empty, or followed by images) and otherwise rebuilt from the
    message when first needed: every dict and list an entry holds is one more object for
    the garbage collector to walk in each full collection, per message, per live run.
    """

    __slots__ = ("_compat", "_json", "_message", "_wire", "final", "pictures")

    def __init__(
        self,
        message: Message,
        compat: OpenAiCompat,
        wire: WireMessage | None,
        pictures: Sequence[dict[str, Any]],
        final: WireMessage | None,
    ) -> None:
        self._message = message
        self._compat = compat
        self._wire = wire
        self.pictures = pictures
        self.final = final
        self._json: str | None = None

    @property
    def wire(self) -> WireMessage:
        """The message's form for merging: content as a list of parts."""
        wire = self._wire
        if wire is None:
            wire = self._wire = _wire_form(self._message, self._compat)[0]
        return wire

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


def _wire_form(
    message: Message, compat: OpenAiCompat
) -> tuple[WireMessage, Sequence[dict[str, Any]]]:
    """The message's form for merging, and the image parts that follow it."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _parts(message.content)}, ()
    if isinstance(message, AssistantMessage):
        return _assistant(message, compat), ()
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    wire: WireMessage = {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if not images:
        return wire, ()
    note = {"type": "text", "text": f"Images returned by {message.tool_name}:"}
    return wire, [note, *_parts(images)]


def _convert(
    message: Message, compat: OpenAiCompat, *, keep_wire: bool = False
) -> ConvertedMessage:
    """``message`` converted; its merge form kept when ``keep_wire`` (nothing outlives this
    request) or when it is always merged."""
    wire, pictures = _wire_form(message, compat)
    final = _finalize(_detached(wire)) if _kept(wire) else None
    keep_wire = keep_wire or final is None or bool(pictures)
    return ConvertedMessage(message, compat, wire if keep_wire else None, pictures, final)


def _usual_finals(converted: Sequence[ConvertedMessage]) -> list[WireMessage] | None:
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


def _standalone(converted: Sequence[ConvertedMessage]) -> list[WireMessage] | None:
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
    cache: WireCache[ConvertedMessage] | None = None,
) -> list[WireMessage]:
    """The ``messages`` array: system prompt, history with tool results as ``tool`` messages.

    With a ``cache``, each message converted on an earlier call is reused; what is
    merged, finalized or noted goes into new dicts and lists, so the cache's entries
    never change.
    """
    converted = _converted_history(messages, compat, cache)
    return _wire_messages(system_prompt, messages, converted, turn_notes, compat)


def _converted_history(
    messages: Sequence[Message], compat: OpenAiCompat, cache: WireCache[ConvertedMessage] | None
) -> list[ConvertedMessage]:
    keep_wire = cache is None  # uncached entries live for this request only

    return converted(
        messages, lambda message: _convert(message, compat, keep_wire=keep_wire), cache, compat
    )


def _wire_messages(
    system_prompt: str,
    messages: Sequence[Message],
    converted: Sequence[ConvertedMessage],
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
    messages: Sequence[Message], converted: Sequence[ConvertedMessage], notes: list[dict[str, Any]]
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
    config: StreamConfig, cache: WireCache[ConvertedMessage] | None = None
) -> dict[str, Any]:
    """The JSON body of one streamed Chat Completions request for ``config``.

    Vendor differences come from ``OpenAiCompat``: the max-tokens field name, whether usage
    can be requested in the stream, the reasoning-effort field and its ceiling, DeepSeek's
    thinking toggle, and which optional fields the vendor rejects.
    """
    compat = compat_of(config.model)
    converted = _converted_history(config.messages, compat, cache)
    return _body(config, compat, converted)


def _body(
    config: StreamConfig, compat: OpenAiCompat, converted: Sequence[ConvertedMessage]
) -> dict[str, Any]:
    messages = _wire_messages(
        config.system_prompt, config.messages, converted, config.turn_notes, compat
    )
    return {"model": config.model.id, "messages": messages, **_settings(config, compat)}


def encode_request(config: StreamConfig, cache: WireCache[ConvertedMessage]) -> bytes:
    """``build_request_body(config, cache)`` as the JSON bytes that are sent.

    The usual history (nothing merged, dropped, noted or followed by images) is written
    from each message's JSON, encoded the first time the message was sent: a turn no
    longer re-encodes the whole history (≈ 125 → 40 µs for 80 messages, ≈ 275 → 80 µs for
    200 on the bench machine; the text this keeps per message is measured in
    ``benchmarks/RESULTS.md``).
    """
    compat = compat_of(config.model)
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
