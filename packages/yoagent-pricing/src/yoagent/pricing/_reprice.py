"""Pinning prices into a config: what the process-wide table lists now, or a given table.

A config whose ``cost`` is ``None`` is priced at every model call from whatever the layers
hold then, so it never needs re-pricing. A ``cost`` set on a config wins over every layer;
these are how to set it from a table.
"""

from __future__ import annotations

from dataclasses import replace

from yoagent.core import ModelConfig

from ._keys import PROVIDER_ALIASES, price_key
from ._layers import resolved
from ._table import PriceTable


def reprice(config: ModelConfig) -> ModelConfig:
    """A copy of ``config`` whose ``cost`` is what the process-wide table lists for it now.

    Repeats the lookup a model call makes and pins the answer: use it to keep a config's
    price fixed while the layers change, or to refresh a pinned price after they did. It
    clears a pinned price the table no longer lists (``cost=None``). A config of a provider
    that is never looked up (a gateway, a local server) is returned unchanged, so a price
    set on it by hand survives.
    """
    key = price_key(config.provider)
    if key is None:
        return replace(config)
    return replace(config, cost=resolved().cost(key, config.id))


def with_prices(config: ModelConfig, table: PriceTable) -> ModelConfig:
    """A copy of ``config`` priced from ``table`` by its own provider and id, whichever the
    provider (gateways included); unchanged when ``table`` does not list it."""
    cost = table.cost(PROVIDER_ALIASES.get(config.provider, config.provider), config.id)
    return replace(config) if cost is None else replace(config, cost=cost)
