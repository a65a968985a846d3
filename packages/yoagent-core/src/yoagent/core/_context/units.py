"""A history's structure as compaction sees it: units (a reply with its tool results, or
any other message), the kept head, the newest turn and the latest real request."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

from yoagent.core._types.markers import is_loop_injected
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)

InjectedPredicate = Callable[[AgentMessage], bool]


def unit_starts(messages: Sequence[AgentMessage]) -> list[int]:
    """Start index of every unit: an assistant message with the tool results after it, or
    any other single message. Compaction cuts only between units."""
    starts: list[int] = []
    size = len(messages)
    i = 0
    while i < size:
        starts.append(i)
        if isinstance(messages[i], AssistantMessage):
            end = i + 1
            j = i + 1
            while j < size and isinstance(messages[j], ToolResultMessage | CustomMessage):
                if isinstance(messages[j], ToolResultMessage):
                    end = j + 1
                j += 1
            i = end
        else:
            i += 1
    return starts


def snap(starts: Sequence[int], index: int) -> int:
    """The start of the unit holding ``index`` (0 for an empty history)."""
    position = bisect_right(starts, index)
    return starts[position - 1] if position > 0 else 0


def safe_head_end(messages: Sequence[AgentMessage], keep_first: int) -> int:
    """End of the kept head: ``keep_first`` messages, stepped back off a head that would
    end inside a tool call's results (so the call and its results stay together)."""
    size = len(messages)
    if keep_first >= size:
        return size
    return snap(unit_starts(messages), keep_first)


def last_assistant_index(messages: Sequence[AgentMessage]) -> int | None:
    """Index of the last assistant message, if any."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AssistantMessage):
            return i
    return None


def newest_turn_start(messages: Sequence[AgentMessage], keep_recent: int) -> int | None:
    """Where the newest turn starts: the last assistant message (the turn runs to the end).

    ``None`` when there is no assistant message or ``keep_recent`` is 0.
    """
    if keep_recent <= 0:
        return None
    return last_assistant_index(messages)


def latest_ask(
    messages: Sequence[AgentMessage], injected: InjectedPredicate = is_loop_injected
) -> int | None:
    """Index of the latest real user message (skipping loop-injected ones), if any."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, UserMessage) and not injected(message):
            return i
    return None
