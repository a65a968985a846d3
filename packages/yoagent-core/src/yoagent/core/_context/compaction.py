"""Tiered compaction: fit a history into :meth:`ContextConfig.budget`, cutting only
between units.

Level 1 truncates old tool outputs, level 2 replaces old turns with a summary, level 3
drops middle turns behind a marker. Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from yoagent.core._support.cut import cut_middle
from yoagent.core._types.content import ImageContent, TextContent
from yoagent.core._types.markers import COMPACTION_MARKER, SUMMARY_PREFIX, is_loop_injected
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)

from .budget import ContextConfig
from .units import (
    InjectedPredicate,
    last_assistant_index,
    latest_ask,
    newest_turn_start,
    snap,
    unit_starts,
)

_CUT = "\n[... {cut} characters of tool output truncated{detail} ...]\n"
"""The marker in an old tool output's middle (counted in ``tool_output_max_chars``, so a
second pass leaves the output alone: repeated compaction keeps the cache prefix)."""

Summarizer = Callable[[Sequence[AgentMessage]], "tuple[str, int] | None"]
"""Level 2's hook for better summaries: given the span about to be summarized, returns
``(text, covered)`` — a summary of the span's first ``covered`` messages — or ``None``.
The rest of the span gets the mechanical summary lines (see ``LlmCompaction``)."""


@dataclass(slots=True, kw_only=True)
class CompactionResult:
    """What :func:`compact_messages` did.

    ``level`` is 0 when the history already fit (``messages`` is a copy of it), else the
    level that made it fit (3 may still end over budget in its last resort). Token figures
    are calibrated estimates. ``dropped`` counts messages level 3 removed.
    """

    messages: list[AgentMessage]
    level: int
    tokens_before: int
    tokens_after: int
    budget: int
    dropped: int = 0

    @property
    def compacted(self) -> bool:
        """True when the history changed (a level ran and cut something: level 3's last
        resort on a history with nothing left to cut changes nothing)."""
        return self.level > 0 and (self.dropped > 0 or self.tokens_after < self.tokens_before)


def truncate_old_tool_outputs(
    messages: Sequence[AgentMessage], config: ContextConfig
) -> list[AgentMessage]:
    """Level 1: cut every tool output before the newest turn to ``tool_output_max_chars``.

    Text keeps its head and tail around a note of how much was cut; images become a
    placeholder. Untouched messages are returned as the same objects.
    """
    protected = newest_turn_start(messages, config.keep_recent)
    end = len(messages) if protected is None else protected
    out = list(messages)
    limit = config.tool_output_max_chars
    for i in range(end):
        message = messages[i]
        if not isinstance(message, ToolResultMessage):
            continue
        changed = False
        content: list[TextContent | ImageContent] = []
        for block in message.content:
            if isinstance(block, TextContent) and len(block.text) > limit:
                content.append(
                    TextContent(text=cut_middle(block.text, limit, marker=_CUT, fit=True))
                )
                changed = True
            elif isinstance(block, ImageContent):
                content.append(TextContent(text="[image omitted to save context]"))
                changed = True
            else:
                content.append(block)
        if changed:
            out[i] = replace(message, content=content)
    return out


def _first_line(text: str, limit: int) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: max(0, limit - 1)] + "…"


def _summary_lines(
    messages: Sequence[AgentMessage], start: int, end: int, skip: int | None, limit: int
) -> list[str]:
    lines: list[str] = []
    i = start
    while i < end:
        message = messages[i]
        i += 1
        if i - 1 == skip or isinstance(message, CustomMessage):
            continue
        if isinstance(message, UserMessage):
            text = message.text
            if text.startswith(SUMMARY_PREFIX):
                lines.extend(line for line in text.split("\n")[1:] if line.strip())
            elif is_loop_injected(message):
                lines.append(f"- {_first_line(text, limit)}")
            else:
                lines.append(f"- user: {_first_line(text, limit) or '(no text)'}")
        elif isinstance(message, AssistantMessage):
            names = [call.name for call in message.tool_calls]
            failed = 0
            while i < end and isinstance(messages[i], ToolResultMessage | CustomMessage):
                result = messages[i]
                if isinstance(result, ToolResultMessage) and result.is_error:
                    failed += 1
                i += 1
            line = f"- assistant: {_first_line(message.text, limit) or '(no text)'}"
            if names:
                line += f" [tools: {', '.join(names)}"
                line += f"; {failed} failed]" if failed else "]"
            lines.append(_first_line(line, limit + 40))
        else:
            lines.append(f"- tool result ({message.tool_name})")
    return lines


def _guaranteed_tail_start(
    messages: Sequence[AgentMessage], starts: Sequence[int], head_end: int, keep_recent: int
) -> int:
    size = len(messages)
    if keep_recent <= 0:
        return size
    tail = snap(starts, max(0, size - keep_recent)) if size else 0
    newest = last_assistant_index(messages)
    if newest is not None:
        tail = min(tail, newest)
    return max(tail, head_end)


def summary_span(messages: Sequence[AgentMessage], config: ContextConfig) -> tuple[int, int]:
    """``(start, end)`` of the turns level 2 would summarize now (empty when start >= end)."""
    starts = unit_starts(messages)
    head_end = (
        snap(starts, config.keep_first) if config.keep_first < len(messages) else len(messages)
    )
    return head_end, _guaranteed_tail_start(messages, starts, head_end, config.keep_recent)


def summarize_old_turns(
    messages: Sequence[AgentMessage],
    config: ContextConfig,
    injected: InjectedPredicate = is_loop_injected,
    summarizer: Summarizer | None = None,
) -> list[AgentMessage]:
    """Level 2: replace the turns between the head and the recent tail with one summary.

    The summary is a user message starting with :data:`SUMMARY_PREFIX`, one line per old
    turn (its first line of text and the tools it called) or user message; an earlier
    summary's lines are carried over. A ``summarizer`` may supply better text for the
    span's first messages. The latest real user request in that span is kept verbatim
    after the summary. Custom messages in the span go with it.
    """
    head_end, tail_start = summary_span(messages, config)
    if tail_start <= head_end:
        return list(messages)
    ask = latest_ask(messages, injected)
    kept_ask = ask if ask is not None and head_end <= ask < tail_start else None
    written: list[str] = []
    mechanical_from = head_end
    if summarizer is not None:
        supplied = summarizer(messages[head_end:tail_start])
        if supplied is not None:
            text, covered = supplied
            written = [line for line in text.strip().split("\n") if line.strip()]
            mechanical_from = head_end + max(0, min(covered, tail_start - head_end))
    lines = _summary_lines(
        messages, mechanical_from, tail_start, kept_ask, config.summary_line_max_chars
    )
    lines = written + lines
    if not lines:
        return list(messages)
    if len(lines) > config.summary_max_lines:
        keep = max(0, config.summary_max_lines - 1)
        omitted = len(lines) - keep
        lines = [
            f"- ({omitted} earlier lines omitted)",
            *(lines[len(lines) - keep :] if keep else []),
        ]
    summary = UserMessage(
        content=[TextContent(text="\n".join([SUMMARY_PREFIX, *lines]))],
        timestamp=messages[head_end].timestamp,
    )
    out: list[AgentMessage] = [*messages[:head_end], summary]
    if kept_ask is not None:
        out.append(messages[kept_ask])
    out.extend(messages[tail_start:])
    return out


def _marker(dropped: int, timestamp: int) -> UserMessage:
    text = f"{COMPACTION_MARKER}{dropped} earlier messages removed to fit the context window]"
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


class _Cut:
    """Level 3's arithmetic over one history: prefix sums, so every candidate costs O(1)."""

    def __init__(
        self, messages: Sequence[AgentMessage], config: ContextConfig, injected: InjectedPredicate
    ) -> None:
        self.messages = messages
        self.size = size = len(messages)
        self.starts = unit_starts(messages)
        self.prefix = [0] * (size + 1)
        self.llm = [0] * (size + 1)
        for i, message in enumerate(messages):
            self.prefix[i + 1] = self.prefix[i] + config.cost(message)
            self.llm[i + 1] = self.llm[i] + (0 if isinstance(message, CustomMessage) else 1)
        self.head = snap(self.starts, config.keep_first) if config.keep_first < size else size
        self.ask = latest_ask(messages, injected)
        self.marker_cost = config.cost(_marker(size, 0))
        last = last_assistant_index(messages)
        self.newest = (
            last if config.keep_recent > 0 and last is not None and last >= self.head else None
        )
        self.tail = _guaranteed_tail_start(messages, self.starts, self.head, config.keep_recent)

    def separate_ask(self, head: int, tail: int, with_ask: bool) -> bool:
        ask = self.ask
        return with_ask and ask is not None and head <= ask < tail

    def total(self, head: int, tail: int, with_ask: bool = True) -> int:
        cost = self.prefix[head] + self.marker_cost + self.prefix[self.size] - self.prefix[tail]
        if self.separate_ask(head, tail, with_ask):
            assert self.ask is not None
            cost += self.prefix[self.ask + 1] - self.prefix[self.ask]
        return cost

    def has_content(self, head: int, tail: int, with_ask: bool = True) -> bool:
        kept = self.llm[head] + self.llm[self.size] - self.llm[tail]
        return kept > 0 or self.separate_ask(head, tail, with_ask)

    def extend(self, head: int, tail: int, limit: int) -> int:
        """Grow the tail backwards, unit by unit, while the total stays within ``limit``."""
        index = self._index(tail)
        while index > 0 and self.starts[index - 1] >= head:
            candidate = self.starts[index - 1]
            if self.total(head, candidate) > limit:
                break
            tail = candidate
            index -= 1
        return tail

    def _index(self, tail: int) -> int:
        return bisect_left(self.starts, tail)

    def build(self, head: int, tail: int, with_ask: bool = True) -> tuple[list[AgentMessage], int]:
        messages = self.messages
        ask: list[AgentMessage] = []
        if self.ask is not None and self.separate_ask(head, tail, with_ask):
            ask.append(messages[self.ask])
        kept = head + len(ask) + self.size - tail
        dropped = self.size - kept
        if dropped == 0:
            return list(messages), 0
        first_dropped = head
        if ask and first_dropped == self.ask:
            first_dropped += 1
        marker = _marker(dropped, messages[first_dropped].timestamp)
        return [*messages[:head], marker, *ask, *messages[tail:]], dropped


def _drop_middle(
    messages: Sequence[AgentMessage], config: ContextConfig, injected: InjectedPredicate
) -> tuple[list[AgentMessage], int]:
    cut = _Cut(messages, config, injected)
    budget, target = config.budget(), config.target()
    head, size = cut.head, cut.size
    # 1. Head + marker + ask + the keep_recent tail within the target: grow the tail to it.
    if cut.total(head, cut.tail) <= target and cut.has_content(head, cut.tail):
        return cut.build(head, cut.extend(head, cut.tail, target))
    # 2. keep_protected: head → ask → newest turn → tail up to the target; may overshoot
    #    the target, never the budget.
    newest = cut.newest if cut.newest is not None else size
    if cut.total(head, newest) <= budget and cut.has_content(head, newest):
        return cut.build(head, cut.extend(head, newest, target))
    # 3. Past the budget: shorten the head unit by unit (an ask inside it is kept apart).
    for kept_head in reversed([s for s in cut.starts if s < head]):
        if cut.total(kept_head, newest) <= budget and cut.has_content(kept_head, newest):
            return cut.build(kept_head, newest)
    # 4. Then the ask.
    if cut.total(0, newest, False) <= budget and cut.has_content(0, newest, False):
        return cut.build(0, newest, False)
    # 5. Then the newest turn, from its start (the ask comes back if it fits again).
    for tail in (s for s in cut.starts if s > newest):
        if not cut.has_content(0, tail, False):
            break
        if cut.total(0, tail, False) <= budget:
            with_ask = cut.total(0, tail) <= budget
            return cut.build(0, tail, with_ask)
    # 6. Last resort: marker + ask (never a bare marker).
    if cut.ask is not None:
        return cut.build(0, size)
    last = max((s for s in cut.starts if cut.has_content(0, s, False)), default=0)
    return cut.build(0, last, False)


def compact_messages(
    messages: Sequence[AgentMessage],
    config: ContextConfig,
    *,
    injected: InjectedPredicate = is_loop_injected,
    summarizer: Summarizer | None = None,
) -> CompactionResult:
    """Compact ``messages`` to fit ``config.budget()``, trying each level in turn.

    1. Truncate tool outputs before the newest turn. 2. Summarize the turns between the
    head and the ``keep_recent`` tail. 3. Drop middle turns behind a
    :data:`COMPACTION_MARKER` message, keeping the head, the latest real user request
    (after the marker) and the newest turn, plus as much tail as fits ``config.target()``.
    When those exceed the target they are kept up to the budget; past it the head goes
    first (unit by unit from its end), then the request, then the newest turn from its
    start; the last resort is marker + request. A tool call never loses its results.

    ``injected`` tells loop-written user messages from real requests (default
    :func:`is_loop_injected`); ``summarizer`` may supply level 2's text (see :data:`Summarizer`).
    Custom messages cost nothing and go with the span they sit in.
    """
    budget = config.budget()
    before = config.tokens(messages)
    if before <= budget:
        return CompactionResult(
            messages=list(messages),
            level=0,
            tokens_before=before,
            tokens_after=before,
            budget=budget,
        )
    current = truncate_old_tool_outputs(messages, config)
    after = config.tokens(current)
    if after <= budget:
        return CompactionResult(
            messages=current, level=1, tokens_before=before, tokens_after=after, budget=budget
        )
    current = summarize_old_turns(current, config, injected, summarizer)
    after = config.tokens(current)
    if after <= budget:
        return CompactionResult(
            messages=current, level=2, tokens_before=before, tokens_after=after, budget=budget
        )
    current, dropped = _drop_middle(current, config, injected)
    return CompactionResult(
        messages=current,
        level=3,
        tokens_before=before,
        tokens_after=config.tokens(current),
        budget=budget,
        dropped=dropped,
    )


def compact_after_overflow(
    messages: Sequence[AgentMessage],
    config: ContextConfig,
    *,
    injected: InjectedPredicate = is_loop_injected,
    summarizer: Summarizer | None = None,
) -> CompactionResult:
    """Compaction after the provider refused a request as too long.

    The estimate was wrong by at least the headroom, so this compacts to at most half of
    the current estimate (and never above the normal budget), whatever the estimate says.
    """
    estimated = config.tokens(messages)
    budget = max(0, min(config.budget(), estimated // 2))
    return compact_messages(
        messages, replace(config, budget_tokens=budget), injected=injected, summarizer=summarizer
    )
