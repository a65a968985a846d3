"""Live prices through a cache file: used offline when fresh, as a fallback when stale, and
every unusable cache reported."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest
import respx
from pricing_helpers import config

from yoagent.core import CostConfig, resolve_cost
from yoagent.pricing import (
    MODELS_DEV,
    MODELS_DEV_URL,
    CacheOptions,
    PriceSource,
    enable_live_cached,
    fetch_cached,
)

DOC = {"anthropic": {"models": {"claude-sonnet-5": {"cost": {"input": 2.2, "output": 11}}}}}
FETCHED = CostConfig(input=2.2, output=11.0)
BUNDLED = CostConfig(input=2.0, output=10.0, cache_read=0.2, cache_write=2.5)
SONNET = config("anthropic", "claude-sonnet-5")
DAY = 24 * 3600.0


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


async def fill_cache(path: Path, source: PriceSource = MODELS_DEV) -> None:
    with respx.mock(assert_all_mocked=True) as router:
        router.get(source.url).mock(return_value=httpx.Response(200, json=DOC))
        cached = await fetch_cached(path, source)
    assert cached.origin.kind == "fetched" and cached.origin.cache_write_error is None


async def test_a_fetch_writes_the_cache_and_a_fresh_cache_is_used_offline(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "prices.json"
    await fill_cache(path)
    written = json.loads(path.read_text())
    assert written["yoagent_price_cache"] == 1 and written["source"] == MODELS_DEV_URL
    age(path, 3600)
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        route = router.route()
        live = await enable_live_cached(path)
    assert route.call_count == 0  # no request at all
    assert (
        live.origin.kind == "cache"
        and live.origin.age is not None
        and 3500 < live.origin.age < 4000
    )
    assert str(live.origin) == "a cached copy of https://models.dev/api.json, 60 min old"
    assert resolve_cost(SONNET) == FETCHED


async def test_an_expired_cache_is_refetched(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    await fill_cache(path)
    age(path, 2 * DAY)
    newer = {"anthropic": {"models": {"claude-sonnet-5": {"cost": {"input": 3, "output": 15}}}}}
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=newer))
        live = await enable_live_cached(path)
    assert route.call_count == 1 and live.origin.kind == "fetched"
    assert resolve_cost(SONNET) == CostConfig(input=3, output=15)
    assert time.time() - path.stat().st_mtime < 60


async def test_a_failed_fetch_uses_a_stale_cache_within_max_stale(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    await fill_cache(path)
    age(path, 3 * DAY)
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(side_effect=httpx.ConnectError("offline"))
        live = await enable_live_cached(path)
    assert live.origin.kind == "stale_cache" and not live.fell_back
    assert str(live.origin).startswith(
        "an expired cached copy of https://models.dev/api.json, 3 days old, because the fetch "
        "failed: GET https://models.dev/api.json: ConnectError: offline"
    )
    assert resolve_cost(SONNET) == FETCHED


async def test_a_cache_past_max_stale_falls_back_to_the_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    await fill_cache(path)
    age(path, 8 * DAY)
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(500))
        live = await enable_live_cached(path)
    assert live.fell_back and "HTTP 500" in str(live.origin)
    assert resolve_cost(SONNET) == BUNDLED


async def test_a_cache_of_unknown_age_is_stale_and_only_infinite_max_stale_takes_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "prices.json"
    await fill_cache(path)
    future = time.time() + DAY
    os.utime(path, (future, future))
    options = CacheOptions(max_stale=float("inf"))
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(side_effect=httpx.ConnectError("offline"))
        cached = await fetch_cached(path, options=options)
        assert route.call_count == 1  # never fresh
        assert cached.origin.kind == "stale_cache" and cached.origin.age is None
        assert "of unknown age" in str(cached.origin)
        cached = await fetch_cached(path)
    assert cached.origin.kind == "bundled"


@pytest.mark.parametrize(
    ("content", "kind", "detail"),
    [
        ("{not json", "invalid", "not valid JSON"),
        ('{"prices": {}}', "invalid", "not a yoagent price cache"),
        (None, "source_mismatch", "it caches 'https://other.example/api.json'"),
        (
            '{"yoagent_price_cache": 1, "source_sha256": "SHA", "prices": {"schema": 9}}',
            "invalid",
            "schema is 9",
        ),
    ],
)
async def test_an_unusable_cache_is_reported_and_treated_as_absent(
    tmp_path: Path, content: str | None, kind: str, detail: str
) -> None:
    path = tmp_path / "prices.json"
    if content is None:
        await fill_cache(path, PriceSource.models_dev("https://other.example/api.json"))
    else:
        from hashlib import sha256

        path.write_text(content.replace("SHA", sha256(MODELS_DEV_URL.encode()).hexdigest()))
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=DOC))
        live = await enable_live_cached(path)
    assert route.call_count == 1 and live.origin.kind == "fetched"
    problem = live.cache_problem
    assert problem is not None and problem.kind == kind and detail in problem.detail
    assert str(problem).startswith(f"price cache {path} {kind.replace('_', ' ')}: ")


async def test_a_cache_that_cannot_be_written_is_reported_and_the_fetch_still_used(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=DOC))
        live = await enable_live_cached(blocker / "prices.json")
    assert live.origin.kind == "fetched" and live.origin.cache_write_error is not None
    assert "cannot write the cache" in str(live.origin)
    assert resolve_cost(SONNET) == FETCHED


async def test_the_cache_keeps_no_query_string(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    source = PriceSource.models_dev("https://mirror.example/api.json?token=s3cret")
    await fill_cache(path, source)
    assert "s3cret" not in path.read_text()
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        route = router.route()
        cached = await fetch_cached(path, source)
    assert route.call_count == 0 and cached.origin.kind == "cache"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_age": -1.0}, "CacheOptions.max_age must be 0 or more seconds"),
        ({"max_stale": float("nan")}, "CacheOptions.max_stale must be 0 or more seconds"),
        ({"timeout": 0.0}, "timeout must be a positive number of seconds"),
    ],
)
def test_cache_options_refuse_impossible_durations(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CacheOptions(**options)
