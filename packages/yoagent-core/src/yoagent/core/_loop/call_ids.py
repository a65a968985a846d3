"""Tool-call ids made unique within a reply, before any call is judged or run.

A model (or a server in front of one) may give two calls of one reply the same id. Held
for approval under that one id, the calls were one pending call: a person saw one and
allowing it ran both; run, they were answered twice under one id, which no API accepts
on the next request. So the reply is rewritten before anything sees it: the first call
of an id keeps it, each repeat gets ``<id>_<n>`` (the lowest ``n`` from 2 that no call
of the reply uses), cut to 64 characters, the most Anthropic and Bedrock keep. The
history holds the rewritten reply, so every later request sends those ids and answers
each once.
"""

from __future__ import annotations

from dataclasses import replace

from yoagent.core._logging import logger
from yoagent.core._types.content import AssistantContent, ToolCall
from yoagent.core._types.messages import AssistantMessage

MAX_ID_LENGTH = 64
"""The longest tool-call id every protocol keeps whole (Anthropic, Bedrock)."""


def unique_call_ids(reply: AssistantMessage) -> AssistantMessage:
    """``reply``, or a copy whose repeated tool-call ids are made unique (see the module)."""
    calls = reply.tool_calls
    ids = [call.id for call in calls]
    if len(set(ids)) == len(ids):
        return reply
    taken = set(ids)
    seen: set[str] = set()
    content: list[AssistantContent] = []
    for block in reply.content:
        if isinstance(block, ToolCall):
            if block.id in seen:
                fresh = _fresh_id(block.id, taken)
                logger.warning(
                    "the reply repeats tool call id %r: the repeat (%s) is answered as %r",
                    block.id,
                    block.name,
                    fresh,
                )
                taken.add(fresh)
                block = replace(block, id=fresh)
            seen.add(block.id)
        content.append(block)
    return replace(reply, content=content)


def _fresh_id(repeated: str, taken: set[str]) -> str:
    number = 2
    while True:
        suffix = f"_{number}"
        candidate = repeated[: MAX_ID_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        number += 1
