"""The one GET a fetch makes, against respx: what it asks for and says it is, a redirect
followed, the status of a refusal kept, and gzip bodies (``x-gzip`` too) of every size
read whole."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest
import respx

from yoagent.pricing import MODELS_DEV_URL, PriceFetchError, PriceSource, fetch_prices

pytestmark = pytest.mark.anyio

DOC = {"acme": {"models": {"m": {"cost": {"input": 1, "output": 2}}}}}


async def test_the_request_asks_for_json_and_names_its_client() -> None:
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(200, json=DOC))
        await fetch_prices()
    headers = route.calls.last.request.headers
    assert headers["accept"] == "application/json"
    assert headers["user-agent"] == "yoagent-pricing"
    assert route.calls.last.request.method == "GET"


async def test_a_redirect_is_followed() -> None:
    moved = "https://mirror.example/api.json"
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(
            return_value=httpx.Response(301, headers={"location": moved})
        )
        router.get(moved).mock(return_value=httpx.Response(200, json=DOC))
        report = await fetch_prices()
    assert list(report.table) == [("acme", "m")]


async def test_a_refusal_keeps_its_status() -> None:
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(return_value=httpx.Response(429))
        with pytest.raises(PriceFetchError) as raised:
            await fetch_prices()
    assert (raised.value.status, raised.value.reason) == (429, "HTTP 429")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://prices.example:0/api.json", "not a usable URL (port 0)"),
        ("http:///api.json", "the URL has no host"),
        ("file:///etc/prices.json", "not an http or https URL"),
    ],
)
async def test_a_url_no_request_can_go_to_is_refused_in_words(url: str, reason: str) -> None:
    with pytest.raises(PriceFetchError) as raised:
        await fetch_prices(PriceSource.models_dev(url))
    assert raised.value.reason == reason


async def test_port_one_is_a_usable_port() -> None:
    url = "http://prices.example:1/api.json"
    with respx.mock(assert_all_mocked=True) as router:
        router.get(url).mock(return_value=httpx.Response(200, json=DOC))
        report = await fetch_prices(PriceSource.models_dev(url))
    assert list(report.table) == [("acme", "m")]


def padded(size: int) -> bytes:
    """The document, padded with spaces to ``size`` bytes (still the same JSON)."""
    body = json.dumps(DOC).encode()
    return body + b" " * (size - len(body))


@pytest.mark.parametrize("size", [64 * 1024, 64 * 1024 + 1, 300 * 1024])
@pytest.mark.parametrize("encoding", ["gzip", "x-gzip"])
async def test_a_compressed_body_of_any_size_is_read_whole(size: int, encoding: str) -> None:
    headers = {"content-encoding": encoding}
    with respx.mock(assert_all_mocked=True) as router:
        router.get(MODELS_DEV_URL).mock(
            return_value=httpx.Response(200, headers=headers, content=gzip.compress(padded(size)))
        )
        report = await fetch_prices()
    assert list(report.table) == [("acme", "m")]
