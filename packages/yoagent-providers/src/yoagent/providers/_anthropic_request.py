"""The Messages request body: system prompt, tools, history, cache breakpoints, thinking.

History becomes ``user`` / ``assistant`` messages of content blocks (a tool result is a
``tool_result`` block of a user message); empty messages are dropped and same-role
neighbours merged. Signed thinking and Anthropic's own redacted thinking go back as they
came; reasoning from another API does not. Structured output is ``output_config.format``
where the model supports it, else a forced synthetic tool (see :func:`forced_tool`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    AnthropicCompat,
    ApiProtocol,
    AssistantMessage,
    ImageContent,
    ModelConfig,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig

from ._messages import WireCache, WireMessage, converted, join_same_role, notes_index

MAX_CACHE_BREAKPOINTS = 4
"""Anthropic allows four ``cache_control`` breakpoints per request."""
USER_TURN_BREAKPOINTS = 2
"""Breakpoints on the latest user turns: the newest one writes, the one before it reads
what the previous request wrote."""

THINKING_BUDGETS: dict[ThinkingLevel, int] = {
    ThinkingLevel.MINIMAL: 1024,
    ThinkingLevel.LOW: 2048,
    ThinkingLevel.MEDIUM: 8192,
    ThinkingLevel.HIGH: 16384,
}
"""``budget_tokens`` per level for models that take a token budget."""
MIN_THINKING_BUDGET = 1024
"""The smallest budget the API accepts."""
MIN_ANSWER_TOKENS = 1024
"""Tokens kept for the answer itself when a budget must fit under ``max_tokens``."""

EFFORTS: dict[ThinkingLevel, str] = {
    ThinkingLevel.MINIMAL: "low",
    ThinkingLevel.LOW: "low",
    ThinkingLevel.MEDIUM: "medium",
    ThinkingLevel.HIGH: "high",
}
"""``output_config.effort`` per level for adaptive-thinking models."""

PROTOCOL = ApiProtocol.ANTHROPIC_MESSAGES
_TOOL_ID = re.compile(r"[^a-zA-Z0-9_-]")


def compat_of(model: ModelConfig) -> AnthropicCompat:
    """The model's ``AnthropicCompat`` (defaults when it has none)."""
    return model.compat if isinstance(model.compat, AnthropicCompat) else AnthropicCompat()


def _tool_id(raw: str) -> str:
    # Anthropic accepts only [a-zA-Z0-9_-]{1,64}; ids from other APIs may hold more.
    return _TOOL_ID.sub("_", raw)[:64] or "tool"


def forced_tool(config: StreamConfig) -> str | None:
    """The synthetic tool's name when structured output is forced through a tool."""
    schema = config.output_schema
    if schema is None or compat_of(config.model).native_structured_output:
        return None
    return schema.name


def _user_block(block: TextContent | ImageContent) -> dict[str, Any] | None:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text} if block.text else None
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
    }


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            redacted = block.redacted_for(ApiProtocol.ANTHROPIC_MESSAGES)
            if redacted is not None:
                blocks.append({"type": "redacted_thinking", "data": redacted})
            elif block.redacted is None and block.thinking and block.signature:
                blocks.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                )
            # Unsigned reasoning (another API's) and foreign encrypted data cannot be
            # verified by Anthropic and are left out.
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": _tool_id(block.id),
                    "name": block.name,
                    "input": block.arguments,
                }
            )
    return blocks


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    content = [b for b in (_user_block(block) for block in message.content) if b is not None]
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": _tool_id(message.tool_call_id)}
    if content:
        result["content"] = content
    result["is_error"] = message.is_error
    return result


def _convert(message: Message) -> WireMessage:
    if isinstance(message, UserMessage):
        content = [b for b in (_user_block(block) for block in message.content) if b]
        return {"role": "user", "content": content}
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "content": _assistant_blocks(message)}
    return {"role": "user", "content": [_tool_result_block(message)]}


def build_messages(
    messages: Sequence[Message], cache: WireCache[WireMessage] | None = None
) -> list[WireMessage]:
    """The ``messages`` array: converted, empty ones dropped, same-role neighbours merged.

    With a ``cache``, each message converted on an earlier call is reused (the merge
    copies what a request may change, so the cache's entries never change).
    """
    return join_same_role(converted(messages, _convert, cache, PROTOCOL))


def _add_notes(wire: list[WireMessage], turn_notes: Sequence[str]) -> None:
    notes = [{"type": "text", "text": note} for note in turn_notes if note]
    if not notes:
        return
    index = notes_index(wire)
    if index is None:
        wire.append({"role": "user", "content": notes})
    else:
        wire[index]["content"] = [*wire[index]["content"], *notes]


def _mark_cache(message: WireMessage) -> None:
    content = cast(list[dict[str, Any]], message["content"])
    content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}


def thinking_budget(level: ThinkingLevel, max_tokens: int) -> tuple[int, int]:
    """``(budget_tokens, max_tokens)`` for a Claude model that takes a thinking budget.

    The budget leaves room for the answer under ``max_tokens``; when ``max_tokens`` is too
    small for any budget it is raised just enough.
    """
    budget = min(THINKING_BUDGETS[level], max_tokens - MIN_ANSWER_TOKENS)
    if budget < MIN_THINKING_BUDGET:
        budget = MIN_THINKING_BUDGET
        max_tokens = max(max_tokens, budget + MIN_ANSWER_TOKENS)
    return budget, max_tokens


def _thinking_fields(config: StreamConfig, body: dict[str, Any], max_tokens: int) -> None:
    level = config.thinking_level
    if level is ThinkingLevel.OFF:
        return
    if compat_of(config.model).adaptive_thinking:
        body["thinking"] = {"type": "adaptive"}
        body.setdefault("output_config", {})["effort"] = EFFORTS[level]
        return
    budget, body["max_tokens"] = thinking_budget(level, max_tokens)
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}


def build_request_body(
    config: StreamConfig, wire_cache: WireCache[WireMessage] | None = None
) -> dict[str, Any]:
    """The JSON body of one streamed Messages request for ``config`` (each history
    message's conversion reused from ``wire_cache`` when given).

    Prompt-cache breakpoints (at most four) go on the system prompt, the last tool and the
    latest user turns, unless ``config.cache.enabled`` is off. Structured output uses
    ``output_config.format`` where the model supports it, else a forced synthetic tool
    (without thinking, which the API refuses alongside a forced tool).
    """
    model = config.model
    cache = config.cache.enabled
    max_tokens = config.max_tokens or model.max_tokens
    body: dict[str, Any] = {"model": model.id, "max_tokens": max_tokens, "stream": True}
    breakpoints = 0
    if config.system_prompt:
        system: dict[str, Any] = {"type": "text", "text": config.system_prompt}
        if cache:
            system["cache_control"] = {"type": "ephemeral"}
            breakpoints += 1
        body["system"] = [system]
    tools: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters}
        for t in config.tools
    ]
    schema = config.output_schema
    forced = forced_tool(config)
    if schema is not None and forced is not None:
        tools.append(
            {
                "name": forced,
                "description": schema.description or f"Reply with a {forced} object.",
                "input_schema": schema.schema,
            }
        )
        body["tool_choice"] = {"type": "tool", "name": forced}
    if tools:
        if cache:
            tools[-1] = {**tools[-1], "cache_control": {"type": "ephemeral"}}
            breakpoints += 1
        body["tools"] = tools
    messages = build_messages(config.messages, wire_cache)
    if cache:
        budget = min(USER_TURN_BREAKPOINTS, MAX_CACHE_BREAKPOINTS - breakpoints)
        for message in reversed(messages):
            if budget <= 0:
                break
            if message["role"] == "user":
                _mark_cache(message)
                budget -= 1
    # Notes come after the breakpoints: they are this request's only, so caching them
    # would make the next request miss.
    _add_notes(messages, config.turn_notes)
    body["messages"] = messages
    if forced is None:
        _thinking_fields(config, body, max_tokens)
    if schema is not None and forced is None:
        body.setdefault("output_config", {})["format"] = {
            "type": "json_schema",
            "schema": schema.schema,
        }
    if config.temperature is not None and "thinking" not in body:
        # With thinking on, the API accepts only the default temperature.
        body["temperature"] = config.temperature
    return body
