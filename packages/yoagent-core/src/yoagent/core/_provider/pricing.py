"""The process-wide price-resolver slot (off by default) and cost arithmetic.

Nothing is priced until an application opts in: ``yoagent.pricing.enable_bundled()`` (the
yoagent-pricing package) installs a resolver here. A ``cost`` set on a :class:`ModelConfig`
always wins. Prices are looked up each time one is needed (every model call), so a resolver
installed or changed mid-session prices the next call.

Costs are computed and added in decimal from the rates as written, so a figure is the
nearest float to the exact dollar amount (``0.1 + 0.2`` is ``0.3`` here), not the sum of
binary approximations.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache

from yoagent.core._logging import logger
from yoagent.core._types.config import CostConfig, ModelConfig
from yoagent.core._types.messages import Usage

from .metadata import entry_points

PriceResolver = Callable[[str, str], CostConfig | None]
"""``(provider, model_id) -> CostConfig | None``."""

AUTOLOAD_GROUP = "yoagent.pricing"
"""Entry points (zero-argument callables) run once, the first time a price is asked for
while no resolver is installed and none was ever set. yoagent-pricing registers one that
applies a ``YOAGENT_PRICES`` override, so the variable works without an import."""

_MILLION = Decimal(1_000_000)

_resolver: PriceResolver | None = None
_lock = threading.Lock()
_autoload_lock = threading.RLock()
_autoloaded = False
_autoloading = False


def set_price_resolver(resolver: PriceResolver | None) -> PriceResolver | None:
    """Install (or with ``None`` remove) the process-wide resolver; returns the previous one.

    An explicit call also settles the slot: the :data:`AUTOLOAD_GROUP` entry points no
    longer run.
    """
    global _resolver, _autoloaded
    with _lock:
        previous, _resolver = _resolver, resolver
        _autoloaded = True
    return previous


def price_resolver() -> PriceResolver | None:
    """The installed resolver, if any (running the autoload entry points on first use)."""
    resolver = _resolver
    if resolver is not None or _autoloaded:
        return resolver
    _autoload()
    return _resolver


def _autoload() -> None:
    """Run the :data:`AUTOLOAD_GROUP` entry points once; a failing one is logged, never raised.

    Other threads wait for the first to finish; a lookup made by an entry point itself
    (same thread) returns at once instead of recursing.
    """
    global _autoloaded, _autoloading
    with _autoload_lock:
        if _autoloaded or _autoloading:
            return
        _autoloading = True
        try:
            try:
                found = list(entry_points(group=AUTOLOAD_GROUP))
            except Exception:  # unreadable package metadata must not break a model call
                logger.exception("could not read the %s entry points", AUTOLOAD_GROUP)
                found = []
            for entry in found:
                try:
                    entry.load()()
                except Exception:
                    logger.exception("price autoload %r (%s) failed", entry.name, entry.value)
        finally:
            _autoloading = False
            _autoloaded = True


def resolve_cost(config: ModelConfig) -> CostConfig | None:
    """The prices for ``config``: its own ``cost``, else the resolver's answer, else ``None``."""
    if config.cost is not None:
        return config.cost
    resolver = price_resolver()
    if resolver is None:
        return None
    return resolver(config.provider, config.id)


def cost_of(usage: Usage, cost: CostConfig | None) -> float | None:
    """Dollars for ``usage`` at ``cost``; ``None`` when unpriced and something was used, or
    when the figure is too large for a float (never ``inf``: absurd rates are unknown cost).

    The band is picked by the prompt's size (``input + cache_read + cache_write``): the
    highest context tier it is above, else the base rates, for every token of the request.
    A cache rate of 0 bills at that band's input rate.
    """
    if cost is None:
        return None if not usage.is_zero() else 0.0
    band = cost.band(usage.input + usage.cache_read + usage.cache_write)
    input_rate = _rate(band.input)
    total = (
        usage.input * input_rate
        + usage.output * _rate(band.output)
        + usage.cache_read * (_rate(band.cache_read) or input_rate)
        + usage.cache_write * (_rate(band.cache_write) or input_rate)
    )
    dollars = float(total / _MILLION)
    return dollars if math.isfinite(dollars) else None


def add_usd(a: float, b: float) -> float:
    """``a + b`` in decimal, so adding costs never drifts (``0.1 + 0.2`` is ``0.3``)."""
    if not a or not b:  # the common case (a first turn, an unpriced run) skips Decimal
        return float(a or b)
    return float(_decimal(a) + _decimal(b))


def _decimal(amount: float) -> Decimal:
    # The shortest text that reads back as this float: 0.1 is 0.1, not 0.1000000000000000055…
    return Decimal(repr(float(amount)))


@lru_cache(maxsize=256)
def _rate(rate: float) -> Decimal:
    """:func:`_decimal` for rates: few distinct values, converted once (half a cost's time)."""
    return _decimal(rate)
