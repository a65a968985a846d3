"""models.dev's document mapped to a table: what maps, and what is skipped and why."""

from __future__ import annotations

import pytest
from pricing_helpers import FIXTURES

from yoagent.core import ContextTier, CostConfig
from yoagent.pricing import MODELS_DEV_URL, PriceDataError, parse_models_dev

SMALL = (FIXTURES / "models_dev_small.json").read_text()


def test_flat_tiered_and_legacy_band_costs_map() -> None:
    report = parse_models_dev(SMALL)
    prices = report.table
    assert prices.cost("acme", "flat") == CostConfig(
        input=4, output=20, cache_read=0.2, cache_write=5
    )
    assert prices.cost("acme", "tiered") == CostConfig(
        input=5,
        output=30,
        cache_read=0.5,
        tiers=(ContextTier(above_prompt_tokens=272_000, input=10, output=45, cache_read=1),),
    )  # `tiers` wins over the older context_over_200k
    assert prices.cost("acme", "legacy-band") == CostConfig(
        input=1.25,
        output=10,
        tiers=(ContextTier(above_prompt_tokens=200_000, input=2.5, output=15),),
    )
    assert prices.cost("acme", "reasoning-as-output") == CostConfig(input=1, output=2)
    assert prices.cost("acme", "audio") == CostConfig(input=1, output=2)
    entry = prices.entry("acme", "flat")
    assert entry is not None and entry.source == MODELS_DEV_URL


def test_alibaba_is_priced_as_qwen() -> None:
    prices = parse_models_dev(SMALL).table
    assert prices.cost("qwen", "qwen-flash") == CostConfig(input=0.05, output=0.4)
    assert prices.providers() == ["acme", "qwen"]


def test_what_a_cost_config_cannot_express_is_skipped_with_why() -> None:
    skipped = {s.model: s.reason for s in parse_models_dev(SMALL).skipped}
    assert skipped == {
        "own-reasoning-rate": "a separate reasoning rate (3) differs from output (8)",
        "per-request": "unknown cost key `per_request`",
        "time-tier": "unsupported tier type 'time'",
        "no-cost": "models.dev lists no cost",
        "negative": "`input` is -1.0; rates must be finite and non-negative",
        "text-rate": "`input` is not a number: '1'",
        "no-output": "no `output` rate",
        "unsorted": (
            "CostConfig.tiers must ascend strictly by above_prompt_tokens, got [400000, 200000]"
        ),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "a models.dev document is a JSON object of providers"),
        ("{oops", "not valid JSON"),
        ('{"acme": {"models": {"x": {"cost": {"input": 1}}}}}', "no model carried a usable price"),
        ("{}", "no model carried a usable price"),
    ],
)
def test_a_document_nothing_maps_from_is_an_error(text: str, message: str) -> None:
    with pytest.raises(PriceDataError, match=message):
        parse_models_dev(text, source="https://mirror.example/api.json?token=secret")


def test_the_source_is_recorded_without_its_query() -> None:
    report = parse_models_dev(SMALL, source="https://mirror.example/api.json?token=secret")
    entry = report.table.entry("acme", "flat")
    assert entry is not None and entry.source == "https://mirror.example/api.json?…"
