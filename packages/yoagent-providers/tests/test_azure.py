"""Azure OpenAI: a legacy ``…/openai/deployments/{deployment}`` URL goes to the v1 endpoint,
with the deployment as the model."""

from __future__ import annotations

import json
import logging

import pytest
import respx
from provider_helpers import sse_response, stream_config
from stream_fixtures import responses_sse, responses_text

from yoagent.core import ApiProtocol, ModelConfig
from yoagent.core.support import reset_warn_once
from yoagent.providers import AzureOpenAiResponsesProvider, models

V1 = "https://contoso.openai.azure.com/openai/v1/responses"


def azure_config(base_url: str, id: str = "gpt-5") -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.AZURE_OPENAI_RESPONSES,
        provider="azure",
        id=id,
        base_url=base_url,
        api_key="azure-key-0123456789",
    )


async def send(config: ModelConfig, url: str = V1) -> tuple[str, dict[str, object], str]:
    """Stream one reply; the URL the request went to, its JSON body and the reply's text."""
    async with (
        AzureOpenAiResponsesProvider(config) as provider,
        respx.mock(assert_all_called=True) as mock,
    ):
        route = mock.post(url__startswith=url).mock(
            return_value=sse_response(responses_sse(responses_text("ok")))
        )
        reply = await provider.stream(stream_config(config), lambda _: None)
    request = route.calls.last.request
    return str(request.url), json.loads(request.content), reply.text


@pytest.mark.parametrize(
    "legacy",
    [
        "https://contoso.openai.azure.com/openai/deployments/my-gpt5",
        "https://contoso.openai.azure.com/openai/deployments/my-gpt5/",
        "https://contoso.openai.azure.com/openai/deployments/my-gpt5?api-version=2025-04-01-preview",
        "https://contoso.openai.azure.com/openai/deployments/my-gpt5/responses?api-version=2025-04-01-preview",
        "https://contoso.openai.azure.com/openai/deployments/my-gpt5/chat/completions",
    ],
)
async def test_a_legacy_deployment_url_is_sent_to_the_v1_endpoint_with_the_deployment_as_model(
    legacy: str,
) -> None:
    url, body, text = await send(azure_config(legacy))
    assert url == V1  # no dated api-version: the v1 API takes none
    assert body["model"] == "my-gpt5"
    assert text == "ok"


async def test_a_v1_url_is_sent_as_it_is_with_the_configured_id() -> None:
    url, body, _ = await send(azure_config("https://contoso.openai.azure.com/openai/v1", "dep-a"))
    assert url == V1 and body["model"] == "dep-a"


async def test_another_query_parameter_and_a_prefix_before_openai_are_kept() -> None:
    legacy = "https://gw.example.com/azure/openai/deployments/d%201?api-version=2024-10-21&x=1"
    expected = "https://gw.example.com/azure/openai/v1/responses?x=1"
    url, body, _ = await send(azure_config(legacy), url=expected)
    assert url == expected and body["model"] == "d 1"


async def test_the_rewrite_is_said_once_naming_the_v1_endpoint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    legacy = "https://contoso.openai.azure.com/openai/deployments/said-once?api-version=1"
    reset_warn_once()  # the test may run twice in one process (mutmut's runs do)
    with caplog.at_level(logging.WARNING, logger="yoagent.providers"):
        await send(azure_config(legacy))
        await send(azure_config(legacy))
    said = [r.getMessage() for r in caplog.records if "deployments" in r.getMessage()]
    assert len(said) == 1
    assert "https://contoso.openai.azure.com/openai/v1" in said[0] and "said-once" in said[0]


def test_a_legacy_endpoint_variable_becomes_the_v1_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AZURE_OPENAI_RESOURCE", "AZURE_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(
        "AZURE_OPENAI_ENDPOINT", "https://contoso.openai.azure.com/openai/deployments/my-gpt5"
    )
    assert models.azure("my-gpt5").base_url == "https://contoso.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://contoso.openai.azure.com/openai/v1/")
    assert models.azure("d").base_url == "https://contoso.openai.azure.com/openai/v1"
