"""The JSON body of one Bedrock ``ConverseStream`` request (shapes per the Bedrock Runtime API)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig
from yoagent.core.support import warn_once

from ._anthropic_request import thinking_budget
from ._logging import logger
from ._messages import WireCache, WireMessage, converted, join_same_role, notes_index

PROTOCOL = ApiProtocol.BEDROCK_CONVERSE_STREAM
CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}
MAX_CACHE_POINTS = 4
"""Claude on Bedrock accepts four cache points per request."""
USER_TURN_CACHE_POINTS = 2

_TOOL_ID = re.compile(r"[^a-zA-Z0-9_.:-]")
_IMAGE_FORMATS = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg", "gif": "gif", "webp": "webp"}


def is_claude(model_id: str) -> bool:
    """True for Anthropic models, whose reasoning signatures are verified on replay."""
    return "claude" in model_id.lower()


def supports_cache_points(model_id: str) -> bool:
    """Claude and Amazon Nova models take ``cachePoint`` blocks; others reject them."""
    lowered = model_id.lower()
    return "claude" in lowered or "amazon.nova" in lowered


def _tool_id(raw: str) -> str:
    # Bedrock accepts only [a-zA-Z0-9_.:-]{1,64}; ids from other APIs may hold more.
    return _TOOL_ID.sub("_", raw)[:64] or "tool"


def _user_block(block: TextContent | ImageContent) -> dict[str, Any] | None:
    if isinstance(block, TextContent):
        return {"text": block.text} if block.text else None
    subtype = block.mime_type.partition("/")[2].lower()
    image_format = _IMAGE_FORMATS.get(subtype)
    if image_format is None:
        warn_once(
            logger,
            f"bedrock-image:{subtype}",
            "Bedrock takes png, jpeg, gif or webp images; a %s image was left out",
            block.mime_type,
        )
        return None
    return {"image": {"format": image_format, "source": {"bytes": block.data}}}


def _reasoning_block(block: ThinkingContent, model_id: str) -> dict[str, Any] | None:
    if block.redacted is not None:
        data = block.redacted_for(PROTOCOL)
        if data is None:
            logger.debug("skipped another API's encrypted reasoning in a Bedrock request")
            return None
        return {"reasoningContent": {"redactedContent": data}}
    if not block.thinking:
        return None
    if block.signature:
        text = {"text": block.thinking, "signature": block.signature}
        return {"reasoningContent": {"reasoningText": text}}
    if is_claude(model_id):
        # Claude verifies reasoning signatures; unsigned reasoning (another API's) is refused.
        logger.debug("skipped unsigned reasoning in a request to %s", model_id)
        return None
    return {"reasoningContent": {"reasoningText": {"text": block.thinking}}}


def _assistant_blocks(message: AssistantMessage, model_id: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text:
                blocks.append({"text": block.text})
        elif isinstance(block, ThinkingContent):
            reasoning = _reasoning_block(block, model_id)
            if reasoning is not None:
                blocks.append(reasoning)
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": _tool_id(block.id),
                        "name": block.name,
                        "input": block.arguments,
                    }
                }
            )
    return blocks


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    content = [b for b in (_user_block(block) for block in message.content) if b is not None]
    return {
        "toolResult": {
            "toolUseId": _tool_id(message.tool_call_id),
            "content": content,
            "status": "error" if message.is_error else "success",
        }
    }


def _convert(message: Message, model_id: str) -> WireMessage:
    if isinstance(message, UserMessage):
        content = [b for b in (_user_block(block) for block in message.content) if b]
        return {"role": "user", "content": content}
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "content": _assistant_blocks(message, model_id)}
    return {"role": "user", "content": [_tool_result(message)]}


def build_messages(
    messages: Sequence[Message], model_id: str, cache: WireCache[WireMessage] | None = None
) -> list[WireMessage]:
    """The ``messages`` array: converted, empty ones dropped, same-role neighbours merged.

    With a ``cache``, each message converted on an earlier call is reused (the merge
    copies what a request may change, so the cache's entries never change).
    """
    wire = converted(messages, lambda message: _convert(message, model_id), cache, model_id)
    return join_same_role(wire)


def _add_notes(wire: list[WireMessage], turn_notes: Sequence[str]) -> None:
    notes = [{"text": note} for note in turn_notes if note]
    if not notes:
        return
    index = notes_index(wire)
    if index is None:
        wire.append({"role": "user", "content": notes})
    else:
        wire[index]["content"] = [*wire[index]["content"], *notes]


def _thinking(config: StreamConfig, max_tokens: int) -> tuple[dict[str, Any] | None, int]:
    """Claude's ``thinking`` request field and the ``maxTokens`` it needs, or ``None``."""
    level = config.thinking_level
    if level is ThinkingLevel.OFF:
        return None, max_tokens
    if not is_claude(config.model.id):
        warn_once(
            logger,
            f"bedrock-thinking:{config.model.id}",
            "thinking levels are only sent to Claude models on Bedrock; %s runs at its default",
            config.model.id,
        )
        return None, max_tokens
    # Claude on Bedrock takes Anthropic's own thinking field, with the same budgets.
    budget, max_tokens = thinking_budget(level, max_tokens)
    return {"type": "enabled", "budget_tokens": budget}, max_tokens


def _called_tools(messages: Sequence[Message]) -> list[str]:
    names: dict[str, None] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            names.update(dict.fromkeys(call.name for call in message.tool_calls))
    return list(names)


def build_request_body(
    config: StreamConfig, wire_cache: WireCache[WireMessage] | None = None
) -> dict[str, Any]:
    """The JSON body of one ``ConverseStream`` request for ``config`` (each history
    message's conversion reused from ``wire_cache`` when given).

    Cache points (at most four) follow the system prompt, the tools and the latest two user
    turns, for models that take them and unless ``config.cache.enabled`` is off. Structured
    output is not supported by this protocol: the schema is ignored with a warning.
    """
    model = config.model
    cache = config.cache.enabled and supports_cache_points(model.id)
    points = 0
    body: dict[str, Any] = {}
    messages = build_messages(config.messages, model.id, wire_cache)
    if config.system_prompt:
        system: list[dict[str, Any]] = [{"text": config.system_prompt}]
        if cache:
            system.append(CACHE_POINT)
            points += 1
        body["system"] = system
    specs = [(t.name, t.description or t.name, t.parameters) for t in config.tools]
    if not specs:
        # Bedrock refuses toolUse/toolResult blocks without a toolConfig: a history that
        # holds calls (tools since removed) keeps their names, marked unavailable.
        specs = [
            (name, "No longer available.", {"type": "object"})
            for name in _called_tools(config.messages)
        ]
    if specs:
        tools: list[dict[str, Any]] = [
            {
                "toolSpec": {
                    "name": name,
                    "description": description,
                    "inputSchema": {"json": parameters},
                }
            }
            for name, description, parameters in specs
        ]
        if cache:
            tools.append(CACHE_POINT)
            points += 1
        body["toolConfig"] = {"tools": tools}
    if cache:
        budget = min(USER_TURN_CACHE_POINTS, MAX_CACHE_POINTS - points)
        for message in reversed(messages):
            if budget <= 0:
                break
            if message["role"] == "user":
                message["content"] = [*message["content"], CACHE_POINT]
                budget -= 1
    # Notes come after the cache points: they belong to this request only.
    _add_notes(messages, config.turn_notes)
    body["messages"] = messages
    thinking, max_tokens = _thinking(config, config.max_tokens or model.max_tokens)
    inference: dict[str, Any] = {"maxTokens": max_tokens}
    if config.temperature is not None and thinking is None:
        # With thinking on, Claude accepts only the default temperature.
        inference["temperature"] = config.temperature
    body["inferenceConfig"] = inference
    if thinking is not None:
        body["additionalModelRequestFields"] = {"thinking": thinking}
    if config.output_schema is not None:
        warn_once(
            logger,
            "bedrock-structured-output",
            "Bedrock ConverseStream has no structured output here; the schema is ignored",
        )
    return body
