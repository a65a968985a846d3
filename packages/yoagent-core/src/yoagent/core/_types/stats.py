"""Spend accounting: token usage, cost and turns per run and across runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import Usage


def combine_cost(a: float | None, a_usage: Usage, b: float | None, b_usage: Usage) -> float | None:
    """Add two costs under the one rule every rollup uses.

    Usage with no cost is *unpriced*, and unpriced is sticky: the sum is ``None``.
    ``None`` with zero usage means "nothing spent" and adds nothing.
    """
    a_unpriced = a is None and not a_usage.is_zero()
    b_unpriced = b is None and not b_usage.is_zero()
    if a_unpriced or b_unpriced:
        return None
    return (a or 0.0) + (b or 0.0)


@dataclass(slots=True, kw_only=True)
class SubAgentSpend:
    """What delegated runs spent, summed over the whole delegation tree."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    runs: int = 0

    def merge(self, usage: Usage, cost_usd: float | None, runs: int = 1) -> None:
        """Fold one more delegated run (or a child's own rollup) in."""
        self.cost_usd = combine_cost(self.cost_usd, self.usage, cost_usd, usage)
        self.usage = self.usage + usage
        self.runs += runs


@dataclass(slots=True, kw_only=True)
class CompactionSpend:
    """What model-written compaction summaries cost (see ``LlmCompaction``)."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    requests: int = 0

    def record(self, usage: Usage, cost_usd: float | None, requests: int = 1) -> None:
        """Add one summary request (or another bucket's figures)."""
        self.cost_usd = combine_cost(self.cost_usd, self.usage, cost_usd, usage)
        self.usage = self.usage + usage
        self.requests += requests


@dataclass(slots=True, kw_only=True)
class SessionStats:
    """What one run (or several, added up) spent.

    ``usage``/``cost_usd``/``turns`` are the agent's own model calls; ``sub_agents`` (for
    delegated runs) and ``compaction`` (for model-written summaries) are separate buckets,
    never mixed into the agent's own figures.
    """

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    turns: int = 0
    compactions: int = 0
    """How many times the history was compacted to fit the model's context."""
    sub_agents: SubAgentSpend = field(default_factory=SubAgentSpend)
    compaction: CompactionSpend = field(default_factory=CompactionSpend)

    def is_unpriced(self) -> bool:
        """True when tokens were spent at an unknown price."""
        return self.cost_usd is None and not self.usage.is_zero()

    def record_turn(self, usage: Usage, cost_usd: float | None) -> None:
        """Add one model call."""
        self.cost_usd = combine_cost(self.cost_usd, self.usage, cost_usd, usage)
        self.usage = self.usage + usage
        self.turns += 1

    def merge(self, other: SessionStats) -> None:
        """Add another run's figures to these."""
        self.cost_usd = combine_cost(self.cost_usd, self.usage, other.cost_usd, other.usage)
        self.usage = self.usage + other.usage
        self.turns += other.turns
        self.compactions += other.compactions
        sub = other.sub_agents
        self.sub_agents.merge(sub.usage, sub.cost_usd, sub.runs)
        summaries = other.compaction
        self.compaction.record(summaries.usage, summaries.cost_usd, summaries.requests)

    def add_delegated(self, child: SessionStats) -> None:
        """Fold a delegated run's figures (its own and its children's) into ``sub_agents``."""
        self.sub_agents.merge(child.usage, child.cost_usd, runs=1)
        nested = child.sub_agents
        if nested.runs or not nested.usage.is_zero():
            self.sub_agents.merge(nested.usage, nested.cost_usd, runs=nested.runs)

    def total_usage(self) -> Usage:
        """Own usage plus every delegated run's and every compaction summary's."""
        return self.usage + self.sub_agents.usage + self.compaction.usage

    def total_cost_usd(self) -> float | None:
        """Own cost plus delegated runs' and summaries'; ``None`` when any part is unpriced."""
        with_children = combine_cost(
            self.cost_usd, self.usage, self.sub_agents.cost_usd, self.sub_agents.usage
        )
        return combine_cost(
            with_children,
            self.usage + self.sub_agents.usage,
            self.compaction.cost_usd,
            self.compaction.usage,
        )
