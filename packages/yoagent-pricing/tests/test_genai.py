"""genai-prices's table as the lowest offline layer: the models people use are priced once
the bundled prices are on, the snapshot and every chosen layer win over it, and what a
CostConfig cannot express is skipped with why."""

from __future__ import annotations

import datetime
from decimal import Decimal

from genai_prices.types import (
    ClauseEquals,
    ClauseOr,
    ClauseStartsWith,
    ConditionalPrice,
    ModelInfo,
    ModelPrice,
    Provider,
    StartDateConstraint,
    Tier,
    TieredPrices,
    TimeOfDateConstraint,
)
from pricing_helpers import config, table

from yoagent.core import ContextTier, CostConfig, resolve_cost
from yoagent.pricing import (
    PriceTable,
    clear_bundled,
    enable_bundled,
    genai_prices,
    install_fetched,
    install_override,
    is_bundled_enabled,
    resolved,
)
from yoagent.pricing._genai import GENAI_PRICES_URL, map_genai_prices
from yoagent.pricing._keys import inert_entries, price_key

DAY = datetime.date(2026, 10, 1)


def test_the_readme_models_are_priced_offline_once_bundled_prices_are_on() -> None:
    assert resolve_cost(config("anthropic", "claude-sonnet-4-5")) is None  # nothing opted in
    enable_bundled()
    sonnet = resolve_cost(config("anthropic", "claude-sonnet-4-5"))
    gpt = resolve_cost(config("openai", "gpt-4o"))
    assert sonnet is not None and (sonnet.input, sonnet.output) == (3.0, 15.0)
    assert gpt is not None and (gpt.input, gpt.output) == (2.5, 10.0)
    assert resolve_cost(config("openai", "gpt-4o-2024-08-06")) == gpt  # an exact alias
    assert resolve_cost(config("openai_responses", "gpt-4o")) == gpt


def test_widely_used_models_of_every_priced_vendor_have_a_price() -> None:
    enable_bundled()
    for provider, model in [
        ("anthropic", "claude-opus-4-1"),
        ("anthropic", "claude-haiku-4-5"),
        ("openai", "gpt-4o-mini"),
        ("openai", "gpt-5"),
        ("openai", "o3"),
        ("google", "gemini-2.5-pro"),
        ("google", "gemini-2.5-flash"),
        ("xai", "grok-4"),
        ("mistral", "mistral-large-latest"),
    ]:
        assert resolve_cost(config(provider, model)) is not None, f"{provider}/{model}"


def test_the_snapshot_wins_over_genai_prices_entry_by_entry() -> None:
    enable_bundled()
    snapshot = PriceTable.bundled()
    now = resolved()
    for provider, model, entry in snapshot.items():
        assert now.entry(provider, model) == entry, f"{provider}/{model}"
    sonnet = now.entry("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.note is not None
    assert sonnet.note.startswith("from genai-prices 0.")
    assert sonnet.source is not None and sonnet.source.startswith("https://")


def test_fetched_and_user_layers_win_over_genai_prices() -> None:
    enable_bundled()
    install_fetched(table({"openai": {"gpt-4o": {"input": 2, "output": 8}}}))
    assert resolve_cost(config("openai", "gpt-4o")) == CostConfig(input=2, output=8)
    install_override(table({"openai": {"gpt-4o": {"input": 1, "output": 4}}}))
    assert resolve_cost(config("openai", "gpt-4o")) == CostConfig(input=1, output=4)


def test_genai_prices_can_be_left_out_and_is_cleared_with_the_snapshot() -> None:
    changes = enable_bundled(genai_prices=False)
    assert len(changes) == len(PriceTable.bundled())
    assert resolve_cost(config("openai", "gpt-4o")) is None
    assert resolve_cost(config("anthropic", "claude-sonnet-5")) is not None
    enable_bundled()
    assert resolve_cost(config("openai", "gpt-4o")) is not None
    clear_bundled()
    assert not is_bundled_enabled() and resolve_cost(config("openai", "gpt-4o")) is None


def test_the_installed_table_is_read_once_and_every_entry_is_read_by_a_lookup() -> None:
    read = genai_prices()
    assert read is genai_prices()
    assert len(read.table) > 300
    assert inert_entries(read.table) == []
    assert all(price_key(provider) == provider for provider in read.table.providers())
    assert read.at == datetime.datetime.now(tz=datetime.UTC).date()


def model(id: str, prices: ModelPrice | list[ConditionalPrice], **kwargs: object) -> ModelInfo:
    return ModelInfo(id=id, match=kwargs.pop("match", ClauseEquals(equals=id)), prices=prices)  # type: ignore[arg-type]


def provider(id: str, *models: ModelInfo) -> Provider:
    return Provider(
        id=id,
        name=id,
        api_pattern="",
        pricing_urls=["https://vendor.example/pricing"],
        models=list(models),
    )


def test_rates_tiers_and_exact_aliases_map_and_other_providers_are_left_out() -> None:
    tiered = model(
        "big",
        ModelPrice(
            input_mtok=TieredPrices(
                base=Decimal("3"), tiers=[Tier(start=200_000, price=Decimal("6"))]
            ),
            output_mtok=Decimal("15"),
            cache_read_mtok=TieredPrices(
                base=Decimal("0.3"), tiers=[Tier(start=100_000, price=Decimal("0.5"))]
            ),
            cache_write_1h_mtok=Decimal("6"),  # ignored: 5-minute breakpoints only
            web_searches_kcount=Decimal("10"),  # ignored: no server-side search is sent
        ),
        match=ClauseOr(
            or_=[
                ClauseEquals(equals="big"),
                ClauseEquals(equals="big-2026-01-01"),
                ClauseStartsWith(starts_with="big-"),
            ]
        ),
    )
    read = map_genai_prices(
        [provider("x-ai", tiered), provider("someone-else", model("m", ModelPrice()))],
        at=DAY,
        version="9.9",
    )
    expected = CostConfig(
        input=3,
        output=15,
        cache_read=0.3,
        tiers=(
            ContextTier(above_prompt_tokens=100_000, input=3, output=15, cache_read=0.5),
            ContextTier(above_prompt_tokens=200_000, input=6, output=15, cache_read=0.5),
        ),
    )
    assert sorted(read.table) == [("xai", "big"), ("xai", "big-2026-01-01")]
    assert read.table.cost("xai", "big") == expected
    entry = read.table.entry("xai", "big-2026-01-01")
    assert entry is not None and entry.cost == expected
    assert entry.source == "https://vendor.example/pricing"
    assert entry.note == "from genai-prices 9.9"
    assert read.skipped == () and read.version == "9.9" and read.at == DAY


def test_the_price_in_force_on_the_day_is_taken() -> None:
    dated = model(
        "dated",
        [
            ConditionalPrice(prices=ModelPrice(input_mtok=Decimal("1"), output_mtok=Decimal("2"))),
            ConditionalPrice(
                constraint=StartDateConstraint(start_date=datetime.date(2026, 9, 1)),
                prices=ModelPrice(input_mtok=Decimal("0.5"), output_mtok=Decimal("1")),
            ),
        ],
    )
    before = map_genai_prices([provider("openai", dated)], at=datetime.date(2026, 8, 1), version="")
    after = map_genai_prices([provider("openai", dated)], at=DAY, version="")
    assert before.table.cost("openai", "dated") == CostConfig(input=1, output=2)
    assert after.table.cost("openai", "dated") == CostConfig(input=0.5, output=1)


def test_what_a_cost_config_cannot_express_is_skipped_with_why() -> None:
    night = datetime.time(1, 0, tzinfo=datetime.UTC)
    morning = datetime.time(4, 0, tzinfo=datetime.UTC)
    models = [
        model(
            "night-discount",
            [
                ConditionalPrice(
                    prices=ModelPrice(input_mtok=Decimal("1"), output_mtok=Decimal("2"))
                ),
                ConditionalPrice(
                    constraint=TimeOfDateConstraint(start_time=night, end_time=morning),
                    prices=ModelPrice(input_mtok=Decimal("0.5"), output_mtok=Decimal("1")),
                ),
            ],
        ),
        model(
            "per-request",
            ModelPrice(
                input_mtok=Decimal("1"), output_mtok=Decimal("2"), requests_kcount=Decimal("5")
            ),
        ),
        model(
            "free-cache",
            ModelPrice(
                input_mtok=Decimal("1"), output_mtok=Decimal("2"), cache_read_mtok=Decimal("0")
            ),
        ),
        model("embedding", ModelPrice(input_mtok=Decimal("0.1"))),
        model("absurd", ModelPrice(input_mtok=Decimal("1"), output_mtok=Decimal("1e308"))),
        model(
            "zero-tier",
            ModelPrice(
                input_mtok=TieredPrices(
                    base=Decimal("1"), tiers=[Tier(start=0, price=Decimal("2"))]
                ),
                output_mtok=Decimal("2"),
            ),
        ),
        model(
            "fine",
            ModelPrice(
                input_mtok=Decimal("0"), output_mtok=Decimal("0"), cache_read_mtok=Decimal("0")
            ),
        ),
    ]
    read = map_genai_prices([provider("google", *models)], at=DAY, version="")
    assert {s.model: s.reason for s in read.skipped} == {
        "night-discount": "its price changes with the time of day",
        "per-request": "a `requests_kcount` price, which a CostConfig cannot express",
        "free-cache": "a free cache_read rate (0 here bills at the input rate, 1)",
        "embedding": "no input or output rate",
        "absurd": "`output` is 1e+308 USD per million tokens, above the plausible 10000: "
        "refused as a data error",
        "zero-tier": "a tier starts at 0 prompt tokens",
    }
    assert sorted(read.table) == [("google", "fine")]
    assert all(s.provider == "google" for s in read.skipped)


def test_a_provider_without_a_pricing_page_names_genai_prices() -> None:
    bare = Provider(
        id="openai",
        name="o",
        api_pattern="",
        models=[model("m", ModelPrice(input_mtok=Decimal("1"), output_mtok=Decimal("1")))],
    )
    entry = map_genai_prices([bare], at=DAY, version="1").table.entry("openai", "m")
    assert entry is not None and entry.source == GENAI_PRICES_URL
