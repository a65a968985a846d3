"""The Messages event stream read into one reply.

Content blocks are routed by ``index``: text, thinking (with its signature), redacted
thinking and tool use become blocks; server-side tool blocks and unknown ones leave no
placeholder. A restarted ``message_start`` drops what came before it. The reply ends at
``message_stop`` (or at least the final ``message_delta``); a body that ends first is a
cut (``NETWORK``). A forced structured-output tool call becomes the JSON text it carries.
"""

from __future__ import annotations

import json
from typing import Any

from yoagent.core import ApiProtocol, AssistantMessage, StopReason, TextContent, ToolCall, Usage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import warn_once

from ._anthropic_request import forced_tool
from ._assembly import ReplyBuilder
from ._http_errors import KeySource, ended_early, from_stream_error, malformed
from ._json import as_dict, as_int, as_str, parse_json
from ._logging import logger
from ._sse import SseEvent

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


class AnthropicReader:
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
        forced = forced_tool(self.config)
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
