"""yoagent.pricing: model prices as layered data, and the resolver that prices every turn.

Nothing is priced until the process opts in, once, before or during a session:

- :func:`enable_bundled` — the snapshot this release ships over genai-prices's broad table
  (offline);
- :func:`enable_live` / :func:`enable_live_cached` — a live table (models.dev, or your own
  price file) over the snapshot, falling back to it and saying why;
- :func:`install_override`, or the ``YOAGENT_PRICES`` environment variable (a file's path
  or its JSON) — your own prices, over everything else.

Each fills yoagent-core's price-resolver slot, which every model call reads (own turns,
compaction summaries, sub-agents), so ``SessionStats`` costs and span attributes follow.
No function here makes a network request unless its name says it fetches.
"""

# Loaded on first use (PEP 562): core's price autoload imports this package in every
# process that has it installed, at the first model call, and most never price from it.
# The tables, pydantic schemas and the models.dev reader load when a name is first read.

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from ._audit import AuditFinding, AuditReport, audit
    from ._cache import CachedPrices, CacheOptions, CacheProblem, PriceOrigin, fetch_cached
    from ._changes import PriceChange
    from ._entry import MAX_PLAUSIBLE_RATE, PriceEntry
    from ._env_var import PRICES_ENV_VAR
    from ._errors import (
        PriceDataError,
        PriceError,
        PriceFetchError,
        PriceFileError,
        UnsupportedSchemaError,
    )
    from ._genai import GenaiPrices, genai_prices
    from ._keys import DECISION_PRICE_KEYS, PRICED_PROVIDERS, PROVIDER_ALIASES, price_key
    from ._layers import (
        EnvOverride,
        InstallPolicy,
        OverrideReport,
        clear_bundled,
        clear_fetched,
        clear_override,
        enable_bundled,
        env_override_status,
        install_fetched,
        install_override,
        is_bundled_enabled,
        load_env_override,
        pricing_enabled,
        resolved,
    )
    from ._live import LivePrices, enable_live, enable_live_cached
    from ._models_dev import MODELS_DEV_URL, SkippedModel
    from ._reprice import reprice, with_prices
    from ._schema import SCHEMA_VERSION
    from ._sources import (
        DEFAULT_FETCH_TIMEOUT,
        MODELS_DEV,
        FetchReport,
        PriceSource,
        fetch_prices,
        parse_models_dev,
    )
    from ._table import PriceTable

_LAZY: dict[str, str] = {
    "audit": "._audit",
    "AuditFinding": "._audit",
    "AuditReport": "._audit",
    "CachedPrices": "._cache",
    "CacheOptions": "._cache",
    "CacheProblem": "._cache",
    "clear_bundled": "._layers",
    "clear_fetched": "._layers",
    "clear_override": "._layers",
    "DECISION_PRICE_KEYS": "._keys",
    "DEFAULT_FETCH_TIMEOUT": "._sources",
    "enable_bundled": "._layers",
    "enable_live": "._live",
    "enable_live_cached": "._live",
    "env_override_status": "._layers",
    "EnvOverride": "._layers",
    "fetch_cached": "._cache",
    "fetch_prices": "._sources",
    "FetchReport": "._sources",
    "genai_prices": "._genai",
    "GenaiPrices": "._genai",
    "install_fetched": "._layers",
    "install_override": "._layers",
    "InstallPolicy": "._layers",
    "is_bundled_enabled": "._layers",
    "LivePrices": "._live",
    "load_env_override": "._layers",
    "MAX_PLAUSIBLE_RATE": "._entry",
    "MODELS_DEV": "._sources",
    "MODELS_DEV_URL": "._models_dev",
    "OverrideReport": "._layers",
    "parse_models_dev": "._sources",
    "price_key": "._keys",
    "PriceChange": "._changes",
    "PRICED_PROVIDERS": "._keys",
    "PriceDataError": "._errors",
    "PriceEntry": "._entry",
    "PriceError": "._errors",
    "PriceFetchError": "._errors",
    "PriceFileError": "._errors",
    "PriceOrigin": "._cache",
    "PRICES_ENV_VAR": "._env_var",
    "PriceSource": "._sources",
    "PriceTable": "._table",
    "pricing_enabled": "._layers",
    "PROVIDER_ALIASES": "._keys",
    "reprice": "._reprice",
    "resolved": "._layers",
    "SCHEMA_VERSION": "._schema",
    "SkippedModel": "._models_dev",
    "UnsupportedSchemaError": "._errors",
    "with_prices": "._reprice",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next read is a plain global
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DECISION_PRICE_KEYS",
    "DEFAULT_FETCH_TIMEOUT",
    "MAX_PLAUSIBLE_RATE",
    "MODELS_DEV",
    "MODELS_DEV_URL",
    "PRICED_PROVIDERS",
    "PRICES_ENV_VAR",
    "PROVIDER_ALIASES",
    "SCHEMA_VERSION",
    "AuditFinding",
    "AuditReport",
    "CacheOptions",
    "CacheProblem",
    "CachedPrices",
    "EnvOverride",
    "FetchReport",
    "GenaiPrices",
    "InstallPolicy",
    "LivePrices",
    "OverrideReport",
    "PriceChange",
    "PriceDataError",
    "PriceEntry",
    "PriceError",
    "PriceFetchError",
    "PriceFileError",
    "PriceOrigin",
    "PriceSource",
    "PriceTable",
    "SkippedModel",
    "UnsupportedSchemaError",
    "audit",
    "clear_bundled",
    "clear_fetched",
    "clear_override",
    "enable_bundled",
    "enable_live",
    "enable_live_cached",
    "env_override_status",
    "fetch_cached",
    "fetch_prices",
    "genai_prices",
    "install_fetched",
    "install_override",
    "is_bundled_enabled",
    "load_env_override",
    "parse_models_dev",
    "price_key",
    "pricing_enabled",
    "reprice",
    "resolved",
    "with_prices",
]
