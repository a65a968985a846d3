"""reprice() pins what the layers list now; with_prices() prices from a given table."""

from __future__ import annotations

from pricing_helpers import config, table

from yoagent.core import CostConfig, resolve_cost
from yoagent.pricing import enable_bundled, install_override, reprice, with_prices

SONNET_BUNDLED = CostConfig(input=2.0, output=10.0, cache_read=0.2, cache_write=2.5)


def test_reprice_pins_the_current_price_and_keeps_it_while_layers_change() -> None:
    enable_bundled()
    pinned = reprice(config("anthropic", "claude-sonnet-5"))
    assert pinned.cost == SONNET_BUNDLED
    install_override(table({"anthropic": {"claude-sonnet-5": {"input": 1, "output": 1}}}))
    assert resolve_cost(pinned) == SONNET_BUNDLED
    assert reprice(pinned).cost == CostConfig(input=1.0, output=1.0)


def test_reprice_clears_a_price_the_table_no_longer_lists() -> None:
    hand_priced = config("anthropic", "claude-unlisted")
    hand_priced.cost = CostConfig(input=1.0)
    enable_bundled()
    again = reprice(hand_priced)
    assert again.cost is None and hand_priced.cost == CostConfig(input=1.0)  # a copy


def test_reprice_leaves_a_provider_that_is_never_looked_up_alone() -> None:
    gateway = config("openrouter", "anthropic/claude-sonnet-5")
    gateway.cost = CostConfig(input=3.0)
    enable_bundled()
    assert reprice(gateway).cost == CostConfig(input=3.0)


def test_with_prices_applies_any_provider_and_never_clears() -> None:
    prices = table({"openrouter": {"anthropic/claude-sonnet-5": {"input": 3.3, "output": 16.5}}})
    gateway = with_prices(config("openrouter", "anthropic/claude-sonnet-5"), prices)
    assert gateway.cost == CostConfig(input=3.3, output=16.5)
    own = config("anthropic", "claude-x")
    own.cost = CostConfig(input=9.0)
    assert with_prices(own, prices).cost == CostConfig(input=9.0)
    responses = with_prices(
        config("openai_responses", "gpt-x"), table({"openai": {"gpt-x": {"input": 1, "output": 2}}})
    )
    assert responses.cost == CostConfig(input=1.0, output=2.0)
