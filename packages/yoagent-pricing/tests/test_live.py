"""Live prices: fetched only when asked, installed over the snapshot, and a failed or slow
fetch falls back to the snapshot and says why."""

from __future__ import annotations

import gzip
import json
import logging
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import httpx
import pytest
import respx
from anyio.abc import SocketAttribute
from pricing_helpers import FIXTURES, config

from yoagent.core import CostConfig, resolve_cost
from yoagent.pricing import (
    MODELS_DEV_URL,
    PriceFetchError,
    PriceSource,
    enable_live,
    fetch_prices,
    is_bundled_enabled,
)

MODELS_DEV_DOC = {
    "anthropic": {
        "models": {
            "claude-sonnet-5": {"cost": {"input": 2.2, "output": 11, "cache_read": 0.22}},
            "claude-brand-new": {"cost": {"input": 7, "output": 35}},
        }
    }
}
SONNET = config("anthropic", "claude-sonnet-5")
HAIKU = config("anthropic", "claude-haiku-4-5")
HAIKU_BUNDLED = CostConfig(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25)


async def test_enable_live_installs_the_fetched_table_over_the_snapshot() -> None:
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(
            return_value=httpx.Response(200, json=MODELS_DEV_DOC)
        )
        live = await enable_live()
    assert route.call_count == 1
    assert not live.fell_back and live.origin.kind == "fetched"
    assert str(live.origin) == "fetched from https://models.dev/api.json"
    assert resolve_cost(SONNET) == CostConfig(input=2.2, output=11, cache_read=0.22)
    assert resolve_cost(HAIKU) == HAIKU_BUNDLED  # not listed by the fetch: the snapshot's
    assert resolve_cost(config("anthropic", "claude-brand-new")) == CostConfig(input=7, output=35)
    assert {c.model for c in live.changes} >= {
        "claude-sonnet-5",
        "claude-brand-new",
        "claude-haiku-4-5",
    }


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (httpx.Response(503, text="down"), "HTTP 503"),
        (httpx.Response(200, text="<html>not json</html>"), "not usable price data"),
        (httpx.Response(200, json={"acme": {"models": {}}}), "no model carried a usable price"),
        (httpx.ConnectError("connection refused"), "ConnectError: connection refused"),
        (httpx.ReadTimeout("read timed out"), "timed out after 10 s"),
    ],
)
async def test_a_failed_fetch_falls_back_to_the_snapshot_and_says_why(
    response: httpx.Response | Exception, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL)
        if isinstance(response, Exception):
            route.mock(side_effect=response)
        else:
            route.mock(return_value=response)
        with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
            live = await enable_live()
    assert live.fell_back and live.origin.kind == "bundled"
    assert live.origin.fetch_error is not None and reason in str(live.origin.fetch_error)
    assert str(live.origin).startswith(
        "the bundled snapshot, because the fetch failed: GET https://models.dev/api.json: "
    )
    assert "falling back to the bundled snapshot" in caplog.text and reason in caplog.text
    assert is_bundled_enabled()
    assert resolve_cost(SONNET) == CostConfig(
        input=2.0, output=10.0, cache_read=0.2, cache_write=2.5
    )


@asynccontextmanager
async def silent_server() -> AsyncIterator[str]:
    """A loopback HTTP server that accepts connections and never answers."""

    async def hold(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    async with anyio.create_task_group() as group:
        group.start_soon(listener.serve, hold)
        try:
            yield f"http://127.0.0.1:{port}/api.json"
        finally:
            group.cancel_scope.cancel()


async def test_a_fetch_that_outlasts_its_timeout_falls_back() -> None:
    async with silent_server() as url:
        started = time.monotonic()
        live = await enable_live(PriceSource.models_dev(url), timeout=0.3)
        elapsed = time.monotonic() - started
    assert live.fell_back
    error = live.origin.fetch_error
    assert error is not None and error.timed_out
    assert str(error) == f"GET {url}: timed out after 0.3 s"
    assert elapsed < 5  # generous: the machine is shared
    assert resolve_cost(HAIKU) == HAIKU_BUNDLED


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:99999/api.json", "Port out of range"),
        ("ftp://prices.example/api.json", "not an http or https URL"),
        ("http:///api.json", "no host"),
    ],
)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_url_no_request_can_go_to_falls_back_with_the_reason(
    url: str, reason: str, backend: str
) -> None:
    # An out-of-range port escaped enable_live as an ExceptionGroup([OverflowError]).
    live = anyio.run(enable_live, PriceSource.models_dev(url), backend=backend)
    assert live.fell_back
    assert live.origin.fetch_error is not None
    assert reason in live.origin.fetch_error.reason
    assert str(live.origin.fetch_error).startswith(f"GET {url}: ")
    assert resolve_cost(HAIKU) == HAIKU_BUNDLED


async def test_a_price_file_source_is_read_in_the_file_format() -> None:
    url = "https://prices.example/yoagent.json"
    body = {
        "schema": 1,
        "providers": {"anthropic": {"claude-sonnet-5": {"input": 1, "output": 2, "extra": 1}}},
    }
    with respx.mock(assert_all_mocked=True) as router:
        router.get(url).mock(return_value=httpx.Response(200, json=body))
        report = await fetch_prices(PriceSource.price_file(url))
    assert report.table.cost("anthropic", "claude-sonnet-5") == CostConfig(input=1, output=2)
    assert report.ignored_fields == ("providers.anthropic.claude-sonnet-5.extra",)


async def test_fetch_errors_never_show_a_query_string_or_password() -> None:
    url = "https://user:hunter2@prices.example/api.json?token=s3cret"
    with respx.mock(assert_all_mocked=True) as router:
        router.get(url).mock(side_effect=httpx.ConnectError(f"cannot reach {url}"))
        with pytest.raises(PriceFetchError) as caught:
            await fetch_prices(PriceSource.models_dev(url))
    text = str(caught.value)
    assert "s3cret" not in text and "hunter2" not in text
    assert text.startswith("GET https://prices.example/api.json?…: ConnectError")
    assert "s3cret" not in repr(PriceSource.models_dev(url))


async def test_a_body_over_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from yoagent.pricing import _sources

    monkeypatch.setattr(_sources, "MAX_BODY_BYTES", 100)
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, content=b"x" * 101))
        with pytest.raises(PriceFetchError, match="the body is over 100 bytes"):
            await fetch_prices()


class OneChunk(httpx.AsyncByteStream):
    """A body served as is (respx decodes an ``httpx.ByteStream`` ahead of the client)."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.body


async def test_a_compressed_body_is_refused_at_the_limit_without_inflating_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # httpx inflates a whole network chunk before the size check: 64 KiB of gzip took
    # 64 MiB before the 1 MiB limit refused it.
    from yoagent.pricing import _sources

    monkeypatch.setattr(_sources, "MAX_BODY_BYTES", 1024 * 1024)
    bomb = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(
            return_value=httpx.Response(200, headers=headers, stream=OneChunk(bomb))
        )
        tracemalloc.start()
        try:
            with pytest.raises(PriceFetchError, match="the body is over 1048576 bytes"):
                await fetch_prices()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * 1024 * 1024


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw deflate", "identity"])
async def test_a_compressed_body_is_read_like_a_plain_one(encoding: str) -> None:
    plain = json.dumps(MODELS_DEV_DOC).encode()
    packed = {"gzip": gzip.compress, "deflate": zlib.compress, "identity": bytes}.get(
        encoding, raw_deflate
    )
    encoding = encoding.removeprefix("raw ")
    headers = {"content-type": "application/json", "content-encoding": encoding}
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(
            return_value=httpx.Response(200, headers=headers, content=packed(plain))
        )
        report = await fetch_prices()
    assert report.table.cost("anthropic", "claude-sonnet-5") == CostConfig(
        input=2.2, output=11, cache_read=0.22
    )
    assert route.calls.last.request.headers["accept-encoding"] == "gzip, deflate"


async def test_a_body_in_an_encoding_not_asked_for_is_refused() -> None:
    headers = {"content-type": "application/json", "content-encoding": "br"}
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(
            return_value=httpx.Response(200, headers=headers, content=b"x")
        )
        with pytest.raises(PriceFetchError, match="sent content-encoding 'br'"):
            await fetch_prices()


async def test_the_real_models_dev_shape_maps() -> None:
    body = (FIXTURES / "models_dev_small.json").read_bytes()
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, content=body))
        live = await enable_live()
    assert not live.fell_back
    assert len(live.skipped) == 8
    assert json.loads(body)["alibaba"]["models"]["qwen-flash"]["cost"]["input"] == 0.05
    assert resolve_cost(config("qwen", "qwen-flash")) == CostConfig(input=0.05, output=0.4)


@pytest.mark.parametrize("seconds", [0, -1.0, float("nan")])
async def test_a_timeout_that_is_not_positive_is_a_misuse_said_at_once(seconds: float) -> None:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        route = router.route()
        with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
            await enable_live(timeout=seconds)
    assert route.call_count == 0 and not is_bundled_enabled()
