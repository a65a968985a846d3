"""The status line after each run: tokens, cache hits, context-window fill, elapsed time,
standing grants, and the cost when the model is priced.

The cost comes from core's :class:`~yoagent.core.SessionStats`, which prices a run once a
price resolver is installed (``yoagent-pricing``'s ``enable_bundled()``, see
:func:`~.app.enable_pricing`); :func:`cost_text` is the one place the status line and
``/cost`` read it, so a richer source only has to change that function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from yoagent.core import AgentMessage, AssistantMessage, SessionStats, last_assistant


def cost_text(stats: SessionStats) -> str:
    """``$0.0123`` when the run was priced, else ``""``."""
    if stats.cost_usd is None or stats.usage.is_zero():
        return ""
    return f"${stats.cost_usd:.4f}"


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
    context_tokens: int | None = None
    context_window: int | None = None
    elapsed: float | None = None
    grants: Sequence[str] = field(default_factory=tuple[str, ...])

    def line(self) -> str:
        """``tokens in 12,034 (cache hit 81%) · out 412 · context 6% of 200k · 3.2s``, then
        the compactions (when any), the standing grants, and the cost when priced."""
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
        cost = cost_text(stats)
        if cost:
            parts.append(cost)
        return " · ".join(parts)


def status_line(stats: SessionStats) -> str:
    """The status line of ``stats`` alone (no context, clock or grants)."""
    return Status(stats=stats).line()
