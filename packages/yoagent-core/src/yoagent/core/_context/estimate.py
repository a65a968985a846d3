"""Token estimates: a fast chars-per-token heuristic for messages and histories.

Pure: no I/O, no clock, no randomness. The :class:`~.tracker.ContextTracker` corrects it
with the provider's real figures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

from yoagent.core._types.content import ImageContent, TextContent, ThinkingContent, ToolCall
from yoagent.core._types.messages import AgentMessage, CustomMessage, ToolResultMessage

CHARS_PER_TOKEN = 4
"""The heuristic's ratio: UTF-8 bytes per token (English prose ~4, code ~3.5)."""
IMAGE_TOKENS = 1_000
"""The fixed cost of one image block (most APIs bill a mid-sized image at ~1k tokens)."""
MESSAGE_OVERHEAD_TOKENS = 4
"""Role and framing tokens every message costs on the wire."""
TOOL_CALL_OVERHEAD_TOKENS = 8
"""Framing of one tool call (id, type) beyond its name and JSON arguments."""
TOOL_RESULT_OVERHEAD_TOKENS = 8
"""Framing of one tool result (call id, type) beyond its tool name and content."""


def estimate_text(text: str) -> int:
    """Estimated tokens of ``text``: its UTF-8 length / :data:`CHARS_PER_TOKEN`, rounded up."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return (size + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


_ARGUMENTS_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
# One encoder for every estimate: ``json.dumps`` with options builds a new one per call.


def _arguments_json(arguments: object) -> str:
    try:
        return _ARGUMENTS_ENCODER.encode(arguments)
    except (TypeError, ValueError, RecursionError):
        # Too deep or not JSON: a rough size is all an estimate needs (``str`` of a deeply
        # nested value would recurse just the same).
        return "x" * _rough_size(arguments)


def _rough_size(value: object) -> int:
    """Characters of ``value``'s JSON, roughly, without recursion (any depth)."""
    size, pending = 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            entries = cast("dict[object, object]", item)
            pending.extend(entries.keys())
            pending.extend(entries.values())
            size += 2 + 2 * len(entries)
        elif isinstance(item, (list, tuple)):  # a tuple: no union built per item
            members = cast("list[object]", item)
            pending.extend(members)
            size += 2 + len(members)
        else:
            size += len(str(item)) + 2
    return size


def _block_tokens(block: object) -> int:
    if isinstance(block, TextContent):
        return estimate_text(block.text)
    if isinstance(block, ImageContent):
        return IMAGE_TOKENS
    if isinstance(block, ToolCall):
        return (
            estimate_text(block.name)
            + estimate_text(_arguments_json(block.arguments))
            + TOOL_CALL_OVERHEAD_TOKENS
        )
    if isinstance(block, ThinkingContent):
        return estimate_text(block.thinking) + estimate_text(block.redacted or "")
    return 0


def estimate_tokens(message: AgentMessage) -> int:
    """Estimated tokens ``message`` costs in a request.

    Text and thinking by length, an image :data:`IMAGE_TOKENS`, a tool call its name plus
    its JSON arguments. Custom messages cost 0: they never reach a model.
    """
    if isinstance(message, CustomMessage):
        return 0
    total = MESSAGE_OVERHEAD_TOKENS
    for block in message.content:
        total += _block_tokens(block)
    if isinstance(message, ToolResultMessage):
        total += estimate_text(message.tool_name) + TOOL_RESULT_OVERHEAD_TOKENS
    return total


def estimate_messages(messages: Sequence[AgentMessage]) -> int:
    """Estimated tokens of a whole history (the sum of :func:`estimate_tokens`)."""
    return sum(estimate_tokens(message) for message in messages)
