"""Tool output over the run's limit, cut in the middle with a visible marker (the whole
stashed in shared state first, when the run has a sink, and the marker naming its key)."""

from __future__ import annotations

from yoagent.core._logging import logger
from yoagent.core._shared_state.store import ToolOutputSink
from yoagent.core._support.cut import cut_middle
from yoagent.core._types.content import ImageContent, TextContent, ToolCall, UserContent


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
    detail = f"the full output is in shared state under {key!r}" if key else ""
    return [TextContent(text=cut_middle(joined, limit, detail=detail)), *images]
