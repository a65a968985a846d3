"""The Responses API request body, shared by OpenAI and Azure OpenAI.

One builder for both services: they differ only in URL and auth (see their modules).
Encrypted reasoning is opt-in (``OpenAiCompat.encrypted_reasoning``) and only for a
reasoning model (``ModelConfig.reasoning`` or a reasoning effort sent): then the request
asks for ``reasoning.encrypted_content`` and earlier reasoning items go back in place,
each before the output item that followed it, which carries the id the same API gave it
(the API rejects a reasoning item without its paired item). Reasoning from another API
(OpenAI's and Azure's are distinct) and plain reasoning text are never sent; a reasoning
item with no output after it in its turn is dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig
from yoagent.core.support import warn_once

from ._completions_request import compat_of, reasoning_effort
from ._json import as_dict, as_list, as_str, parse_json
from ._logging import logger
from ._messages import WireCache, WireMessage, converted

INCLUDE_ENCRYPTED_REASONING = "reasoning.encrypted_content"
CALL_IDS_KEY = "call_ids"
"""In a stored reasoning item: ``call_id`` → the ``fc_…`` id of each function call after it."""
MESSAGE_ID_KEY = "message_id"
"""In a stored reasoning item: the ``msg_…`` id of the first message after it."""


def input_parts(blocks: Sequence[TextContent | ImageContent]) -> list[dict[str, Any]]:
    """Text and images as ``input_text`` / ``input_image`` parts (empty text left out)."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"type": "input_text", "text": block.text})
        else:
            url = f"data:{block.mime_type};base64,{block.data}"
            parts.append({"type": "input_image", "image_url": url})
    return parts


def _user_item(parts: list[dict[str, Any]]) -> WireMessage:
    if len(parts) == 1 and parts[0]["type"] == "input_text":
        return {"role": "user", "content": parts[0]["text"]}
    return {"role": "user", "content": parts}


def _tool_output(message: ToolResultMessage) -> WireMessage:
    if any(isinstance(block, ImageContent) for block in message.content):
        output: object = input_parts(message.content)
    else:
        output = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


def _stored_reasoning(data: str) -> tuple[dict[str, Any], dict[str, str], str] | None:
    """A stored reasoning item read back: the input item, its paired call ids, message id."""
    try:
        stored = as_dict(parse_json(data))
    except ValueError:
        return None
    item_id, encrypted = as_str(stored.get("id")), as_str(stored.get("encrypted_content"))
    if not item_id or not encrypted:
        return None
    item = {
        "type": "reasoning",
        "id": item_id,
        "summary": as_list(stored.get("summary")),
        "encrypted_content": encrypted,
    }
    call_ids = {
        call: fc
        for call, fc in as_dict(stored.get(CALL_IDS_KEY)).items()
        if isinstance(fc, str) and fc
    }
    return item, call_ids, as_str(stored.get(MESSAGE_ID_KEY))


def assistant_items(
    message: AssistantMessage, replay: ApiProtocol | None, out: list[WireMessage]
) -> None:
    """One assistant message as input items, in content order (see the module docstring)."""
    pending: list[dict[str, Any]] = []
    call_ids: dict[str, str] = {}
    message_id = ""
    for block in message.content:
        if isinstance(block, ThinkingContent):
            data = block.redacted_for(replay) if replay is not None else None
            stored = _stored_reasoning(data) if data is not None else None
            if stored is None:
                if block.redacted is not None:
                    logger.debug("Responses: reasoning from elsewhere (or unreadable) not sent")
                continue
            pending.append(stored[0])
            call_ids.update(stored[1])
            message_id = stored[2]
        elif isinstance(block, TextContent):
            if not block.text:
                continue
            out.extend(pending)
            pending = []
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text}],
            }
            if message_id:
                item["id"] = message_id
                message_id = ""
            out.append(item)
        elif isinstance(block, ToolCall):
            out.extend(pending)
            pending = []
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": json.dumps(block.arguments, ensure_ascii=False),
            }
            if block.id in call_ids:
                call["id"] = call_ids[block.id]
            out.append(call)
    if pending:
        logger.debug("Responses: %d trailing reasoning item(s) not sent", len(pending))


def _input_items(message: Message, replay: ApiProtocol | None) -> list[WireMessage]:
    if isinstance(message, UserMessage):
        parts = input_parts(message.content)
        return [_user_item(parts)] if parts else []
    if isinstance(message, AssistantMessage):
        items: list[WireMessage] = []
        assistant_items(message, replay, items)
        return items
    return [_tool_output(message)]


def _copied(item: WireMessage) -> WireMessage:
    copy = dict(item)
    content = copy.get("content")
    if isinstance(content, list):
        copy["content"] = list(cast(list[Any], content))
    return copy


def build_input(
    messages: Sequence[Message],
    turn_notes: Sequence[str],
    replay: ApiProtocol | None,
    cache: WireCache[list[WireMessage]] | None = None,
) -> list[WireMessage]:
    """The ``input`` array: user messages, assistant items, tool outputs, then turn notes.

    With a ``cache``, each message's items made on an earlier call are reused; each item
    sent is a copy (its ``content`` list too), so what a request or its caller changes
    there never reaches the cache.
    """
    made = converted(messages, lambda message: _input_items(message, replay), cache, replay)
    out = [_copied(item) for items in made for item in items]
    notes = [{"type": "input_text", "text": note} for note in turn_notes if note]
    if notes:
        # Output items and tool outputs carry no role: the notes join the last item only
        # when it is the user's message, else they follow everything as a new one.
        if out and out[-1].get("role") == "user":
            content = out[-1]["content"]
            if isinstance(content, str):
                content = [{"type": "input_text", "text": content}]
            out[-1] = {"role": "user", "content": [*content, *notes]}
        else:
            out.append({"role": "user", "content": notes})
    return out


def _cache_key(config: StreamConfig) -> str | None:
    try:
        return config.cache_session_key()
    except UnicodeEncodeError:
        # A system prompt holding a lone surrogate: hash what can be encoded.
        digest = hashlib.sha256(config.system_prompt.encode("utf-8", "replace")).hexdigest()
        return f"yoagent-{digest[:32]}" if config.cache.enabled else None


def build_request_body(
    config: StreamConfig,
    protocol: ApiProtocol,
    wire_cache: WireCache[list[WireMessage]] | None = None,
) -> dict[str, Any]:
    """The JSON body of one streamed Responses request to ``protocol``'s service (each
    history message's items reused from ``wire_cache`` when given)."""
    model = config.model
    compat = compat_of(model)
    effort = (
        reasoning_effort(config.thinking_level, compat.max_reasoning_effort)
        if model.reasoning
        else None
    )
    reasoning_model = model.reasoning or effort is not None
    encrypted = compat.encrypted_reasoning and reasoning_model
    body: dict[str, Any] = {
        "model": model.id,
        "stream": True,
        "input": build_input(
            config.messages, config.turn_notes, protocol if encrypted else None, wire_cache
        ),
        "max_output_tokens": config.max_tokens or model.max_tokens,
    }
    if config.system_prompt:
        body["instructions"] = config.system_prompt
    if config.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            for tool in config.tools
        ]
    if effort is not None:
        body["reasoning"] = {"effort": effort, "summary": "auto"}
    if encrypted:
        body["include"] = [INCLUDE_ENCRYPTED_REASONING]
    key = _cache_key(config)
    if key is not None:
        body["prompt_cache_key"] = key
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if config.output_schema is not None:
        warn_once(
            logger,
            f"responses-structured:{protocol.value}",
            "structured output is not sent over %s; the schema is ignored",
            protocol.value,
        )
    return body
