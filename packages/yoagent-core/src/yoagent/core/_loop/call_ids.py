"""Tool-call ids made unique within a reply, as its calls stream in, before any call is
judged or run.

A model (or a server in front of one) may give two calls of one reply the same id. Held
for approval under that one id, the calls were one pending call: a person saw one and
allowing it ran both; run, they were answered twice under one id, which no API accepts
on the next request; streamed, a client following the deltas (AG-UI) saw one call with
both argument strings glued together. So each call gets its id as its first delta
streams, and the settled reply is rewritten with the same ids: the first call of an id
keeps it, each repeat gets ``<id>_<n>`` (the lowest ``n`` from 2 that no call before it
holds), cut to 64 characters, the most Anthropic and Bedrock keep. A later call whose id
an earlier repeat took moves on the same way (the calls after a delta are not known when
it streams). The history holds the rewritten reply, so every later request sends those
ids and answers each once.
"""

from __future__ import annotations

from dataclasses import replace

from yoagent.core._logging import logger
from yoagent.core._types.content import AssistantContent, ToolCall
from yoagent.core._types.events import ToolCallDelta
from yoagent.core._types.messages import AssistantMessage

MAX_ID_LENGTH = 64
"""The longest tool-call id every protocol keeps whole (Anthropic, Bedrock)."""


class CallIds:
    """The id each tool call of one reply answers to: given as the call's deltas stream
    (:meth:`streamed`), kept for the settled reply (:meth:`settle`)."""

    __slots__ = ("_by_index", "_given", "_queued")

    def __init__(self) -> None:
        self._by_index: dict[int, str] = {}  # a streamed call's content index -> its id
        self._given: set[str] = set()
        self._queued: dict[str, list[tuple[int, str]]] = {}  # model's id -> (index, id)

    def streamed(self, delta: ToolCallDelta) -> ToolCallDelta:
        """``delta`` carrying its call's unique id (an id the model has not sent yet stays
        empty)."""
        if not delta.id:
            return delta
        unique = self._by_index.get(delta.content_index)
        if unique is None:
            unique = self._give(delta.id, delta.name)
            self._by_index[delta.content_index] = unique
            self._queued.setdefault(delta.id, []).append((delta.content_index, unique))
        return delta if unique == delta.id else replace(delta, id=unique)

    def settle(self, reply: AssistantMessage) -> AssistantMessage:
        """``reply`` with each call's unique id: a streamed call keeps the id its deltas
        carried (the calls of one model id in stream order), any other gets one now."""
        queued = {model: sorted(given) for model, given in self._queued.items()}
        content: list[AssistantContent] = []
        changed = False
        for block in reply.content:
            if isinstance(block, ToolCall):
                waiting = queued.get(block.id)
                unique = waiting.pop(0)[1] if waiting else self._give(block.id, block.name)
                if unique != block.id:
                    block, changed = replace(block, id=unique), True
            content.append(block)
        return replace(reply, content=content) if changed else reply

    def _give(self, model_id: str, name: str) -> str:
        """``model_id``, or the fresh id a repeat of it gets, now taken."""
        taken = self._given
        if model_id not in taken:
            self._given.add(model_id)
            return model_id
        number = 2
        while True:
            suffix = f"_{number}"
            fresh = model_id[: MAX_ID_LENGTH - len(suffix)] + suffix
            if fresh not in taken:
                break
            number += 1
        logger.warning(
            "the reply repeats tool call id %r: the repeat (%s) is answered as %r",
            model_id,
            name,
            fresh,
        )
        self._given.add(fresh)
        return fresh
