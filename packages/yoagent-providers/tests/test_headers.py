"""ModelConfig.headers win over the provider's own headers, whatever their spelling."""

from __future__ import annotations

import httpx
import pytest
import respx
from provider_helpers import PROTOCOLS, stream_config

from yoagent.core import AnthropicCompat, ApiProtocol, ModelConfig, ProviderError

ENV_KEY = "sk-env-key-that-must-not-be-sent-0123456789"
USER_TOKEN = "Bearer user-gateway-token"


async def _sent_headers(api: ApiProtocol, model: ModelConfig) -> httpx.Headers:
    """The headers one request for ``model`` went out with (the server refuses it)."""
    protocol = PROTOCOLS[api]
    async with protocol.provider(model) as provider, respx.mock() as mock:
        route = mock.post(protocol.url()).mock(
            return_value=httpx.Response(401, json={"error": {"message": "no"}})
        )
        with pytest.raises(ProviderError):
            await provider.stream(stream_config(model), lambda d: None)  # type: ignore[attr-defined]
    return route.calls[0].request.headers


def _names(headers: httpx.Headers) -> list[str]:
    return [name.decode().lower() for name, _ in headers.raw]


@pytest.mark.parametrize("api", list(PROTOCOLS), ids=[a.value for a in PROTOCOLS])
async def test_a_user_header_spelled_in_another_case_replaces_ours_and_is_sent_once(
    api: ApiProtocol,
) -> None:
    protocol = PROTOCOLS[api]
    ours = await _sent_headers(api, protocol.model())
    accept = ours["accept"]
    sent = await _sent_headers(api, protocol.model(headers={"Accept": accept, "X-Trace": "t1"}))
    names = _names(sent)
    assert len(names) == len(set(names)), names  # no header twice
    assert sent.get_list("accept") == [accept]
    assert sent["x-trace"] == "t1"
    assert "Accept" in [name.decode() for name, _ in sent.raw]  # the user's spelling


@pytest.mark.parametrize(
    "api",
    [
        ApiProtocol.OPENAI_COMPLETIONS,
        ApiProtocol.OPENAI_RESPONSES,
        ApiProtocol.AZURE_OPENAI_RESPONSES,
        ApiProtocol.GOOGLE_VERTEX,
        ApiProtocol.BEDROCK_CONVERSE_STREAM,
    ],
    ids=lambda a: a.value,
)
async def test_a_users_authorization_header_is_sent_alone_without_the_configured_key(
    api: ApiProtocol,
) -> None:
    key = ENV_KEY if api is not ApiProtocol.BEDROCK_CONVERSE_STREAM else PROTOCOLS[api].api_key
    model = PROTOCOLS[api].model(api_key=key, headers={"Authorization": USER_TOKEN})
    sent = await _sent_headers(api, model)
    assert sent.get_list("authorization") == [USER_TOKEN]
    assert all(ENV_KEY not in value for _, value in sent.multi_items())


async def test_anthropic_bearer_auth_gives_way_to_a_users_authorization_header() -> None:
    api = ApiProtocol.ANTHROPIC_MESSAGES
    model = PROTOCOLS[api].model(
        api_key=ENV_KEY,
        compat=AnthropicCompat(bearer_auth=True),
        headers={"Authorization": USER_TOKEN},
    )
    sent = await _sent_headers(api, model)
    assert sent.get_list("authorization") == [USER_TOKEN]
    assert all(ENV_KEY not in value for _, value in sent.multi_items())


async def test_gemini_sends_its_key_beside_a_users_authorization_header() -> None:
    # The spec: an Authorization header does not replace x-goog-api-key.
    api = ApiProtocol.GOOGLE_GENERATIVE_AI
    sent = await _sent_headers(
        api, PROTOCOLS[api].model(api_key=ENV_KEY, headers={"Authorization": USER_TOKEN})
    )
    assert sent.get_list("authorization") == [USER_TOKEN]
    assert sent.get_list("x-goog-api-key") == [ENV_KEY]
    replaced = await _sent_headers(
        api, PROTOCOLS[api].model(api_key=ENV_KEY, headers={"X-Goog-Api-Key": "user-key"})
    )
    assert replaced.get_list("x-goog-api-key") == ["user-key"]
