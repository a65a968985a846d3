"""A NETWORK error names the URL it could not reach, shown safely (no credentials, no query,
no key-like path segment), for every protocol."""

from __future__ import annotations

import httpx
import pytest
import respx
from bedrock_fixtures import fixed_env
from provider_helpers import PROTOCOLS, stream_config

from yoagent.core import ApiProtocol, ErrorKind, ProviderError
from yoagent.core.support import display_url
from yoagent.providers import BedrockProvider
from yoagent.providers._http import HttpProvider

PARAMS = [pytest.param(api, id=api.value) for api in PROTOCOLS]


def provider_for(api: ApiProtocol, **overrides: object) -> tuple[HttpProvider, object]:
    protocol = PROTOCOLS[api]
    model = protocol.model(**overrides)
    if api is ApiProtocol.BEDROCK_CONVERSE_STREAM:
        return BedrockProvider(model, env=fixed_env()), model
    return protocol.provider(model), model


@pytest.mark.parametrize("api", PARAMS)
@pytest.mark.parametrize(
    ("failure", "what"),
    [
        (httpx.ConnectError("All connection attempts failed"), "could not connect"),
        (httpx.ConnectTimeout("timed out"), "connecting timed out"),
        (httpx.ReadTimeout("read timed out"), "the stream stalled"),
        (httpx.RemoteProtocolError("peer closed"), "the connection broke mid-response"),
    ],
)
async def test_a_network_error_names_the_url_it_could_not_reach(
    api: ApiProtocol, failure: Exception, what: str
) -> None:
    provider, model = provider_for(api)
    async with provider, respx.mock(assert_all_called=True) as mock:
        mock.route().mock(side_effect=failure)
        with pytest.raises(ProviderError) as caught:
            await provider.stream(stream_config(model), lambda _: None)  # type: ignore[attr-defined,arg-type]
    error = caught.value
    assert error.kind is ErrorKind.NETWORK
    shown = display_url(PROTOCOLS[api].url())
    assert error.message.startswith(f"POST {shown}: {what}"), error.message


async def test_the_url_is_shown_without_credentials_query_or_a_key_in_its_path() -> None:
    base = "http://user:pa55word@gw.test/sk-ant-api03-abcdefghijklmnop0123456789/v1"
    provider, model = provider_for(ApiProtocol.OPENAI_COMPLETIONS, base_url=base)
    async with provider, respx.mock(assert_all_called=True) as mock:
        mock.route().mock(side_effect=httpx.ConnectError("refused"))
        with pytest.raises(ProviderError) as caught:
            await provider.stream(stream_config(model), lambda _: None)  # type: ignore[attr-defined,arg-type]
    message = caught.value.message
    assert (
        message == "POST http://gw.test/[redacted]/v1/chat/completions: could not connect: refused"
    )
    assert "pa55word" not in message and "user" not in message and "sk-ant" not in message
