"""Which price entries a lookup reads, and the mistakes an override can make silently."""

from __future__ import annotations

from types import MappingProxyType

from ._entry import implausible_rates
from ._table import PriceTable

PRICED_PROVIDERS = frozenset(
    {"anthropic", "openai", "google", "xai", "groq", "deepseek", "mistral", "zai", "minimax"}
    | {"qwen", "meta"}
)
"""First-party vendors whose configs are priced from the process-wide table, by their own
``provider`` and ``id``. Gateways, local servers and custom endpoints are never looked up:
what they bill is not the vendor's list price (price one with :func:`with_prices`)."""

DECISION_PRICE_KEYS = frozenset({"typesafe", "cloudflare", "openai-decisions"})
"""Price keys decision models look up by the model id their API reports."""

PROVIDER_ALIASES = MappingProxyType({"openai_responses": "openai"})
"""Providers priced under another key (the Responses API bills OpenAI's list prices)."""


def price_key(provider: str) -> str | None:
    """The table key a config of ``provider`` is priced under, or ``None`` (never looked up)."""
    provider = PROVIDER_ALIASES.get(provider, provider)
    if provider in PRICED_PROVIDERS or provider in DECISION_PRICE_KEYS:
        return provider
    return None


def inert_entries(table: PriceTable) -> list[str]:
    """``provider/model`` of the entries no lookup ever reads."""
    return [
        f"{p}/{m}" for p, m, _ in table.items() if price_key(p) is None or p in PROVIDER_ALIASES
    ]


def override_warnings(table: PriceTable, lower: PriceTable) -> list[str]:
    """What ``table`` gets wrong without failing, were it laid over ``lower``.

    Entries no lookup reads, fields the format ignored, rates above
    :data:`~yoagent.pricing.MAX_PLAUSIBLE_RATE`, context tiers the replaced entry had and
    this one drops, and cache rates the replaced entry set and this one leaves to the input
    rate: an entry replaces the one below it whole, never field by field.
    """
    warnings: list[str] = []
    inert = inert_entries(table)
    if inert:
        keys = ", ".join(sorted(PRICED_PROVIDERS | DECISION_PRICE_KEYS))
        warnings.append(
            f"{', '.join(inert)}: no lookup reads these (prices are looked up under {keys}); "
            "only with_prices() applies them"
        )
    if table.ignored_fields:
        warnings.append(
            f"ignored field(s) the price format does not define: {', '.join(table.ignored_fields)}"
            " (a typo, or a field from a newer release?)"
        )
    for provider, model, entry in table.items():
        warnings += [
            f"{problem} (a typo?)" for problem in implausible_rates(provider, model, entry)
        ]
        replaced = lower.entry(provider, model)
        if replaced is None:
            continue
        old, new = replaced.cost, entry.cost
        if old.tiers and not new.tiers:
            warnings.append(
                f"{provider}/{model} drops the {len(old.tiers)} context tier(s) of the entry it "
                "replaces: every request now bills at the base rates"
            )
        for name in ("cache_read", "cache_write"):
            was, now = getattr(old, name), getattr(new, name)
            if was and not now:
                warnings.append(
                    f"{provider}/{model} leaves {name} unset, so it bills at the input rate "
                    f"({new.input:g}); the entry it replaces set {was:g}"
                )
    return warnings
