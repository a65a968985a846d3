"""The process-wide price-resolver slot (off by default) and cost arithmetic.

Nothing is priced until an application opts in, e.g. ``yoagent.pricing.enable_bundled()``
installs a resolver here. A ``cost`` set on a :class:`ModelConfig` always wins.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from yoagent.core._types.config import CostConfig, ModelConfig
from yoagent.core._types.messages import Usage

PriceResolver = Callable[[str, str], CostConfig | None]
"""``(provider, model_id) -> CostConfig | None``."""

_resolver: PriceResolver | None = None
_lock = threading.Lock()


def set_price_resolver(resolver: PriceResolver | None) -> PriceResolver | None:
    """Install (or with ``None`` remove) the process-wide resolver; returns the previous one."""
    global _resolver
    with _lock:
        previous, _resolver = _resolver, resolver
    return previous


def price_resolver() -> PriceResolver | None:
    """The installed resolver, if any."""
    return _resolver


def resolve_cost(config: ModelConfig) -> CostConfig | None:
    """The prices for ``config``: its own ``cost``, else the resolver's answer, else ``None``."""
    if config.cost is not None:
        return config.cost
    resolver = _resolver
    if resolver is None:
        return None
    return resolver(config.provider, config.id)


def cost_of(usage: Usage, cost: CostConfig | None) -> float | None:
    """Dollars for ``usage`` at ``cost``; ``None`` when unpriced and something was used."""
    if cost is None:
        return None if not usage.is_zero() else 0.0
    return (
        usage.input * cost.input
        + usage.output * cost.output
        + usage.cache_read * cost.cache_read
        + usage.cache_write * cost.cache_write
    ) / 1_000_000
