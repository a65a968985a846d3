"""The Anthropic Messages API (``POST {base_url}/v1/messages``, streamed)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    AnthropicCompat,
    ApiProtocol,
    AssistantMessage,
    DeltaSink,
    ImageContent,
    ModelConfig,
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
from ._http import HttpProvider, merge_headers, resolve_key
from ._http_errors import KeySource, ended_early, from_stream_error, malformed
from ._json import as_dict, as_int, as_str, parse_json
from ._logging import logger
from ._messages import WireMessage, drop_empty, merge_same_role, notes_index
from ._sse import SseEvent

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
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

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "pause_turn": StopReason.STOP,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "tool_use": StopReason.TOOL_USE,
    "refusal": StopReason.REFUSAL,
}

# Block types the API may send that a reply does not hold: server-side tools and their
# results, model fallback notices, compaction summaries. They leave no placeholder.
_UNSURFACED_BLOCKS = frozenset(
    {
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "advisor_tool_result",
        "container_upload",
        "fallback",
        "compaction",
    }
)
_IGNORED_DELTAS = frozenset({"citations_delta", "compaction_delta"})
_TOOL_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _compat(model: ModelConfig) -> AnthropicCompat:
    return model.compat if isinstance(model.compat, AnthropicCompat) else AnthropicCompat()


def _tool_id(raw: str) -> str:
    # Anthropic accepts only [a-zA-Z0-9_-]{1,64}; ids from other APIs may hold more.
    return _TOOL_ID.sub("_", raw)[:64] or "tool"


def _forced_tool(config: StreamConfig) -> str | None:
    """The synthetic tool's name when structured output is forced through a tool."""
    schema = config.output_schema
    if schema is None or _compat(config.model).native_structured_output:
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


def build_messages(messages: Sequence[Message]) -> list[WireMessage]:
    """The ``messages`` array: converted, empty ones dropped, same-role neighbours merged."""
    wire: list[WireMessage] = []
    for message in messages:
        if isinstance(message, UserMessage):
            content = [b for b in (_user_block(block) for block in message.content) if b]
            wire.append({"role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            wire.append({"role": "assistant", "content": _assistant_blocks(message)})
        else:
            wire.append({"role": "user", "content": [_tool_result_block(message)]})
    return merge_same_role(drop_empty(wire))


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
    if _compat(config.model).adaptive_thinking:
        body["thinking"] = {"type": "adaptive"}
        body.setdefault("output_config", {})["effort"] = EFFORTS[level]
        return
    budget, body["max_tokens"] = thinking_budget(level, max_tokens)
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}


def build_request_body(config: StreamConfig) -> dict[str, Any]:
    """The JSON body of one streamed Messages request for ``config``.

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
    forced = _forced_tool(config)
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
    messages = build_messages(config.messages)
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


class _Reader:
    """Reads one Messages event stream into a reply."""

    def __init__(self, config: StreamConfig, sink: DeltaSink, key: KeySource) -> None:
        self.config = config
        self.key = key
        self.builder = ReplyBuilder(sink)
        self.slots: dict[int, int] = {}
        self.message_id: str | None = None
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self.explanation: str | None = None
        self.done = False

    def on_event(self, event: SseEvent) -> bool:
        try:
            payload = parse_json(event.data)
        except ValueError:
            if event.data.strip() != "[DONE]":  # some proxies add an OpenAI-style terminator
                logger.warning(
                    "skipped an unparseable %r event in an Anthropic stream", event.event
                )
            return False
        data = as_dict(payload)
        kind = as_str(data.get("type")) or event.event
        if kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_start":
            self._start(data)
        elif kind == "content_block_stop":
            slot = self._slot(data)
            if slot is not None:
                self.builder.close(slot)
        elif kind == "message_start":
            self._message_start(as_dict(data.get("message")))
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            self.done = True
            return True
        elif kind == "error":
            raise from_stream_error(data, self.key)
        elif kind != "ping":
            warn_once(
                logger, f"anthropic-event:{kind}", "ignored unknown Anthropic event type %r", kind
            )
        return False

    def _slot(self, data: dict[str, Any]) -> int | None:
        index = as_int(data.get("index"))
        return None if index is None else self.slots.get(index)

    def _read_usage(self, usage: dict[str, Any]) -> None:
        for field, name in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = as_int(usage.get(name))
            if value is not None:
                setattr(self.usage, field, value)

    def _message_start(self, message: dict[str, Any]) -> None:
        message_id = as_str(message.get("id"))
        if self.message_id is not None and message_id != self.message_id and len(self.builder):
            # The server restarted the reply: what came before it is abandoned.
            logger.warning("Anthropic stream restarted its message; earlier blocks dropped")
            self.builder.drop_all()
            self.usage = Usage()
        self.slots.clear()
        self.message_id = message_id
        self._read_usage(as_dict(message.get("usage")))

    def _start(self, data: dict[str, Any]) -> None:
        index = as_int(data.get("index"))
        block = as_dict(data.get("content_block"))
        kind = as_str(block.get("type"))
        if index is None:
            raise malformed("content_block_start without an index")
        self.slots.pop(index, None)
        if kind == "text":
            self.slots[index] = self.builder.open_text(as_str(block.get("text")))
        elif kind == "thinking":
            self.slots[index] = self.builder.open_thinking(
                as_str(block.get("thinking")), as_str(block.get("signature"))
            )
        elif kind == "redacted_thinking":
            self.slots[index] = self.builder.add_redacted(
                as_str(block.get("data")), ApiProtocol.ANTHROPIC_MESSAGES
            )
        elif kind == "tool_use":
            slot = self.builder.open_tool(as_str(block.get("id")), as_str(block.get("name")))
            initial = as_dict(block.get("input"))
            if initial:
                # Some compatible servers send the whole input here and no deltas.
                self.builder.add_tool_arguments(slot, json.dumps(initial))
            self.slots[index] = slot
        elif kind not in _UNSURFACED_BLOCKS:
            warn_once(
                logger, f"anthropic-block:{kind}", "ignored unknown Anthropic block type %r", kind
            )

    def _delta(self, data: dict[str, Any]) -> None:
        slot = self._slot(data)
        delta = as_dict(data.get("delta"))
        kind = as_str(delta.get("type"))
        if slot is None:
            return  # a delta of a block the reply does not hold
        block_kind = self.builder.kind(slot)
        if kind == "text_delta" and block_kind == "text":
            self.builder.add_text(slot, as_str(delta.get("text")))
        elif kind == "thinking_delta" and block_kind == "thinking":
            self.builder.add_thinking(slot, as_str(delta.get("thinking")))
        elif kind == "signature_delta" and block_kind == "thinking":
            self.builder.add_signature(slot, as_str(delta.get("signature")))
        elif kind == "input_json_delta" and block_kind == "tool":
            self.builder.add_tool_arguments(slot, as_str(delta.get("partial_json")))
        elif kind not in _IGNORED_DELTAS:
            warn_once(
                logger,
                f"anthropic-delta:{kind}:{block_kind}",
                "ignored Anthropic delta %r on a %s block",
                kind,
                block_kind,
            )

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = as_dict(data.get("delta"))
        raw = delta.get("stop_reason")
        if isinstance(raw, str):
            found = STOP_REASONS.get(raw)
            if found is None:
                warn_once(logger, f"anthropic-stop:{raw}", "unknown Anthropic stop reason %r", raw)
                found = StopReason.STOP
            self.stop_reason = found
        explanation = as_dict(delta.get("stop_details")).get("explanation")
        if isinstance(explanation, str) and explanation:
            self.explanation = explanation
        self._read_usage(as_dict(data.get("usage")))

    def finish(self) -> AssistantMessage:
        if not self.done and self.stop_reason is None:
            # Without message_stop (or at least the final message_delta) the reply is
            # incomplete, wherever the body was cut.
            raise ended_early("the Anthropic stream ended before message_stop")
        model = self.config.model
        reply = self.builder.finish(
            stop_reason=self.stop_reason or StopReason.STOP,
            usage=self.usage,
            model=model.id,
            provider=model.provider,
        )
        forced = _forced_tool(self.config)
        if forced is not None:
            _unwrap_forced_tool(reply, forced)
        if reply.stop_reason is StopReason.REFUSAL and self.explanation:
            reply.error_message = self.explanation
        return reply


def _unwrap_forced_tool(reply: AssistantMessage, name: str) -> None:
    """Turn the forced structured-output tool call into the JSON text it carries."""
    found = False
    for position, block in enumerate(reply.content):
        if isinstance(block, ToolCall) and block.name == name:
            reply.content[position] = TextContent(
                text=json.dumps(block.arguments, ensure_ascii=False)
            )
            found = True
    if found and not reply.tool_calls and reply.stop_reason is StopReason.TOOL_USE:
        reply.stop_reason = StopReason.STOP


class AnthropicProvider(HttpProvider):
    """Streams replies from the Anthropic Messages API (or a compatible server).

    One ``httpx.AsyncClient`` per instance is reused across turns; pass ``client`` to share
    one, ``timeout`` to change when a stalled stream gives up.
    """

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        key, source = resolve_key(model)
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if key:
            if _compat(model).bearer_auth:
                headers["authorization"] = f"Bearer {key}"
            else:
                headers["x-api-key"] = key
        headers = merge_headers(headers, model.headers)
        url = (model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/messages"
        reader = _Reader(config, sink, source)
        return await self._read_sse(url, headers, build_request_body(config), source, reader)
