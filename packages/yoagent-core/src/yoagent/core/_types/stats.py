"""Spend accounting: token usage, cost and turns per run and across runs."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from yoagent.core._logging import logger
from yoagent.core._provider.pricing import add_usd, cost_of, price_resolver, resolve_cost

from .config import CostConfig, ModelConfig
from .messages import AgentMessage, AssistantMessage, Usage


def combine_cost(a: float | None, a_usage: Usage, b: float | None, b_usage: Usage) -> float | None:
    """Add two costs under the one rule every rollup uses.

    Usage with no cost is *unpriced*, and unpriced is sticky: the sum is ``None``.
    ``None`` with zero usage means "nothing spent" and adds nothing. The addition is
    decimal (:func:`~yoagent.core.provider.add_usd`), so totals do not drift; a sum too
    large for a float is unknown (``None``), never ``inf``.
    """
    a_unpriced = a is None and not a_usage.is_zero()
    b_unpriced = b is None and not b_usage.is_zero()
    if a_unpriced or b_unpriced:
        return None
    total = add_usd(a or 0.0, b or 0.0)
    return total if math.isfinite(total) else None


def replies_cost(messages: Iterable[AgentMessage], model: ModelConfig) -> float | None:
    """What the assistant replies among ``messages`` cost, each at the rates of the model
    that wrote it: ``model``'s own (its ``cost``, else the price resolver's) when it wrote
    the reply, else the resolver's for the reply's ``provider`` / ``model``. ``None`` when a
    reply that used tokens is unpriced (the :func:`combine_cost` rule)."""
    prices: dict[tuple[str, str], CostConfig | None] = {}
    total: float | None = 0.0
    counted = Usage()
    for message in messages:
        if not isinstance(message, AssistantMessage) or message.usage.is_zero():
            continue
        key = (message.provider, message.model)
        if key not in prices:
            prices[key] = _rates_of(key, model)
        cost = cost_of(message.usage, prices[key])
        total = combine_cost(total, counted, cost, message.usage)
        counted = counted + message.usage
    return total


def _rates_of(key: tuple[str, str], model: ModelConfig) -> CostConfig | None:
    provider, model_id = key
    if model_id in ("", model.id) and provider in ("", model.provider):
        return resolve_cost(model)  # the agent's model: its own ``cost`` wins
    resolver = price_resolver()
    return resolver(provider, model_id) if resolver is not None else None


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
class ModelSpend:
    """What one kind of side request (summaries, decisions) cost, added up.

    ``unpriced`` counts the requests recorded at an unknown cost (``cost_usd`` ``None``),
    even those that reported no usage — which ``cost_usd`` alone cannot show, since
    unknown usage adds nothing to it.
    """

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    requests: int = 0
    unpriced: int = 0

    def record(self, usage: Usage, cost_usd: float | None) -> None:
        """Add one request (``cost_usd`` ``None``: its cost is unknown)."""
        self.cost_usd = combine_cost(self.cost_usd, self.usage, cost_usd, usage)
        self.usage = self.usage + usage
        self.requests += 1
        if cost_usd is None:
            self.unpriced += 1

    def merge(self, other: ModelSpend) -> None:
        """Add another bucket of the same kind."""
        self.cost_usd = combine_cost(self.cost_usd, self.usage, other.cost_usd, other.usage)
        self.usage = self.usage + other.usage
        self.requests += other.requests
        self.unpriced += other.unpriced


@dataclass(slots=True, kw_only=True)
class CompactionSpend(ModelSpend):
    """What model-written compaction summaries cost (see ``LlmCompaction``)."""


@dataclass(slots=True, kw_only=True)
class DecisionSpend(ModelSpend):
    """What decision-model requests (gates, guards, advisors) cost during runs."""


@dataclass(slots=True, kw_only=True)
class ExtensionSpend(ModelSpend):
    """What extensions' own model calls cost (recorded through a :class:`SpendHandle`)."""


@dataclass(slots=True, kw_only=True)
class SessionStats:
    """What one run (or several, added up) spent.

    ``usage``/``cost_usd``/``turns`` are the agent's own model calls; ``sub_agents`` (for
    delegated runs), ``compaction`` (for model-written summaries), ``decision`` (for
    decision-model requests) and ``extensions`` (for extensions' own model calls) are
    separate buckets, never mixed into the agent's own figures. A delegated run's own
    compaction, decision and extension spend go into those buckets, not into
    ``sub_agents``.
    """

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    turns: int = 0
    compactions: int = 0
    """How many times the history was compacted to fit the model's context."""
    sub_agents: SubAgentSpend = field(default_factory=SubAgentSpend)
    compaction: CompactionSpend = field(default_factory=CompactionSpend)
    decision: DecisionSpend = field(default_factory=DecisionSpend)
    extensions: ExtensionSpend = field(default_factory=ExtensionSpend)

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
        self.compaction.merge(other.compaction)
        self.decision.merge(other.decision)
        self.extensions.merge(other.extensions)

    def add_delegated(self, child: SessionStats) -> None:
        """Fold a delegated run's figures in: its own model calls and its children's into
        ``sub_agents``, its summaries, decisions and extension calls into their buckets."""
        self.sub_agents.merge(child.usage, child.cost_usd, runs=1)
        nested = child.sub_agents
        if nested.runs or not nested.usage.is_zero():
            self.sub_agents.merge(nested.usage, nested.cost_usd, runs=nested.runs)
        self.compaction.merge(child.compaction)
        self.decision.merge(child.decision)
        self.extensions.merge(child.extensions)

    def _parts(self) -> tuple[SubAgentSpend | ModelSpend, ...]:
        return (self.sub_agents, self.compaction, self.decision, self.extensions)

    def total_usage(self) -> Usage:
        """Own usage plus every delegated run's, summary's, decision's and extension call's."""
        total = self.usage
        for part in self._parts():
            total = total + part.usage
        return total

    def total_cost_usd(self) -> float | None:
        """Own cost plus delegated runs', summaries', decisions' and extension calls';
        ``None`` when any part is unpriced."""
        usage, cost = self.usage, self.cost_usd
        for part_usage, part_cost in ((part.usage, part.cost_usd) for part in self._parts()):
            cost = combine_cost(cost, usage, part_cost, part_usage)
            usage = usage + part_usage
        return cost


class RunSpend:
    """One run's spend ledger, open while the run goes on.

    The loop records the run's own model calls and what its delegated runs spent; an
    extension or a tool records side requests made for the run (:meth:`record_decision`,
    :meth:`record_compaction`, :meth:`record_extension`): they land in the run's
    :class:`SessionStats` (and so in ``AgentEnd.stats`` and a ``Budget``'s count). Once
    the run has ended the ledger is closed, and a late record is dropped with a warning.
    Records may come from any task or thread.
    """

    __slots__ = ("_closed", "_delegated", "_lock", "stats")

    def __init__(self, stats: SessionStats) -> None:
        self.stats = stats
        """The run's figures (read them; record through the methods)."""
        self._delegated: dict[str, SessionStats] = {}
        self._closed = False
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        """True once the run has ended."""
        return self._closed

    def close(self) -> None:
        """End the ledger (the loop does this after the extensions' ``finish``, just
        before ``AgentEnd``)."""
        with self._lock:
            self._closed = True

    def _dropped(self, what: str) -> bool:
        """True (with a warning) once the ledger is closed; call it holding the lock."""
        if self._closed:
            logger.warning("%s spend recorded after its run ended was dropped", what)
        return self._closed

    def record_decision(self, usage: Usage, cost_usd: float | None) -> None:
        """Add one decision-model request (``cost_usd`` ``None``: unpriced)."""
        with self._lock:
            if not self._dropped("decision"):
                self.stats.decision.record(usage, cost_usd)

    def record_compaction(self, usage: Usage, cost_usd: float | None) -> None:
        """Add one compaction-summary request (``cost_usd`` ``None``: unpriced)."""
        with self._lock:
            if not self._dropped("compaction"):
                self.stats.compaction.record(usage, cost_usd)

    def record_extension(self, usage: Usage, cost_usd: float | None) -> None:
        """Add one model call an extension made (``cost_usd`` ``None``: unpriced)."""
        with self._lock:
            if not self._dropped("extension"):
                self.stats.extensions.record(usage, cost_usd)

    def record_delegated(self, tool_call_id: str, child: SessionStats) -> None:
        """Add what a run delegated by the tool call ``tool_call_id`` spent."""
        with self._lock:
            if self._dropped("delegated"):
                return
            self.stats.add_delegated(child)
            kept = self._delegated.get(tool_call_id)
            if kept is None:
                kept = self._delegated[tool_call_id] = SessionStats()
            kept.merge(child)

    def delegated(self) -> dict[str, SessionStats]:
        """What each delegating tool call's runs spent, by call id (a copy)."""
        with self._lock:
            return dict(self._delegated)


class SpendHandle:
    """Where an extension records what its own model calls cost, for one run.

    Get it from :meth:`RunContext.spend_handle` and hand it to whatever makes the calls (a
    service, a thread): it can add to the run's extension spend and nothing else.
    :meth:`add` prices ``usage`` at a model's rates (its ``cost``, else the price
    resolver's); :meth:`add_priced` at rates you give (``None``: unpriced, which makes the
    run's total unknown). The spend lands in ``SessionStats.extensions`` — in the totals,
    ``AgentEnd.stats`` and a ``Budget``'s count at its next check. Records made in the
    extension's ``finish`` still count; once the run has ended, an add is dropped with a
    warning.
    """

    __slots__ = ("_spend",)

    def __init__(self, spend: RunSpend) -> None:
        self._spend = spend

    @property
    def closed(self) -> bool:
        """True once the run has ended (an add is then dropped)."""
        return self._spend.closed

    def add(self, usage: Usage, model: ModelConfig) -> None:
        """Record one call to ``model`` that used ``usage``, priced at its rates."""
        self.add_priced(usage, resolve_cost(model))

    def add_priced(self, usage: Usage, cost: CostConfig | None) -> None:
        """Record one call that used ``usage``, priced at ``cost`` (``None``: unpriced)."""
        self._spend.record_extension(usage, cost_of(usage, cost))

    def __repr__(self) -> str:
        return f"SpendHandle(closed={self.closed})"
