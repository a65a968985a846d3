"""Presets (yoagent-providers) priced by the bundled snapshot (yoagent-pricing).

A new preset of a vendor the snapshot prices must come with its snapshot entry: otherwise
the first test fails and names it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from yoagent.core import ContextTier, CostConfig, resolve_cost
from yoagent.pricing import (
    DECISION_PRICE_KEYS,
    PRICED_PROVIDERS,
    PriceTable,
    enable_bundled,
    price_key,
)
from yoagent.pricing.testing import fresh_prices
from yoagent.providers import models


@pytest.fixture(autouse=True)
def _default_prices() -> Iterator[None]:
    with fresh_prices():
        yield


def priced_vendors() -> set[str]:
    return set(PriceTable.bundled().providers())


def test_every_preset_of_a_vendor_the_snapshot_prices_has_a_cost() -> None:
    enable_bundled()
    covered = [p for p in models.presets() if price_key(p.provider) in priced_vendors()]
    assert covered, "no preset of a priced vendor: the test would check nothing"
    unpriced = [f"{p.provider}/{p.id}" for p in covered if resolve_cost(p) is None]
    assert unpriced == [], f"presets with no snapshot entry: {unpriced}"


PRICED_WITHOUT_PRESET = {
    # yoagent-providers has no Meta vendor row (its API's URL and key variable are not
    # known here): these are priced for a config you build yourself.
    ("meta", "muse-spark-1.1"),
    ("meta", "muse-spark-1.2"),
}
"""Snapshot entries of a first-party vendor that no named preset builds, each with why."""


def test_every_priced_model_with_a_preset_is_listed() -> None:
    """A new snapshot entry for a first-party vendor comes with its preset, or joins
    PRICED_WITHOUT_PRESET saying why (decision price keys are not chat models)."""
    presets = {(p.provider, p.id) for p in models.presets()}
    missing = [
        f"{provider}/{model}"
        for provider, model in PriceTable.bundled()
        if provider in PRICED_PROVIDERS
        and provider not in DECISION_PRICE_KEYS
        and (provider, model) not in presets
        and (provider, model) not in PRICED_WITHOUT_PRESET
    ]
    assert missing == [], f"snapshot entries with no preset: {missing}"
    stale = sorted(PRICED_WITHOUT_PRESET & presets)
    assert stale == [], f"listed as without a preset, but one exists: {stale}"


def test_preset_costs_are_the_snapshot_entries() -> None:
    enable_bundled()
    assert resolve_cost(models.anthropic("claude-sonnet-5")) == CostConfig(
        input=2.0, output=10.0, cache_read=0.2, cache_write=2.5
    )
    assert resolve_cost(models.preset("openai", "gpt-5.5")) == CostConfig(
        input=5.0,
        output=30.0,
        cache_read=0.5,
        cache_write=5.0,
        tiers=(
            ContextTier(
                above_prompt_tokens=272_000,
                input=10.0,
                output=45.0,
                cache_read=1.0,
                cache_write=10.0,
            ),
        ),
    )
    bundled = PriceTable.bundled()
    for preset in models.presets():
        key = price_key(preset.provider)
        if key is not None and (key, preset.id) in bundled:
            assert resolve_cost(preset) == bundled.cost(key, preset.id), preset.id


def test_presets_are_unpriced_until_the_process_opts_in() -> None:
    assert all(resolve_cost(p) is None for p in models.presets())
    enable_bundled()
    assert resolve_cost(models.anthropic("claude-sonnet-5")) is not None


def test_gateway_and_local_presets_are_never_priced_from_the_snapshot() -> None:
    enable_bundled()
    assert resolve_cost(models.openrouter("anthropic/claude-sonnet-5")) is None
    assert resolve_cost(models.opencode("claude-sonnet-5")) is None
    assert resolve_cost(models.ollama("claude-sonnet-5")) is None
