"""The Gemini API's request (headers, key, URL from ``base_url`` and the model id, the
provider's wire cache, signatures replayed) and the vendor table's key helpers
(``find_api_key`` from the environment, ``key_hint`` for every kind of vendor) pinned."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx
from provider_helpers import sse_response, stream_config
from stream_fixtures import gemini_sse, gemini_text

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    GoogleCompat,
    ModelConfig,
    StopReason,
    TextContent,
    ThinkingContent,
    UserMessage,
)
from yoagent.providers import GoogleProvider
from yoagent.providers._vendors import find_api_key, key_hint

GEMINI = ApiProtocol.GOOGLE_GENERATIVE_AI
REPLY = gemini_sse(gemini_text("ok"))


def gemini(base_url: str = "https://gemini.example.test/", **extra: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "api": GEMINI,
        "provider": "google",
        "id": "gemini-2.5-pro",
        "base_url": base_url,
        "api_key": "gemini-key-0123456789",
        "compat": GoogleCompat(),
        **extra,
    }
    return ModelConfig(**values)


async def send(model: ModelConfig, *configs: Any) -> list[httpx.Request]:
    async with GoogleProvider(model) as provider, respx.mock() as mock:
        route = mock.post(url__regex=".*").mock(return_value=sse_response(REPLY))
        for config in configs or (stream_config(model),):
            await provider.stream(config, lambda _: None)
    return [call.request for call in route.calls]


async def test_the_request_headers_url_and_key() -> None:
    (request,) = await send(gemini("https://gw.example.test/gX/", id="models/tuned/a b"))
    assert str(request.url) == (
        "https://gw.example.test/gX/v1beta/models/tuned%2Fa%20b:streamGenerateContent?alt=sse"
    )
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers.get_list("x-goog-api-key") == ["gemini-key-0123456789"]


async def test_without_a_key_no_key_header_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MY_GEMINI_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (request,) = await send(gemini(api_key="", key_variable="MY_GEMINI_KEY"))
    assert "x-goog-api-key" not in request.headers


async def test_the_provider_keeps_one_wire_cache_and_replays_gemini_signatures() -> None:
    block = TextContent(text="first")
    history = [
        UserMessage(content=[block]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="", redacted="c2ln", redacted_protocol=GEMINI),
                TextContent(text="hello"),
            ],
            stop_reason=StopReason.STOP,
        ),
        UserMessage.from_text("more"),
    ]
    model = gemini()
    config = stream_config(model, messages=history)
    async with GoogleProvider(model) as provider, respx.mock() as mock:
        route = mock.post(url__regex=".*").mock(return_value=sse_response(REPLY))
        await provider.stream(config, lambda _: None)
        block.text = "edited"  # unseen while the cache holds the message (the documented limit)
        await provider.stream(config, lambda _: None)
    bodies = [json.loads(call.request.content) for call in route.calls]
    assert [body["contents"][0]["parts"] for body in bodies] == [[{"text": "first"}]] * 2
    assert bodies[0]["contents"][1] == {
        "role": "model",
        "parts": [{"text": "hello", "thoughtSignature": "c2ln"}],
    }


def test_find_api_key_reads_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", " sk-from-env ")
    assert find_api_key("openai") == ("OPENAI_API_KEY", "sk-from-env")
    assert find_api_key("no-such-vendor", {"API_KEY": "k"}) == ("API_KEY", "k")


@pytest.mark.parametrize(
    ("provider", "hint"),
    [
        ("openai", "OPENAI_API_KEY or YOAGENT_API_KEY or API_KEY"),
        ("no-such-vendor", "YOAGENT_API_KEY or API_KEY"),
        ("ollama", ""),
        (
            "bedrock",
            "AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with "
            "AWS_SESSION_TOKEN for temporary credentials), or a profile in the shared AWS files",
        ),
    ],
)
def test_key_hint_for_each_kind_of_vendor(provider: str, hint: str) -> None:
    assert key_hint(provider) == hint
