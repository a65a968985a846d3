"""What fetch_cached hands back besides the table: the snapshot itself when nothing else
would do, the skipped models and ignored fields of a fetch or a cache, a cache's comment,
a cache written into folders that do not exist yet, and how an origin reads at each age."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import httpx
import pytest
import respx
from pricing_helpers import MODELS_DEV_WITH_A_SKIP

from yoagent.pricing import (
    MODELS_DEV,
    MODELS_DEV_URL,
    CachedPrices,
    PriceFetchError,
    PriceFileError,
    PriceOrigin,
    PriceSource,
    PriceTable,
    fetch_cached,
)

pytestmark = pytest.mark.anyio

DOC = MODELS_DEV_WITH_A_SKIP


async def fetch_through(path: Path, *, status: int = 200) -> CachedPrices:
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(status, json=DOC))
        return await fetch_cached(path, MODELS_DEV)


async def test_a_fetch_reports_what_it_skipped_and_names_the_source(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "prices.json"  # folders made as needed
    cached = await fetch_through(path)
    assert cached.origin.kind == "fetched" and cached.origin.url == MODELS_DEV_URL
    assert [(s.model, s.reason) for s in cached.skipped] == [
        ("odd", "unknown cost key `per_request`")
    ]
    assert path.is_file()


async def test_with_no_cache_a_failed_fetch_hands_back_the_snapshot(tmp_path: Path) -> None:
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(503))
        cached = await fetch_cached(tmp_path / "none.json", MODELS_DEV)
    assert cached.origin.kind == "bundled" and cached.origin.fell_back
    assert cached.origin.url == MODELS_DEV_URL
    assert cached.table == PriceTable.bundled()


def write_cache(path: Path, prices: dict[str, object], url: str = MODELS_DEV_URL) -> None:
    document = {
        "yoagent_price_cache": 1,
        "source": url,
        "source_sha256": hashlib.sha256(url.encode()).hexdigest(),
        "prices": prices,
    }
    path.write_text(json.dumps(document))


HAND_EDITED = {
    "schema": 1,
    "comment": "edited by hand",
    "providers": {"anthropic": {"m": {"input": 1, "output": 2, "cache_reed": 1}}},
}


async def test_a_fresh_cache_keeps_its_comment_and_reports_ignored_fields(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    write_cache(path, HAND_EDITED)
    with respx.mock(assert_all_mocked=True, assert_all_called=False):
        cached = await fetch_cached(path, MODELS_DEV)
    assert cached.origin.kind == "cache"
    assert cached.table.comment == "edited by hand"
    assert cached.ignored_fields == ("providers.anthropic.m.cache_reed",)
    assert cached.cache_problem is None


async def test_a_stale_cache_used_after_a_failed_fetch_reports_ignored_fields(
    tmp_path: Path,
) -> None:
    path = tmp_path / "prices.json"
    write_cache(path, HAND_EDITED)
    then = time.time() - 2 * 24 * 3600
    os.utime(path, (then, then))
    cached = await fetch_through(path, status=500)
    assert cached.origin.kind == "stale_cache"
    assert cached.ignored_fields == ("providers.anthropic.m.cache_reed",)


async def test_an_implausible_cache_is_invalid_and_named_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    write_cache(path, {"schema": 1, "providers": {"anthropic": {"m": {"input": 1e9, "output": 2}}}})
    cached = await fetch_through(path)
    problem = cached.cache_problem
    assert problem is not None and problem.kind == "invalid"
    assert problem.detail.startswith(f"invalid price data from {path}: anthropic/m: input is 1e+09")


async def test_a_cache_with_a_bad_entry_is_invalid_and_named_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    write_cache(path, {"schema": 1, "providers": {"anthropic": {"m": {"input": -1, "output": 2}}}})
    cached = await fetch_through(path)
    problem = cached.cache_problem
    assert problem is not None and problem.kind == "invalid"
    assert problem.detail.startswith(f"invalid price data from {path}: ")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (119.0, "119 s"),
        (120.0, "2 min"),
        (7199.0, "120 min"),
        (7200.0, "2 h"),
        (12_600.0, "4 h"),  # 3.5 h, rounded half to even
        (172_799.0, "48 h"),
        (172_800.0, "2 days"),
        (302_400.0, "4 days"),  # 3.5 days
        (864_000.0, "10 days"),
    ],
)
def test_a_cache_age_reads_in_the_unit_that_fits(seconds: float, shown: str) -> None:
    origin = PriceOrigin(kind="cache", url="u", age=seconds)
    assert str(origin) == f"a cached copy of u, {shown} old"


def test_origins_read_as_sentences() -> None:
    error = PriceFetchError("https://u.test", "HTTP 503", status=503)
    unknown = PriceOrigin(kind="stale_cache", url="u", age=None, fetch_error=error)
    assert str(unknown) == (
        "an expired cached copy of u, of unknown age, because the fetch failed: "
        "GET https://u.test: HTTP 503"
    )
    unwritten = PriceOrigin(
        kind="fetched", url="u", cache_write_error=PriceFileError("/c.json", "read-only")
    )
    assert str(unwritten) == (
        "fetched from u (the cache was not written: price file /c.json: read-only)"
    )


async def test_a_cache_for_another_source_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    write_cache(path, HAND_EDITED, url="https://other.test/api.json")
    source = PriceSource.models_dev()
    with respx.mock(assert_all_mocked=True) as router:
        router.get(source.url).mock(return_value=httpx.Response(200, json=DOC))
        cached = await fetch_cached(path, source)
    assert cached.cache_problem is not None and cached.cache_problem.kind == "source_mismatch"
