"""Azure OpenAI's and Vertex AI's requests pinned exactly: the refusal without an endpoint,
the headers, the URL built from ``base_url`` and the model id, the legacy-URL warning, the
provider's wire cache across requests, and reasoning replayed only to its own service."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from provider_helpers import sse_response, stream_config
from stream_fixtures import gemini_chunk, gemini_sse, gemini_text, responses_sse, responses_text

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ErrorKind,
    GoogleCompat,
    ModelConfig,
    OpenAiCompat,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
    UserMessage,
)
from yoagent.core.support import reset_warn_once
from yoagent.providers import AzureOpenAiResponsesProvider, VertexProvider
from yoagent.providers._body import StreamLimits
from yoagent.providers._vertex_auth import clear_token_cache

AZURE = ApiProtocol.AZURE_OPENAI_RESPONSES
VERTEX = ApiProtocol.GOOGLE_VERTEX
AZURE_KEY = "azure-key-0123456789"
VERTEX_TOKEN = "ya29.vertex-token"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("GOOGLE_CLOUD_ACCESS_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    clear_token_cache()
    yield
    clear_token_cache()


def azure(base_url: str, **extra: Any) -> ModelConfig:
    return ModelConfig(
        api=AZURE, provider="azure", id="gpt-5", base_url=base_url, api_key=AZURE_KEY, **extra
    )


def vertex(base_url: str, id: str = "gemini-2.5-pro", **extra: Any) -> ModelConfig:
    return ModelConfig(
        api=VERTEX,
        provider="vertex",
        id=id,
        base_url=base_url,
        api_key=VERTEX_TOKEN,
        compat=GoogleCompat(),
        **extra,
    )


async def requests(
    model: ModelConfig, body: bytes, *configs: Any
) -> tuple[list[httpx.Request], list[AssistantMessage]]:
    """Stream one reply per config (the model's own when none) through one provider."""
    provider_type = AzureOpenAiResponsesProvider if model.api is AZURE else VertexProvider
    replies: list[AssistantMessage] = []
    async with provider_type(model) as provider, respx.mock() as mock:
        route = mock.post(url__regex=".*").mock(return_value=sse_response(body))
        for config in configs or (stream_config(model),):
            replies.append(await provider.stream(config, lambda _: None))
    return [call.request for call in route.calls], replies


AZURE_REPLY = responses_sse(responses_text("ok"))
VERTEX_REPLY = gemini_sse(gemini_text("ok"))


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            azure(""),
            "Azure OpenAI needs its endpoint as base_url "
            "(https://{resource}.openai.azure.com/openai/v1): pass resource= or "
            "base_url= to models.azure(), or set AZURE_OPENAI_RESOURCE or AZURE_OPENAI_ENDPOINT",
        ),
        (
            vertex(""),
            "Vertex AI needs a project and region: pass them to models.vertex(id, "
            "project, region), or set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION)",
        ),
    ],
)
async def test_no_endpoint_is_refused_word_for_word(model: ModelConfig, message: str) -> None:
    with pytest.raises(ProviderError) as caught:
        await requests(model, b"")
    assert (caught.value.kind, caught.value.message) == (ErrorKind.OTHER, message)


async def test_azures_request_headers_and_url() -> None:
    (request,), _ = await requests(azure("https://gateway.example.test/azureX/"), AZURE_REPLY)
    assert str(request.url) == "https://gateway.example.test/azureX/responses"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["api-key"] == AZURE_KEY


async def test_vertexs_request_headers_and_url_from_the_models_last_path_segment() -> None:
    model = vertex("https://vertex.example.test/v1/projects/p/locations/lX/", id="a/b/gemini x")
    (request,), _ = await requests(model, VERTEX_REPLY)
    assert str(request.url) == (
        "https://vertex.example.test/v1/projects/p/locations/lX/publishers/google/models/"
        "gemini%20x:streamGenerateContent?alt=sse"
    )
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["authorization"] == f"Bearer {VERTEX_TOKEN}"


async def test_a_legacy_azure_url_is_said_word_for_word(caplog: pytest.LogCaptureFixture) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    await requests(azure("https://contoso.openai.azure.com/openai/deployments/dep-1"), AZURE_REPLY)
    assert [r.getMessage() for r in caplog.records] == [
        "Azure OpenAI: https://contoso.openai.azure.com/openai/deployments/dep-1 is a legacy "
        "deployment URL; sending to the v1 endpoint https://contoso.openai.azure.com/openai/v1 "
        "with model 'dep-1' instead (set base_url to the v1 endpoint to silence this)"
    ]
    reset_warn_once()


@pytest.mark.parametrize("api", [AZURE, VERTEX])
async def test_the_provider_keeps_one_wire_cache_across_requests(api: ApiProtocol) -> None:
    # An in-place edit of a block goes unseen while the cache holds the message (the
    # documented limit): the proof that the second request reused the first's conversion.
    block = TextContent(text="first")
    if api is AZURE:
        model, reply = azure("https://contoso.openai.azure.com/openai/v1"), AZURE_REPLY
    else:
        model, reply = vertex("https://vertex.example.test/v1/projects/p/locations/l"), VERTEX_REPLY
    config = stream_config(model, messages=[UserMessage(content=[block])])
    provider_type = AzureOpenAiResponsesProvider if api is AZURE else VertexProvider
    async with provider_type(model) as provider, respx.mock() as mock:
        route = mock.post(url__regex=".*").mock(return_value=sse_response(reply))
        await provider.stream(config, lambda _: None)
        block.text = "edited"
        await provider.stream(config, lambda _: None)
    sent = [call.request for call in route.calls]
    bodies = [json.loads(request.content) for request in sent]
    texts = [
        body["input"][0]["content"] if api is AZURE else body["contents"][0]["parts"][0]["text"]
        for body in bodies
    ]
    assert texts == ["first", "first"]


def _history(protocol: ApiProtocol, redacted: str) -> list[Any]:
    return [
        UserMessage.from_text("hi"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="", redacted=redacted, redacted_protocol=protocol),
                TextContent(text="hello"),
            ],
            stop_reason=StopReason.STOP,
        ),
        UserMessage.from_text("more"),
    ]


async def test_azure_replays_its_own_encrypted_reasoning() -> None:
    stored = {"id": "rs_1", "summary": [], "encrypted_content": "gAAA", "message_id": "msg_1"}
    model = azure(
        "https://contoso.openai.azure.com/openai/v1",
        reasoning=True,
        compat=OpenAiCompat(encrypted_reasoning=True),
    )
    config = stream_config(model, messages=_history(AZURE, json.dumps(stored)))
    (request,), _ = await requests(model, AZURE_REPLY, config)
    body = json.loads(request.content)
    assert body["input"][1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "encrypted_content": "gAAA",
    }
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_vertex_replays_its_own_signatures_and_tags_the_ones_it_reads() -> None:
    model = vertex("https://vertex.example.test/v1/projects/p/locations/l")
    config = stream_config(model, messages=_history(VERTEX, "c2ln"))
    (request,), (reply,) = await requests(model, VERTEX_REPLY, config)
    assert json.loads(request.content)["contents"][1] == {
        "role": "model",
        "parts": [{"text": "hello", "thoughtSignature": "c2ln"}],
    }
    signed = [b for b in reply.content if isinstance(b, ThinkingContent) and b.redacted]
    assert [(b.redacted, b.redacted_protocol) for b in signed] == [("c2lnLXRleHQ=", VERTEX)]


async def test_each_legacy_azure_url_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    reset_warn_once()
    caplog.set_level(logging.WARNING, logger="yoagent.providers")
    for deployment in ("dep-a", "dep-b", "dep-a"):
        base_url = f"https://contoso.openai.azure.com/openai/deployments/{deployment}"
        await requests(azure(base_url), AZURE_REPLY)
    said = [r.getMessage().split(" is a legacy")[0] for r in caplog.records]
    assert said == [
        "Azure OpenAI: https://contoso.openai.azure.com/openai/deployments/dep-a",
        "Azure OpenAI: https://contoso.openai.azure.com/openai/deployments/dep-b",
    ]
    reset_warn_once()


async def test_vertex_reads_streamed_call_arguments_within_the_providers_limits() -> None:
    def streamed(index: int) -> dict[str, Any]:
        piece = {"jsonPath": f"$.k{index}", "stringValue": "x" * 100}
        return gemini_chunk([{"functionCall": {"partialArgs": [piece], "willContinue": True}}])

    chunks = [
        gemini_chunk([{"functionCall": {"name": "plan", "willContinue": True}}]),
        *(streamed(i) for i in range(60)),  # about 6.6 KB of arguments
        gemini_chunk([{"functionCall": {}}], "STOP"),
    ]
    model = vertex("https://vertex.example.test/v1/projects/p/locations/l")
    limits = StreamLimits(max_event_bytes=4096)
    async with VertexProvider(model, limits=limits) as provider, respx.mock() as mock:
        mock.post(url__regex=".*").mock(return_value=sse_response(gemini_sse(chunks)))
        reply = await provider.stream(stream_config(model), lambda _: None)
    assert (reply.tool_calls, reply.stop_reason) == ([], StopReason.ERROR)
