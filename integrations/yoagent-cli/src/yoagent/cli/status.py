"""The status line after each run: tokens, cache hits, context-window fill, elapsed time,
standing grants, and the cost; and the cost lines ``/cost`` shows.

Costs come from core's :class:`~yoagent.core.SessionStats`, priced by yoagent-pricing's
layers (see :mod:`.prices`). :func:`cost_usd` and :func:`cost_text` are the one place a
cost is read: the agent's own calls, its sub-agents', its compaction summaries' and its
decisions' (``total_cost_usd()``), never ``cost_usd`` alone, which leaves the last three
out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from yoagent.core import AgentMessage, AssistantMessage, SessionStats, Usage
from yoagent.core.loop import last_assistant

UNKNOWN = "cost unknown"


def _total_usd(stats: SessionStats) -> float | None:
    """``stats.total_cost_usd()``, or ``None`` when a decision request ran at an unknown
    cost — even one that reported no usage, which adds nothing to that sum."""
    return None if stats.decision.unpriced else stats.total_cost_usd()


def cost_usd(stats: SessionStats) -> float | None:
    """What ``stats`` cost in all (own calls, sub-agents, summaries, decisions); ``None`` when
    any part ran at no known price, or nothing was spent."""
    if stats.total_usage().is_zero():
        return None
    return _total_usd(stats)


def dollars(amount: float) -> str:
    """``$0.0123``."""
    return f"${amount:.4f}"


def cost_text(stats: SessionStats, *, unknown: str = UNKNOWN) -> str:
    """``$0.0123`` when priced; ``unknown`` when tokens were spent at no known price; ``""``
    when nothing was spent."""
    if stats.total_usage().is_zero():
        return ""
    total = _total_usd(stats)
    return unknown if total is None else dollars(total)


def _amount(cost: float | None, usage: Usage) -> str:
    if cost is None and not usage.is_zero():
        return "unknown"
    return dollars(cost or 0.0)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def cost_lines(stats: SessionStats) -> list[str]:
    """The cost of ``stats`` part by part: the agent's own calls, its sub-agents (with their
    runs), its compaction summaries (with their requests), the tool gate's decisions (when
    there were any), and the total."""
    sub, summaries, decisions = stats.sub_agents, stats.compaction, stats.decision
    total = _total_usd(stats)
    rows = [
        ("own calls", _amount(stats.cost_usd, stats.usage), _plural(stats.turns, "model call")),
        ("sub-agents", _amount(sub.cost_usd, sub.usage), _plural(sub.runs, "run")),
        (
            "compaction",
            _amount(summaries.cost_usd, summaries.usage),
            _plural(summaries.requests, "request"),
        ),
    ]
    if decisions.requests:
        # A request of unknown cost makes the row unknown, even one that reported no usage.
        amount = "unknown" if decisions.unpriced else _amount(decisions.cost_usd, decisions.usage)
        rows.append(("decisions", amount, _plural(decisions.requests, "request")))
    rows.append(("total", "unknown" if total is None else dollars(total), ""))
    return [f"  {name:<11} {amount:>9}  {detail}".rstrip() for name, amount, detail in rows]


def context_used(messages: Sequence[AgentMessage]) -> int | None:
    """Tokens the conversation fills now: the last reply's prompt plus its output (the
    provider's own count), or ``None`` before any reply."""
    reply = last_assistant(messages)
    if not isinstance(reply, AssistantMessage) or reply.usage.is_zero():
        return None
    usage = reply.usage
    return usage.input + usage.cache_read + usage.cache_write + usage.output


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M".replace(".0M", "M")
    if count >= 1_000:
        return f"{round(count / 1_000)}k"
    return str(count)


def _elapsed(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"


@dataclass(slots=True, kw_only=True)
class Status:
    """What the status line shows about one run."""

    stats: SessionStats
    """What the run spent."""
    total: SessionStats | None = None
    """What the whole conversation spent (its cost is shown beside the run's when it differs)."""
    context_tokens: int | None = None
    context_window: int | None = None
    elapsed: float | None = None
    grants: Sequence[str] = field(default_factory=tuple[str, ...])
    show_unknown: bool = True
    """Say "cost unknown" for a run spent at no known price (not when pricing is off)."""

    def line(self) -> str:
        """``tokens in 12,034 (cache hit 81%) · out 412 · context 6% of 200k · 3.2s``, then
        the compactions (when any), the standing grants, and the cost: the run's
        (``$0.0011``), then the conversation's when it differs (``(total $0.0033)``), or
        "cost unknown"."""
        stats = self.stats
        usage = stats.usage
        prompt = usage.input + usage.cache_read + usage.cache_write
        hit = round(100 * usage.cache_read / prompt) if prompt else 0
        parts = [f"tokens in {prompt:,} (cache hit {hit}%)", f"out {usage.output:,}"]
        if self.context_tokens is not None and self.context_window:
            share = min(100, round(100 * self.context_tokens / self.context_window))
            parts.append(f"context {share}% of {_tokens(self.context_window)}")
        if self.elapsed is not None:
            parts.append(_elapsed(self.elapsed))
        if stats.compactions:
            parts.append(f"compacted {stats.compactions}×")
        if self.grants:
            parts.append(f"always allowed: {', '.join(self.grants)}")
        cost = cost_text(stats, unknown=UNKNOWN if self.show_unknown else "")
        if cost:
            if self.total is not None and cost != UNKNOWN:
                overall = cost_text(self.total)
                if overall and overall != cost:
                    cost += f" (total {overall})"
            parts.append(cost)
        return " · ".join(parts)


def status_line(stats: SessionStats) -> str:
    """The status line of ``stats`` alone (no context, clock or grants)."""
    return Status(stats=stats).line()
