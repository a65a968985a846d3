"""What a decision evaluation costs: list prices through core's price-resolver slot, a fixed
price, or none.

A decision package may not import yoagent-pricing (layers): list prices are looked up with
``yoagent.core.provider.price_resolver()(key, reported_id)`` under the keys ``typesafe``,
``cloudflare`` and ``openai-decisions`` — only while requests go to the vendor's own host,
and by the *reported* (versioned) model id: an alias or unlisted id is unpriced, never $0.
Nothing is priced until the process installs a resolver (``yoagent.pricing.enable_bundled``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from yoagent.core import CostConfig, cost_of
from yoagent.core.provider import price_resolver
from yoagent.core.support import warn_once

from ._answers import Evaluation
from ._backend import DecisionBackend, HttpBackend, host_of

logger = logging.getLogger("yoagent.decision")


@dataclass(slots=True, frozen=True)
class ListPrice:
    """The vendor's list price under ``key``, while requests go to ``host``."""

    key: str
    host: str
    strip_prefix: str = ""
    """Removed from a reported id (Workers AI may report its catalog path)."""


@dataclass(slots=True, frozen=True)
class FixedPrice:
    """These rates for every evaluation."""

    cost: CostConfig

    @property
    def free(self) -> bool:
        """Every rate zero: $0 whatever the usage (even when none is reported)."""
        bands = (self.cost, *self.cost.tiers)
        return all(
            band.input == band.output == band.cache_read == band.cache_write == 0 for band in bands
        )


Pricing = ListPrice | FixedPrice | None
"""How a model's evaluations are priced (``None``: unpriced, keep a backend's own cost)."""

FREE = FixedPrice(CostConfig())


def price(pricing: Pricing, backend: DecisionBackend, evaluation: Evaluation) -> float | None:
    """Dollars for ``evaluation`` under ``pricing``; ``None`` when unknown."""
    match pricing:
        case None:
            return evaluation.cost_usd
        case FixedPrice() if pricing.free:
            return 0.0
        case FixedPrice(cost=cost):
            return _cost(evaluation, cost)
        case ListPrice():
            return _list_price(pricing, backend, evaluation)


def _list_price(
    pricing: ListPrice, backend: DecisionBackend, evaluation: Evaluation
) -> float | None:
    resolver = price_resolver()
    if resolver is None or not _on_host(backend, pricing.host):
        return None  # pricing off, or a host that does not bill the list price
    model = evaluation.model.removeprefix(pricing.strip_prefix)
    cost = resolver(pricing.key, model)
    if cost is None:
        warn_once(
            logger,
            f"unlisted:{pricing.key}/{model}",
            "no price for %s/%s in the price table; its evaluations are unpriced",
            pricing.key,
            model,
        )
        return None
    return _cost(evaluation, cost)


def _cost(evaluation: Evaluation, cost: CostConfig) -> float | None:
    if evaluation.usage is None:
        warn_once(
            logger,
            f"no-usage:{evaluation.model}",
            "decision backend reported no usage for %s; its evaluations are unpriced",
            evaluation.model,
        )
        return None
    return cost_of(evaluation.usage, cost)


def _on_host(backend: DecisionBackend, host: str) -> bool:
    return isinstance(backend, HttpBackend) and host_of(backend.endpoint_url()) == host
