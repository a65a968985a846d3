"""Tool output over the run's limit, cut in the middle with a visible marker (the whole
stashed in shared state first, when the run has a sink, and the marker naming its key)."""

from __future__ import annotations

from yoagent.core._logging import logger
from yoagent.core._shared_state.store import ToolOutputSink
from yoagent.core._types.content import ImageContent, TextContent, ToolCall, UserContent


def truncate_text(text: str, limit: int | None, *, kept_at: str | None = None) -> str:
    """Cut ``text`` to about ``limit`` characters, keeping its head and tail.

    The cut is marked in the text itself so the model knows output is missing; when the
    whole text was stashed, the marker names the key it is ``kept_at``.
    """
    if limit is None or len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    where = f"; the full output is in shared state under {kept_at!r}" if kept_at else ""
    marker = f"\n\n[... {cut} characters truncated{where} ...]\n\n"
    return f"{text[:head]}{marker}{text[len(text) - tail :]}"


def text_length(content: list[UserContent]) -> int:
    """Characters of ``content``'s text blocks."""
    return sum(len(block.text) for block in content if isinstance(block, TextContent))


async def cut_output(
    content: list[UserContent], limit: int, call: ToolCall, sink: ToolOutputSink | None
) -> list[UserContent]:
    """``content`` (over ``limit``) with its text cut to fit, the whole stashed in ``sink``."""
    texts = [block for block in content if isinstance(block, TextContent)]
    images: list[UserContent] = [block for block in content if isinstance(block, ImageContent)]
    joined = "\n".join(block.text for block in texts)
    key: str | None = None
    if sink is not None:
        try:
            key = await sink(call.id, call.name, joined)
        except Exception:  # a full or failing store: truncate without naming a key
            logger.warning(
                "could not stash the full output of %s (%s)", call.name, call.id, exc_info=True
            )
    return [TextContent(text=truncate_text(joined, limit, kept_at=key)), *images]
