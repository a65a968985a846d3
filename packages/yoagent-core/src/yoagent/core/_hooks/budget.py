"""Budget: a dollar limit on a run (or on many), checked before each model request."""

from __future__ import annotations

import math
import threading

from yoagent.core._provider.pricing import add_usd, cost_of, resolve_cost
from yoagent.core._types.config import CostConfig, ModelConfig
from yoagent.core._types.messages import Usage
from yoagent.core._types.outcome import RunOutcome, StopCause
from yoagent.core._types.stats import RunSpend

from .basic import TurnContext
from .extension import (
    Extension,
    ModelVerdict,
    Proceed,
    RunContext,
    RunHooks,
    StopRun,
)


class Budget(Extension):
    """An extension that stops a run once it has spent ``limit_usd``.

    Spend is the run's own replies priced at ``cost`` (one ``CostConfig``), plus its
    compaction and decision requests and its extensions' own model calls, plus what the
    runs it delegated spent (each at its recorded price, or at ``cost`` where unpriced).
    The limit is checked before every model request; reaching it ends the run with
    ``[Agent stopped: budget ...]``.

    Per run by default; with ``across_runs=True`` every run it is installed on (later
    runs, and delegated runs when installed with ``with_tree_extension``) draws on one
    total, and a delegated run's spend is counted once, by the child itself.
    """

    def __init__(
        self,
        limit_usd: float,
        cost: CostConfig,
        *,
        across_runs: bool = False,
        name: str = "budget",
    ) -> None:
        if not math.isfinite(limit_usd) or limit_usd < 0:
            raise ValueError(f"a budget needs a finite limit >= 0, got {limit_usd!r}")
        self.name = name
        self.limit_usd = limit_usd
        self.cost = cost
        self.across_runs = across_runs
        self._lock = threading.Lock()
        self._total = 0.0
        self._last_run = 0.0
        self._served: set[tuple[str | None, str | None]] = set()
        """(parent run id, delegating call id) of delegated runs this budget served."""

    @classmethod
    def for_model(
        cls, limit_usd: float, model: ModelConfig, *, across_runs: bool = False
    ) -> Budget | None:
        """A budget priced at ``model``'s rates; ``None`` when the model is unpriced (its
        ``cost`` is unset and no price resolver knows it), rather than a wrong limit."""
        cost = resolve_cost(model)
        if cost is None:
            return None
        return cls(limit_usd, cost, across_runs=across_runs)

    def spent_usd(self) -> float:
        """Dollars spent: across every run (``across_runs``), else in the latest run."""
        with self._lock:
            return self._total if self.across_runs else self._last_run

    def start_run(self, run: RunContext) -> RunHooks:
        if run.inherited and run.delegated_by is not None:
            with self._lock:
                self._served.add((run.parent_run_id, run.delegated_by))
        return _BudgetHooks(self, run)

    # --- accounting (called by the hooks) ------------------------------------------------------

    def _price(self, usage: Usage, cost_usd: float | None) -> float:
        if cost_usd is not None:
            return cost_usd
        return cost_of(usage, self.cost) or 0.0

    def _run_spend(self, run: RunContext, own_usd: float) -> float:
        """What ``run`` has spent so far, as this budget counts it; ``own_usd`` is its own
        replies, priced one by one (a context tier applies per request, so the run's summed
        usage must never be priced as one request)."""
        spend: RunSpend = run.spend
        stats = spend.stats
        total = own_usd
        for part in (stats.compaction, stats.decision, stats.extensions):
            total += self._price(part.usage, part.cost_usd)
        with self._lock:
            served = set(self._served)
        for call_id, child in spend.delegated().items():
            if self.across_runs and (run.run_id, call_id) in served:
                # That child drew on the shared total itself, its summaries, decisions and
                # extension calls too (which the run's own buckets also hold): count none
                # of it here.
                for part in (child.compaction, child.decision, child.extensions):
                    total -= self._price(part.usage, part.cost_usd)
                continue
            total += self._price(child.usage, child.cost_usd)
            nested = child.sub_agents
            total += self._price(nested.usage, nested.cost_usd)
        return total

    def _settle(self, counted: float, now: float) -> float:
        """Record a run's spend moving from ``counted`` to ``now``; returns the total the
        limit is checked against."""
        with self._lock:
            self._total += now - counted
            self._last_run = now
            return self._total if self.across_runs else now


class _BudgetHooks(RunHooks):
    def __init__(self, budget: Budget, run: RunContext) -> None:
        self.budget = budget
        self.run = run
        self.counted = 0.0
        self.priced = Usage()
        """The run's own usage already priced into ``own_usd``."""
        self.own_usd = 0.0

    def _price_new_replies(self) -> float:
        """Price the usage the run's own replies added since the last check. Checks come
        before every request and at the end, so that is one reply's usage: one request."""
        usage = self.run.spend.stats.usage
        new = Usage(
            input=usage.input - self.priced.input,
            output=usage.output - self.priced.output,
            cache_read=usage.cache_read - self.priced.cache_read,
            cache_write=usage.cache_write - self.priced.cache_write,
        )
        if not new.is_zero():
            self.own_usd = add_usd(self.own_usd, cost_of(new, self.budget.cost) or 0.0)
            self.priced = usage
        return self.own_usd

    def _update(self) -> float:
        budget = self.budget
        now = budget._run_spend(self.run, self._price_new_replies())  # pyright: ignore[reportPrivateUsage]
        checked = budget._settle(self.counted, now)  # pyright: ignore[reportPrivateUsage]
        self.counted = now
        return checked

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        spent = self._update()
        limit = self.budget.limit_usd
        if spent >= limit:
            return StopRun(f"budget reached (${spent:.4f} of ${limit:.2f} spent)", StopCause.BUDGET)
        return Proceed()

    async def finish(self, outcome: RunOutcome) -> None:
        self._update()
