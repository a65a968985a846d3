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

from ._audit import AuditFinding, AuditReport, audit
from ._cache import CachedPrices, CacheOptions, CacheProblem, PriceOrigin, fetch_cached
from ._changes import PriceChange
from ._entry import MAX_PLAUSIBLE_RATE, PriceEntry
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
    PRICES_ENV_VAR,
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
