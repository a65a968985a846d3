"""What enable_live and enable_live_cached hand back besides installing: the source's
display URL when they fell back, the fields a price file had that the format ignores, the
models.dev models skipped, and the cache options they were given."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx
from pricing_helpers import MODELS_DEV_WITH_A_SKIP, config

from yoagent.core import resolve_cost
from yoagent.pricing import (
    MODELS_DEV,
    MODELS_DEV_URL,
    CacheOptions,
    PriceSource,
    enable_live,
    enable_live_cached,
)

pytestmark = pytest.mark.anyio

DOC = MODELS_DEV_WITH_A_SKIP
FILE = {
    "schema": 1,
    "providers": {"anthropic": {"claude-sonnet-5": {"input": 2, "output": 10, "cache_reed": 1}}},
}


async def test_a_failed_fetch_names_the_source_without_its_query() -> None:
    source = PriceSource.models_dev(MODELS_DEV_URL + "?key=secret")
    with respx.mock(assert_all_mocked=True) as router:
        router.get(source.url).mock(return_value=httpx.Response(503))
        live = await enable_live(source)
    assert live.fell_back and live.origin.url == MODELS_DEV_URL + "?…"
    # Fallen back, it prices from both offline layers: genai-prices lists this model.
    assert resolve_cost(config("openai", "babbage-002")) is not None


async def test_a_price_files_ignored_fields_are_reported() -> None:
    source = PriceSource.price_file("https://prices.example/p.json")
    with respx.mock(assert_all_mocked=True) as router:
        router.get(source.url).mock(return_value=httpx.Response(200, json=FILE))
        live = await enable_live(source)
    assert live.ignored_fields == ("providers.anthropic.claude-sonnet-5.cache_reed",)


async def test_through_a_cache_the_skipped_models_are_reported(tmp_path: Path) -> None:
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=DOC))
        live = await enable_live_cached(tmp_path / "c.json")
    assert [(s.model, s.reason) for s in live.skipped] == [
        ("odd", "unknown cost key `per_request`")
    ]


async def test_through_a_cache_a_price_files_ignored_fields_are_reported(tmp_path: Path) -> None:
    source = PriceSource.price_file("https://prices.example/p.json")
    with respx.mock(assert_all_mocked=True) as router:
        router.get(source.url).mock(return_value=httpx.Response(200, json=FILE))
        live = await enable_live_cached(tmp_path / "c.json", source)
    assert live.ignored_fields == ("providers.anthropic.claude-sonnet-5.cache_reed",)


async def test_the_cache_options_given_are_the_ones_used(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=DOC))
        await enable_live_cached(path)
        fresh = await enable_live_cached(path, MODELS_DEV)  # a day old at most: used
        again = await enable_live_cached(path, MODELS_DEV, CacheOptions(max_age=0))
    assert fresh.origin.kind == "cache"
    assert again.origin.kind == "fetched"
    assert route.call_count == 2
    assert json.loads(path.read_text())["yoagent_price_cache"] == 1
