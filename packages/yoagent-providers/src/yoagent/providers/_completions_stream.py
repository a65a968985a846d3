"""The Chat Completions chunk stream (choice 0) read into one reply.

Text, refusals, reasoning (``reasoning_content``, ``reasoning`` or OpenRouter's
``reasoning_details``) and tool calls (by ``index``, or by id where a local server sends
none) become blocks; usage may come in any chunk. The reply ends at ``[DONE]`` or a
``finish_reason``; a body that ends before either is a cut (``NETWORK``).
"""

from __future__ import annotations

from typing import Any, cast

from yoagent.core import AssistantMessage, ErrorKind, ProviderError, StopReason, Usage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import warn_once

from ._assembly import ReplyBuilder
from ._http_errors import KeySource, ended_early, from_stream_error
from ._json import as_dict, as_int, as_list, as_str, parse_json
from ._logging import logger
from ._sse import SseEvent

FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.STOP,
    "end_turn": StopReason.STOP,
    "length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "content_filter": StopReason.REFUSAL,
}

_REASONING_KEYS = frozenset({"reasoning_content", "reasoning", "reasoning_details"})
"""The delta fields :meth:`CompletionsReader._reasoning` reads."""


class CompletionsReader:
    """Reads one Chat Completions chunk stream (choice 0) into a reply."""

    def __init__(self, config: StreamConfig, sink: DeltaSink, key: KeySource) -> None:
        self.config = config
        self.key = key
        self.builder = ReplyBuilder(sink)
        self.current: int | None = None
        self.current_kind = ""  # the kind of block in ``current``
        self.tools: dict[int, int] = {}
        self.tool_ids: dict[str, int] = {}
        self.usage = Usage()
        self.finish_reason: StopReason | None = None
        self.refused = False
        self.done = False

    def on_event(self, event: SseEvent) -> bool:
        if not event.data.startswith("{") and event.data.strip() == "[DONE]":
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
        if self.current is None or self.current_kind != kind:
            self.current = (
                self.builder.open_text() if kind == "text" else self.builder.open_thinking()
            )
            self.current_kind = kind
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
        content = delta.get("content")
        if content and isinstance(content, str):  # as_str, inline: this runs per chunk
            self.builder.add_text(self._open("text"), content)
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            self.refused = True
            self.builder.add_text(self._open("text"), refusal)
        calls = delta.get("tool_calls")
        if calls:
            for raw_call in as_list(calls):
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
