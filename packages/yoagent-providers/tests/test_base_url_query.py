"""A base URL with a query (a gateway's key or version: ``…/v1?gw-key=…``) keeps it as
the request's query on every protocol; the endpoint's path went inside the query before
(``…/v1?gw-key=k1/chat/completions``)."""

from __future__ import annotations

import httpx
import pytest
import respx
from bedrock_fixtures import SECRET_KEY, bedrock_config, fixed_env
from provider_helpers import PROTOCOLS, stream_config
from test_bedrock_auth import botocore_authorization

from yoagent.core import ApiProtocol, ProviderError
from yoagent.providers import BedrockProvider, models
from yoagent.providers._azure import v1_base_url


@pytest.mark.parametrize("api", list(PROTOCOLS), ids=lambda api: api.value)
async def test_the_base_url_s_query_stays_the_request_s_query(api: ApiProtocol) -> None:
    protocol = PROTOCOLS[api]
    expected = httpx.URL(protocol.url())
    config = stream_config(protocol.model(base_url=f" {protocol.base_url}/?gw-key=k1#part "))
    async with protocol.provider(config.model) as provider, respx.mock() as mock:
        route = mock.route().mock(return_value=httpx.Response(500, json={"error": "no"}))
        with pytest.raises(ProviderError):
            await provider.stream(config, lambda _: None)
    sent = route.calls.last.request.url
    assert (sent.scheme, sent.host, sent.path) == (expected.scheme, expected.host, expected.path)
    own = list(expected.params.multi_items())  # Gemini's and Vertex's alt=sse, first
    assert list(sent.params.multi_items()) == [*own, ("gw-key", "k1")]
    assert sent.fragment == ""


async def test_a_signed_bedrock_request_s_query_is_signed_as_botocore_signs_it() -> None:
    base = PROTOCOLS[ApiProtocol.BEDROCK_CONVERSE_STREAM].base_url
    config = stream_config(bedrock_config(base_url=f"{base}?b=2&a=1&a=0"))  # access:secret
    provider = BedrockProvider(config.model, env=fixed_env(), clock=lambda: 1_440_938_160.0)
    async with provider, respx.mock() as mock:
        route = mock.route().mock(return_value=httpx.Response(500, json={"message": "no"}))
        with pytest.raises(ProviderError):
            await provider.stream(config, lambda _: None)
    request = route.calls.last.request
    assert request.url.path.endswith("/converse-stream")
    assert request.url.query == b"b=2&a=1&a=0"  # sent as given; signed in canonical order
    assert botocore_authorization(request, SECRET_KEY, None) == request.headers["authorization"]


def test_an_azure_endpoint_with_a_query_gets_its_v1_path_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AZURE_OPENAI_RESOURCE", "AZURE_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://contoso.openai.azure.com/?gw=1")
    assert models.azure("dep").base_url == "https://contoso.openai.azure.com/openai/v1?gw=1"
    assert v1_base_url("https://h.test/openai/v1/?gw=1") == "https://h.test/openai/v1?gw=1"
