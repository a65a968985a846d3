"""Limits shared by every worker on one database: request slots and rates per provider,
and budgets that span runs."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

from dbos import DBOS
from yoagent.core import AssistantMessage, CostConfig, Extension, ModelConfig, cost_of, resolve_cost
from yoagent.core.extension import ModelVerdict, Proceed, RunContext, RunHooks, StopRun, TurnContext

from ._steps import in_workflow
from ._store import Store

LEASE_SECONDS = 60.0
"""How long a request slot is held without renewal: a worker that died holding one frees
it after this long (a live one renews it every third of it)."""
_POLL = 0.02


@dataclass(slots=True, frozen=True)
class ProviderLimit:
    """A cap on the model requests of one provider (``ModelConfig.provider``), held by every
    worker on the database together: at most ``max_concurrent`` in flight, and
    ``requests_per_second`` started per second, held as at most ``n`` in any
    ``n / requests_per_second`` seconds, ``n`` its whole part (at least 1): 1.5 is one in
    any 2/3 s, 0.5 one in any two seconds (either may be ``None``)."""

    provider: str
    max_concurrent: int | None = None
    requests_per_second: float | None = None

    def __post_init__(self) -> None:
        if not self.provider:
            raise ValueError("ProviderLimit.provider must name a provider")
        if self.max_concurrent is not None and self.max_concurrent < 1:
            raise ValueError(f"max_concurrent must be >= 1, got {self.max_concurrent}")
        rate = self.requests_per_second
        if rate is not None and not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"requests_per_second must be > 0, got {rate}")
        if self.max_concurrent is None and rate is None:
            raise ValueError("a ProviderLimit needs max_concurrent or requests_per_second")


class Limiter:
    """The limits of one durable agent, enforced through the database's tables."""

    def __init__(self, store: Store, limits: Sequence[ProviderLimit]) -> None:
        self.store = store
        self.limits = {limit.provider: limit for limit in limits}

    @asynccontextmanager
    async def lease(self, model: ModelConfig) -> AsyncGenerator[None]:
        """Hold a request slot of ``model.provider`` while the block runs."""
        limit = self.limits.get(model.provider)
        if limit is None:
            yield
            return
        lease_id: str | None = None
        if limit.max_concurrent is not None:
            lease_id = uuid.uuid4().hex
            while True:
                taken = await asyncio.to_thread(
                    self.store.take_lease,
                    limit.provider,
                    lease_id,
                    limit.max_concurrent,
                    LEASE_SECONDS,
                )
                if taken:
                    break
                await asyncio.sleep(_POLL)  # the slots live in the database: poll it
        try:
            if limit.requests_per_second is not None:
                while True:
                    wait = await asyncio.to_thread(
                        self.store.take_request, limit.provider, limit.requests_per_second
                    )
                    if not wait:
                        break
                    await asyncio.sleep(wait)
            if lease_id is None:
                yield
                return
            renewal = asyncio.create_task(self._renew(lease_id))
            try:
                yield
            finally:
                renewal.cancel()
                with suppress(asyncio.CancelledError):
                    await renewal
        finally:
            if lease_id is not None:
                await asyncio.shield(asyncio.to_thread(self.store.release_lease, lease_id))

    async def _renew(self, lease_id: str) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            await asyncio.to_thread(self.store.renew_lease, lease_id, LEASE_SECONDS)


class SharedBudget:
    """A dollar limit on every run of the durable agents it is given to, together, kept in
    the database: each reply's cost (at ``cost``) is added once, whichever worker ran it
    and however often the run was recovered; a run about to make a request stops with
    ``[Agent stopped: budget ...]`` once the ledger ``name`` holds ``limit_usd``."""

    def __init__(self, name: str, limit_usd: float, cost: CostConfig | None = None) -> None:
        if not name:
            raise ValueError("SharedBudget needs a name (its ledger in the database)")
        if not math.isfinite(limit_usd) or limit_usd < 0:
            raise ValueError(f"a budget needs a finite limit >= 0, got {limit_usd!r}")
        self.name = name
        self.limit_usd = limit_usd
        self.cost = cost

    def price(self, reply: AssistantMessage, model: ModelConfig) -> float:
        """What ``reply`` cost at this budget's prices (else the model's; unpriced: 0)."""
        cost = self.cost if self.cost is not None else resolve_cost(model)
        return cost_of(reply.usage, cost) or 0.0


class BudgetCheck(Extension):
    """The check of shared budgets before each request, its verdict a step of the run (a
    replay sees the verdict the run saw, not the ledger as it is now)."""

    name = "yoagent.dbos.shared_budget"

    def __init__(self, store: Store, budgets: Sequence[SharedBudget]) -> None:
        self.store = store
        self.budgets = tuple(budgets)

    def start_run(self, run: RunContext) -> RunHooks:
        return _BudgetHooks(self)

    async def verdict(self) -> str | None:
        """Why the run must stop now, or ``None``."""
        for budget in self.budgets:
            spent, _ = await asyncio.to_thread(self.store.spent, budget.name)
            if spent >= budget.limit_usd:
                return (
                    f"budget reached (${spent:.4f} of ${budget.limit_usd:.2f} spent "
                    f"across runs, ledger {budget.name!r})"
                )
        return None


class _BudgetHooks(RunHooks):
    def __init__(self, check: BudgetCheck) -> None:
        self.check = check

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        if in_workflow():
            reason = await DBOS.run_step_async({"name": "yoagent.budget"}, self.check.verdict)
        else:
            reason = await self.check.verdict()
        if reason is not None:
            return StopRun(reason)
        return Proceed()
