"""An absurd rate never becomes an infinite cost: fetched tables refuse implausible rates,
and no cost a run reports is anything but a finite number of dollars (or unknown)."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
import respx
from pricing_helpers import config, table, text_reply

from yoagent.core import Agent, CostConfig, MockProvider, Usage, cost_of, resolve_cost
from yoagent.pricing import (
    MAX_PLAUSIBLE_RATE,
    MODELS_DEV_URL,
    CacheOptions,
    PriceDataError,
    PriceSource,
    enable_live,
    enable_live_cached,
    fetch_cached,
    install_fetched,
    install_override,
    parse_models_dev,
)

ABSURD = 1e308
SONNET_BUNDLED = CostConfig(input=2.0, output=10.0, cache_read=0.2, cache_write=2.5)


def test_the_bound_is_far_above_every_real_price_and_far_below_an_overflow() -> None:
    # The dearest list price yet is $600 per million output tokens (o1-pro); a turn of a
    # million tokens at the bound costs $10,000, a finite, readable figure.
    assert 600 * 10 <= MAX_PLAUSIBLE_RATE <= 100_000


async def test_a_live_models_dev_model_with_an_absurd_rate_is_skipped_with_the_bound() -> None:
    document = {
        "anthropic": {
            "models": {
                "claude-sonnet-5": {"cost": {"input": ABSURD, "output": ABSURD}},
                "claude-brand-new": {"cost": {"input": 7, "output": 35}},
            }
        }
    }
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=document))
        live = await enable_live()
    assert not live.fell_back
    skipped = {s.model: s.reason for s in live.skipped}
    assert skipped == {
        "claude-sonnet-5": "`input` is 1e+308 USD per million tokens, above the plausible "
        "10000: refused as a data error"
    }
    assert resolve_cost(config("anthropic", "claude-sonnet-5")) == SONNET_BUNDLED
    assert resolve_cost(config("anthropic", "claude-brand-new")) == CostConfig(input=7, output=35)


def test_a_context_tier_past_the_bound_is_skipped_too() -> None:
    document = {
        "acme": {
            "models": {
                "ok": {"cost": {"input": 1, "output": 2}},
                "tiered": {
                    "cost": {
                        "input": 1,
                        "output": 2,
                        "context_over_200k": {"input": 2, "output": 20_001},
                    }
                },
            }
        }
    }
    report = parse_models_dev(json.dumps(document))
    assert [s.model for s in report.skipped] == ["tiered"]
    assert "`output` is 20001 USD per million tokens" in report.skipped[0].reason


async def test_a_live_price_file_with_an_absurd_rate_falls_back_to_the_snapshot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = "https://prices.example/prices.json"
    body = json.dumps(
        {
            "schema": 1,
            "providers": {"anthropic": {"claude-sonnet-5": {"input": 1, "output": ABSURD}}},
        }
    )
    with respx.mock(assert_all_mocked=True) as router:
        router.get(url).mock(return_value=httpx.Response(200, text=body))
        with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
            live = await enable_live(PriceSource.price_file(url))
    assert live.fell_back
    assert "anthropic/claude-sonnet-5: output is 1e+308 USD per million tokens" in str(
        live.origin.fetch_error
    )
    assert resolve_cost(config("anthropic", "claude-sonnet-5")) == SONNET_BUNDLED


async def test_a_cached_table_with_an_absurd_rate_is_not_used(tmp_path: Path) -> None:
    url = "https://prices.example/prices.json"
    path = tmp_path / "prices-cache.json"
    good = {"schema": 1, "providers": {"anthropic": {"claude-sonnet-5": {"input": 1, "output": 3}}}}
    with respx.mock(assert_all_mocked=True) as router:
        router.get(url).mock(return_value=httpx.Response(200, json=good))
        await fetch_cached(path, PriceSource.price_file(url))  # writes the cache only
    cache = json.loads(path.read_text())
    cache["prices"]["providers"]["anthropic"]["claude-sonnet-5"]["output"] = ABSURD
    path.write_text(json.dumps(cache))
    with respx.mock(assert_all_mocked=True) as router:
        router.get(url).mock(return_value=httpx.Response(503))
        live = await enable_live_cached(path, PriceSource.price_file(url), CacheOptions(max_age=0))
    assert live.cache_problem is not None and live.cache_problem.kind == "invalid"
    assert "above the plausible 10000" in live.cache_problem.detail
    assert live.fell_back
    assert resolve_cost(config("anthropic", "claude-sonnet-5")) == SONNET_BUNDLED


def test_install_fetched_refuses_an_absurd_rate_naming_the_entry() -> None:
    absurd = table(
        {"anthropic": {"claude-sonnet-5": {"input": 1, "output": 2, "cache_read": ABSURD}}}
    )
    with pytest.raises(PriceDataError, match="anthropic/claude-sonnet-5: cache_read is 1e"):
        install_fetched(absurd)
    assert resolve_cost(config("anthropic", "claude-sonnet-5")) is None


def test_an_override_may_set_any_finite_rate_but_is_warned_about_it() -> None:
    report = install_override(
        table({"anthropic": {"claude-sonnet-5": {"input": 1, "output": 50_000}}})
    )
    assert report.warnings == (
        "anthropic/claude-sonnet-5: output is 50000 USD per million tokens, above the plausible "
        "10000 (a typo?)",
    )
    assert resolve_cost(config("anthropic", "claude-sonnet-5")) == CostConfig(
        input=1, output=50_000
    )


def test_cost_of_an_overflowing_request_is_unknown_never_infinite() -> None:
    huge = CostConfig(input=ABSURD, output=ABSURD)
    assert cost_of(Usage(input=1_000_000, output=1_000_000), huge) is None
    assert cost_of(Usage(input=1), huge) == pytest.approx(1e302)


async def test_a_run_whose_costs_overflow_reports_an_unknown_cost_not_infinity() -> None:
    # Each turn costs 1e308 dollars (finite); their sum is not.
    priced = replace(config("anthropic", "claude-sonnet-5"), cost=CostConfig(input=ABSURD))
    replies = [text_reply("a", Usage(input=1_000_000)), text_reply("b", Usage(input=1_000_000))]
    agent = Agent.from_provider(MockProvider(replies), priced)
    await agent.prompt("one")
    assert agent.last_run_stats.cost_usd == pytest.approx(ABSURD)
    await agent.prompt("two")
    assert agent.stats.cost_usd is None
    assert json.dumps({"cost": agent.stats.cost_usd}) == '{"cost": null}'
