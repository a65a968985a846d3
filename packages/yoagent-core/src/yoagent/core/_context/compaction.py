"""Context management: token estimates, the compaction budget, and tiered compaction.

Three pieces the loop combines before every request:

- :func:`estimate_tokens` / :func:`estimate_messages` — a fast chars-per-token heuristic;
- :class:`ContextTracker` — the provider's real usage figure for the last request plus an
  estimate of what was appended since, and a calibration factor (real / estimated);
- :func:`compact_messages` — tiered compaction down to :meth:`ContextConfig.budget`:
  level 1 truncates old tool outputs, level 2 replaces old turns with a mechanical summary,
  level 3 drops middle turns behind a marker.

Everything here is pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from yoagent.core._types.config import ModelConfig
from yoagent.core._types.content import ImageContent, TextContent, ThinkingContent, ToolCall
from yoagent.core._types.markers import (
    AGENT_STOPPED_PREFIX,
    COMPACTION_MARKER,
    SUMMARY_PREFIX,
    is_loop_injected,
)
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)

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

# Kept under these names here too: compaction is where most callers look for them.
_AGENT_STOPPED_PREFIX = AGENT_STOPPED_PREFIX

InjectedPredicate = Callable[[AgentMessage], bool]

Summarizer = Callable[[Sequence[AgentMessage]], "tuple[str, int] | None"]
"""Level 2's hook for better summaries: given the span about to be summarized, returns
``(text, covered)`` — a summary of the span's first ``covered`` messages — or ``None``.
The rest of the span gets the mechanical summary lines (see ``LlmCompaction``)."""


is_injected = is_loop_injected
"""True for a user message the loop or compaction wrote, not the user (see ``markers``)."""


# ---------------------------------------------------------------------------
# Token estimation
# ---------------------------------------------------------------------------


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
        elif isinstance(item, list | tuple):
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


# ---------------------------------------------------------------------------
# Budget
# ---------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True, frozen=True)
class ContextConfig:
    """How much of the context window the history may use, and how to compact it.

    Defaults suit a coding agent on a 200k-token model; :meth:`for_model` fills the window
    and output reserve from a :class:`~yoagent.core.ModelConfig`.
    """

    context_window: int = 200_000
    """The model's context window in tokens (input + output)."""
    reserve_output_tokens: int = 16_384
    """Room kept for the reply (and its reasoning); never given to the history."""
    system_prompt_tokens: int = 0
    """Tokens of what every request sends besides the history: system prompt and tool
    definitions. The loop sets it (e.g. with :func:`estimate_text` of both)."""
    min_free_fraction: float = 0.2
    """Headroom floor: the history never fills more than ``1 - min_free_fraction`` of the
    window, whatever the reserve. It absorbs the heuristic's error (code and non-English
    text run denser than 4 bytes/token) until the tracker has calibrated it."""
    target_fraction: float = 0.6
    """Level 3 cuts down to this fraction of the budget (hysteresis: the next turns do not
    compact again at once, which would rewrite the prompt cache every turn)."""
    keep_first: int = 2
    """Messages at the start always kept (the task, and usually the first reply); a head
    ending inside a tool call's results is shortened to the call's start."""
    keep_recent: int = 10
    """Messages at the end kept in full by level 2 and guaranteed by level 3; never less
    than the newest turn. 0 protects nothing at the end (not even the newest turn)."""
    tool_output_max_chars: int = 2_000
    """Level 1 cuts each old tool-output text block to this many characters (head + tail,
    where commands print what matters); old tool-output images become a placeholder."""
    summary_line_max_chars: int = 200
    """Level 2 clips each summary line to this many characters."""
    summary_max_lines: int = 200
    """Level 2 keeps at most this many summary lines (the newest), so repeated compaction
    cannot grow the summary without end."""
    budget_tokens: int | None = None
    """An explicit budget for the history, overriding the one derived from the window."""
    calibration: float = 1.0
    """Multiplies every estimate (real tokens / estimated tokens, from
    :attr:`ContextTracker.calibration`)."""

    def __post_init__(self) -> None:
        for name in (
            "context_window",
            "reserve_output_tokens",
            "system_prompt_tokens",
            "keep_first",
            "keep_recent",
            "tool_output_max_chars",
            "summary_line_max_chars",
            "summary_max_lines",
        ):
            value: int = getattr(self, name)
            if value < 0:
                raise ValueError(f"ContextConfig.{name} must be >= 0, got {value}")
        if not 0.0 <= self.min_free_fraction < 1.0:
            raise ValueError(
                f"ContextConfig.min_free_fraction must be in [0, 1), got {self.min_free_fraction}"
            )
        if not 0.0 < self.target_fraction <= 1.0:
            raise ValueError(
                f"ContextConfig.target_fraction must be in (0, 1], got {self.target_fraction}"
            )
        if not self.calibration > 0.0 or math.isinf(self.calibration):
            raise ValueError(f"ContextConfig.calibration must be > 0, got {self.calibration}")
        if self.budget_tokens is not None and self.budget_tokens < 0:
            raise ValueError(f"ContextConfig.budget_tokens must be >= 0, got {self.budget_tokens}")

    @classmethod
    def for_model(cls, model: ModelConfig, **overrides: Any) -> ContextConfig:
        """A config for ``model``: its context window, its ``max_tokens`` as the reserve."""
        fields: dict[str, Any] = {
            "context_window": model.context_window,
            "reserve_output_tokens": model.max_tokens,
            **overrides,
        }
        return cls(**fields)

    def budget(self) -> int:
        """Tokens the history may use: window − reserve − system prompt, capped by the floor."""
        if self.budget_tokens is not None:
            return self.budget_tokens
        usable = min(
            self.context_window - self.reserve_output_tokens,
            int(self.context_window * (1.0 - self.min_free_fraction)),
        )
        return max(0, usable - self.system_prompt_tokens)

    def target(self) -> int:
        """What level 3 cuts down to: ``target_fraction`` of the budget."""
        return int(self.budget() * self.target_fraction)

    def cost(self, message: AgentMessage) -> int:
        """The calibrated estimate of one message, as compaction counts it."""
        tokens = estimate_tokens(message)
        if self.calibration == 1.0:
            return tokens
        return math.ceil(tokens * self.calibration)

    def tokens(self, messages: Sequence[AgentMessage]) -> int:
        """The calibrated estimate of a history, as compaction counts it."""
        return sum(self.cost(message) for message in messages)


# ---------------------------------------------------------------------------
# Tracker
# ---------------------------------------------------------------------------

_MIN_CALIBRATION_SAMPLE = 1_000  # estimated tokens; smaller prefixes are too noisy to learn from


class ContextTracker:
    """How full the context is: the provider's real figure plus an estimate of what is new.

    After each reply, :meth:`record_usage` stores the request's real input size. Then
    :meth:`estimate` is that figure plus the (calibrated) estimate of the messages appended
    since. With no figure yet, or after :meth:`reset` (history replaced or compacted), it
    is a pure estimate. The first estimate after a figure also learns :attr:`calibration`
    (real / estimated for the same messages, bounded to ``[min_calibration, max_calibration]``).
    """

    __slots__ = (
        "_anchor_count",
        "_anchor_last",
        "_anchor_tokens",
        "_calibrated",
        "_calibration",
        "_learned",
        "_prefix",
        "config",
        "max_calibration",
        "min_calibration",
    )

    def __init__(
        self,
        config: ContextConfig | None = None,
        *,
        min_calibration: float = 0.5,
        max_calibration: float = 4.0,
    ) -> None:
        if not 0.0 < min_calibration <= 1.0 <= max_calibration:
            raise ValueError("ContextTracker needs 0 < min_calibration <= 1 <= max_calibration")
        self.config = config or ContextConfig()
        self.min_calibration = min_calibration
        self.max_calibration = max_calibration
        self._calibration = 1.0
        self._calibrated: tuple[ContextConfig, float, ContextConfig] | None = None
        self._anchor_count: int | None = None
        self._anchor_tokens = 0
        self._anchor_last: AgentMessage | None = None
        self._learned = True
        # (count, last message, raw estimate) of the longest prefix estimated so far, so a
        # growing history is estimated in O(new messages) per request, not O(history).
        self._prefix: tuple[int, AgentMessage | None, int] = (0, None, 0)

    @property
    def calibration(self) -> float:
        """Real tokens per estimated token, as last learned (1.0 until then)."""
        return self._calibration

    @property
    def last_real_tokens(self) -> int | None:
        """The last recorded real input size (history + system prompt), if still valid."""
        return self._anchor_tokens if self._anchor_count is not None else None

    def record_usage(self, usage: Usage, message_count: int) -> None:
        """Record what the provider counted for a request built from ``message_count`` messages.

        ``message_count`` is the length of the history the request was built from. The
        figure is input + cache read + cache write; a reply reporting none is ignored.
        """
        real = usage.input + usage.cache_read + usage.cache_write
        if real <= 0 or message_count < 0:
            return
        self._anchor_count = message_count
        self._anchor_tokens = real
        self._anchor_last = None
        self._learned = False

    def reset(self) -> None:
        """Forget the real figure (the history was replaced or compacted); keep the calibration."""
        self._anchor_count = None
        self._anchor_last = None
        self._learned = True
        self._prefix = (0, None, 0)

    def _raw_estimate(self, messages: Sequence[AgentMessage], count: int) -> int:
        """Uncalibrated estimate of ``messages[:count]``, reusing the last prefix's figure."""
        known, last, tokens = self._prefix
        if not (0 < known <= count and messages[known - 1] is last):
            known, tokens = 0, 0
        tokens += estimate_messages(messages[known:count])
        if count:
            self._prefix = (count, messages[count - 1], tokens)
        return tokens

    def calibrated_config(self) -> ContextConfig:
        """:attr:`config` with :attr:`calibration` applied: what to compact with."""
        cached = self._calibrated
        if cached is not None and cached[0] is self.config and cached[1] == self._calibration:
            return cached[2]
        calibrated = replace(self.config, calibration=self._calibration)
        self._calibrated = (self.config, self._calibration, calibrated)
        return calibrated

    def _anchor_valid(self, messages: Sequence[AgentMessage]) -> bool:
        count = self._anchor_count
        if count is None or count > len(messages):
            return False
        if count == 0:
            return True
        last = messages[count - 1]
        if self._anchor_last is None:
            self._anchor_last = last
            return True
        return last is self._anchor_last

    def _learn(self, messages: Sequence[AgentMessage], count: int) -> None:
        self._learned = True
        estimated = self._raw_estimate(messages, count)
        if estimated < _MIN_CALIBRATION_SAMPLE:
            return
        real = self._anchor_tokens - self.config.system_prompt_tokens
        ratio = real / estimated
        self._calibration = min(self.max_calibration, max(self.min_calibration, ratio))

    def estimate(self, messages: Sequence[AgentMessage]) -> int:
        """Estimated tokens of ``messages`` in the next request (the history's share)."""
        if not self._anchor_valid(messages):
            self._anchor_count = None
            return math.ceil(self._raw_estimate(messages, len(messages)) * self._calibration)
        count = self._anchor_count
        assert count is not None
        if not self._learned:
            self._learn(messages, count)
        real = max(0, self._anchor_tokens - self.config.system_prompt_tokens)
        return real + math.ceil(estimate_messages(messages[count:]) * self._calibration)

    def needs_compaction(self, messages: Sequence[AgentMessage]) -> bool:
        """True when the next request would exceed the budget."""
        return self.estimate(messages) > self.config.budget()


# ---------------------------------------------------------------------------
# Compaction
# ---------------------------------------------------------------------------


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


def _snap(starts: Sequence[int], index: int) -> int:
    """The start of the unit holding ``index`` (0 for an empty history)."""
    position = bisect_right(starts, index)
    return starts[position - 1] if position > 0 else 0


def safe_head_end(messages: Sequence[AgentMessage], keep_first: int) -> int:
    """End of the kept head: ``keep_first`` messages, stepped back off a head that would
    end inside a tool call's results (so the call and its results stay together)."""
    size = len(messages)
    if keep_first >= size:
        return size
    return _snap(unit_starts(messages), keep_first)


def _last_assistant(messages: Sequence[AgentMessage]) -> int | None:
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
    return _last_assistant(messages)


def latest_ask(
    messages: Sequence[AgentMessage], injected: InjectedPredicate = is_injected
) -> int | None:
    """Index of the latest real user message (skipping loop-injected ones), if any."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, UserMessage) and not injected(message):
            return i
    return None


def _truncate_text(text: str, max_chars: int) -> str:
    """Head and tail of ``text`` around a note, ``max_chars`` in all (so a second pass
    leaves it alone: repeated compaction does not rewrite what it already cut)."""
    if len(text) <= max_chars:
        return text
    note_size = len(f"\n[... {len(text)} characters of tool output truncated ...]\n")
    room = max_chars - note_size
    if room <= 0:
        return text[:max_chars]
    head = room * 2 // 3
    tail = room - head
    cut = len(text) - head - tail
    tail_text = text[len(text) - tail :] if tail else ""
    return f"{text[:head]}\n[... {cut} characters of tool output truncated ...]\n{tail_text}"


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
                content.append(TextContent(text=_truncate_text(block.text, limit)))
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
            elif is_injected(message):
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
    tail = _snap(starts, max(0, size - keep_recent)) if size else 0
    newest = _last_assistant(messages)
    if newest is not None:
        tail = min(tail, newest)
    return max(tail, head_end)


def summary_span(messages: Sequence[AgentMessage], config: ContextConfig) -> tuple[int, int]:
    """``(start, end)`` of the turns level 2 would summarize now (empty when start >= end)."""
    starts = unit_starts(messages)
    head_end = (
        _snap(starts, config.keep_first) if config.keep_first < len(messages) else len(messages)
    )
    return head_end, _guaranteed_tail_start(messages, starts, head_end, config.keep_recent)


def summarize_old_turns(
    messages: Sequence[AgentMessage],
    config: ContextConfig,
    injected: InjectedPredicate = is_injected,
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
        self.head = _snap(self.starts, config.keep_first) if config.keep_first < size else size
        self.ask = latest_ask(messages, injected)
        self.marker_cost = config.cost(_marker(size, 0))
        last = _last_assistant(messages)
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
    injected: InjectedPredicate = is_injected,
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
    :func:`is_injected`); ``summarizer`` may supply level 2's text (see :data:`Summarizer`).
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
    injected: InjectedPredicate = is_injected,
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
