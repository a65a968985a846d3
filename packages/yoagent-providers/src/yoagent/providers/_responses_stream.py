"""The Responses API event stream read into one reply, shared by OpenAI and Azure OpenAI.

Events are routed by ``output_index`` (then item id), so parallel calls, several
messages and reasoning items each keep their own block. The final copies
(``function_call_arguments.done``, ``output_item.done``) are authoritative and also
cover servers that send no deltas. Reasoning summaries and raw reasoning text of one
item go to separate thinking blocks; a new summary part starts a new paragraph. A
finished reasoning item with ``encrypted_content`` is stored on its thinking block (the
summary block, else the raw-text block, else an empty block made for it) as JSON
``{id, summary, encrypted_content, call_ids, message_id}``, tagged with the stream's
protocol, for replay by the request builder. ``response.completed`` /
``response.incomplete`` end the reply; ``error`` / ``response.failed`` raise; a body
that ends before either is a cut (``NETWORK``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from yoagent.core import ApiProtocol, AssistantMessage, StopReason, Usage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import warn_once

from ._assembly import ReplyBuilder
from ._http_errors import KeySource, ended_early, from_stream_error
from ._json import as_dict, as_int, as_list, as_str, parse_json
from ._logging import logger
from ._responses_request import CALL_IDS_KEY, MESSAGE_ID_KEY
from ._sse import SseEvent

_TERMINAL = frozenset({"response.completed", "response.incomplete"})
_IGNORED = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.queued",
        "response.content_part.added",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
    }
)


@dataclass(slots=True)
class _Item:
    """One output item as far as the reply is concerned."""

    kind: str
    id: str = ""
    call_id: str = ""
    slot: int | None = None  # its text or tool block
    summary_slot: int | None = None  # reasoning: summary text block
    text_slot: int | None = None  # reasoning: raw reasoning text block
    last_part: int | None = None  # reasoning: the summary part being streamed
    encrypted: str = ""
    summary: list[Any] = field(default_factory=list[Any])
    refusal: str | None = None


class ResponsesReader:
    """Reads one Responses event stream into a reply."""

    def __init__(
        self, config: StreamConfig, sink: DeltaSink, key: KeySource, protocol: ApiProtocol
    ) -> None:
        self.config = config
        self.key = key
        self.protocol = protocol
        self.builder = ReplyBuilder(sink)
        self.items: dict[int, _Item] = {}
        self.usage = Usage()
        self.stop_reason = StopReason.STOP
        self.filtered = False
        self.done = False

    # --- events ---------------------------------------------------------------------------

    def on_event(self, event: SseEvent) -> bool:
        """Handle one event; True once the reply is complete."""
        try:
            data = as_dict(parse_json(event.data))
        except ValueError:
            if event.data.strip() != "[DONE]":
                logger.warning("skipped an unparseable event in a Responses stream")
            return False
        kind = as_str(data.get("type")) or event.event
        if kind in _TERMINAL:
            self._finished(kind, as_dict(data.get("response")))
            return True
        if kind == "error":
            raise from_stream_error(data, self.key)
        if kind == "response.failed":
            error = as_dict(data.get("response")).get("error")
            raise from_stream_error({"error": error} if error else data, self.key)
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(self, data)
        elif kind not in _IGNORED:
            logger.debug("unhandled Responses event %r", kind)
        return False

    def _item(self, data: dict[str, Any], kind: str = "") -> _Item | None:
        """The item an event is about (by output_index, else item id); made when ``kind``."""
        index = data.get("output_index")
        if type(index) is int and index >= 0:
            item = self.items.get(index)
            if item is not None:
                return item
        index = as_int(index)
        item_id = as_str(data.get("item_id")) or as_str(as_dict(data.get("item")).get("id"))
        if index is None:  # a server that omits output_index: route by item id
            found = (i for i, it in self.items.items() if item_id and it.id == item_id)
            index = next(found, None)
            if index is None:
                index = -1 - len(self.items) if item_id else -1
        item = self.items.get(index)
        if item is None and kind:
            item = self.items[index] = _Item(kind, id=item_id)
        return item

    def _added(self, data: dict[str, Any]) -> None:
        raw = as_dict(data.get("item"))
        item = self._item(data, as_str(raw.get("type")) or "unknown")
        if item is None:
            return
        item.id = item.id or as_str(raw.get("id"))
        if item.kind == "function_call" and item.slot is None:
            item.call_id = as_str(raw.get("call_id"))
            item.slot = self.builder.open_tool(item.call_id, as_str(raw.get("name")))
            arguments = as_str(raw.get("arguments"))
            if arguments:
                self.builder.add_tool_arguments(item.slot, arguments)

    def _text_delta(self, data: dict[str, Any]) -> None:
        item = self._item(data, "message")
        assert item is not None
        self._add_text(item, as_str(data.get("delta")))

    def _add_text(self, item: _Item, text: str) -> None:
        if not text:
            return
        if item.slot is None:
            item.slot = self.builder.open_text()
        self.builder.add_text(item.slot, text)

    def _summary_delta(self, data: dict[str, Any]) -> None:
        item = self._item(data, "reasoning")
        assert item is not None
        part = as_int(data.get("summary_index"))
        delta = as_str(data.get("delta"))
        if item.summary_slot is None:
            item.summary_slot = self.builder.open_thinking()
        elif part is not None and part != item.last_part:
            delta = "\n\n" + delta  # a new summary part is a new paragraph
        item.last_part = part
        if delta:
            self.builder.add_thinking(item.summary_slot, delta)

    def _reasoning_text_delta(self, data: dict[str, Any]) -> None:
        item = self._item(data, "reasoning")
        assert item is not None
        if item.text_slot is None:
            item.text_slot = self.builder.open_thinking()
        delta = as_str(data.get("delta"))
        if delta:
            self.builder.add_thinking(item.text_slot, delta)

    def _arguments_delta(self, data: dict[str, Any]) -> None:
        item = self._item(data)
        if item is None or item.slot is None or item.kind != "function_call":
            warn_once(
                logger, "responses-orphan-args", "Responses: arguments for an unknown call dropped"
            )
            return
        self.builder.add_tool_arguments(item.slot, as_str(data.get("delta")))

    def _arguments_done(self, data: dict[str, Any]) -> None:
        item = self._item(data)
        if item is not None and item.slot is not None and item.kind == "function_call":
            self.builder.settle(item.slot, as_str(data.get("arguments")))

    def _refusal_delta(self, data: dict[str, Any]) -> None:
        item = self._item(data, "message")
        assert item is not None
        delta = as_str(data.get("delta"))
        item.refusal = (item.refusal or "") + delta
        self._add_text(item, delta)

    def _refusal_done(self, item: _Item, refusal: str) -> None:
        """The whole refusal text: only what the deltas did not deliver is added."""
        seen = item.refusal or ""
        item.refusal = seen
        if refusal.startswith(seen):
            self._add_text(item, refusal[len(seen) :])
            item.refusal = refusal

    def _refusal_event(self, data: dict[str, Any]) -> None:
        item = self._item(data, "message")
        assert item is not None
        self._refusal_done(item, as_str(data.get("refusal")))

    def _part_done(self, data: dict[str, Any]) -> None:
        part = as_dict(data.get("part"))
        if as_str(part.get("type")) == "refusal":
            self._refusal_event({**data, "refusal": as_str(part.get("refusal"))})

    def _item_done(self, data: dict[str, Any]) -> None:
        raw = as_dict(data.get("item"))
        kind = as_str(raw.get("type"))
        item = self._item(data, kind or "unknown")
        assert item is not None
        item.id = item.id or as_str(raw.get("id"))
        if kind == "function_call":
            if item.slot is None:  # a server that skipped output_item.added
                self._added(data)
            assert item.slot is not None
            item.call_id = item.call_id or as_str(raw.get("call_id"))
            self.builder.name_tool(item.slot, item.call_id, as_str(raw.get("name")))
            if "arguments" in raw:
                self.builder.settle(item.slot, as_str(raw.get("arguments")))
            self.builder.close(item.slot)
        elif kind == "message":
            parts = [as_dict(p) for p in as_list(raw.get("content"))]
            refusals = [as_str(p.get("refusal")) for p in parts if p.get("type") == "refusal"]
            text = "".join(as_str(p.get("text")) for p in parts if p.get("type") == "output_text")
            if refusals:  # the refusal is the text
                self._refusal_done(item, "".join(refusals))
            elif item.slot is None:  # a server that sent the text only in the finished item
                self._add_text(item, text)
            elif text:
                self.builder.settle(item.slot, text)  # the final copy is authoritative
        elif kind == "reasoning":
            self._reasoning_done(item, raw)

    def _reasoning_done(self, item: _Item, raw: dict[str, Any]) -> None:
        item.summary = as_list(raw.get("summary"))
        if item.summary_slot is None and item.text_slot is None:
            summary = "\n\n".join(as_str(as_dict(p).get("text")) for p in item.summary)
            if summary.strip():  # summaries that were not streamed
                item.summary_slot = self.builder.open_thinking(summary)
        item.encrypted = as_str(raw.get("encrypted_content"))
        if item.encrypted and item.summary_slot is None and item.text_slot is None:
            # A block to carry it, here: before the output items that follow it.
            item.summary_slot = self.builder.open_thinking()

    def _finished(self, kind: str, response: dict[str, Any]) -> None:
        self.done = True
        self._read_usage(as_dict(response.get("usage")))
        if kind == "response.incomplete" or response.get("status") == "incomplete":
            reason = as_str(as_dict(response.get("incomplete_details")).get("reason"))
            if reason == "content_filter":
                self.filtered = True
                self.stop_reason = StopReason.REFUSAL
            else:
                self.stop_reason = StopReason.LENGTH

    def _read_usage(self, usage: dict[str, Any]) -> None:
        if not usage:
            return
        details = as_dict(usage.get("input_tokens_details"))
        cached = as_int(details.get("cached_tokens")) or 0
        written = as_int(details.get("cache_write_tokens")) or 0
        self.usage = Usage(
            input=max((as_int(usage.get("input_tokens")) or 0) - cached - written, 0),
            output=as_int(usage.get("output_tokens")) or 0,
            cache_read=cached,
            cache_write=written,
        )

    _handlers: ClassVar[dict[str, Callable[[ResponsesReader, dict[str, Any]], None]]] = {
        "response.output_item.added": _added,
        "response.output_text.delta": _text_delta,
        "response.reasoning_summary_text.delta": _summary_delta,
        "response.reasoning_text.delta": _reasoning_text_delta,
        "response.function_call_arguments.delta": _arguments_delta,
        "response.function_call_arguments.done": _arguments_done,
        "response.refusal.delta": _refusal_delta,
        "response.refusal.done": _refusal_event,
        "response.content_part.done": _part_done,
        "response.output_item.done": _item_done,
    }

    # --- the reply ------------------------------------------------------------------------

    def _store_reasoning(self) -> None:
        """Put each finished encrypted reasoning item, with its paired ids, on its block."""
        order = sorted(i for i in self.items if i >= 0)
        for position, index in enumerate(order):
            item = self.items[index]
            slot = item.summary_slot if item.summary_slot is not None else item.text_slot
            if item.kind != "reasoning" or not item.encrypted or not item.id or slot is None:
                continue
            call_ids: dict[str, str] = {}
            message_id = ""
            for later in order[position + 1 :]:
                after = self.items[later]
                if after.kind == "reasoning":
                    break
                if after.kind == "function_call" and after.call_id and after.id:
                    call_ids[after.call_id] = after.id
                elif after.kind == "message" and after.id and not message_id:
                    message_id = after.id
            stored = {
                "id": item.id,
                "summary": item.summary,
                "encrypted_content": item.encrypted,
                CALL_IDS_KEY: call_ids,
                MESSAGE_ID_KEY: message_id,
            }
            self.builder.set_redacted(slot, json.dumps(stored), self.protocol)

    def finish(self) -> AssistantMessage:
        """The complete reply, or a NETWORK error when the stream ended before its end."""
        if not self.done:
            raise ended_early("the Responses stream ended before response.completed")
        self._store_reasoning()
        model = self.config.model
        refusals = [it.refusal for it in self.items.values() if it.refusal is not None]
        stop = StopReason.REFUSAL if refusals else self.stop_reason
        reply = self.builder.finish(
            stop_reason=stop, usage=self.usage, model=model.id, provider=model.provider
        )
        if self.filtered:
            reply.error_message = "the response was stopped by the content filter"
        elif refusals:
            text = "\n\n".join(r for r in refusals if r)
            reply.error_message = "the model declined the request" + (f": {text}" if text else "")
        return reply
