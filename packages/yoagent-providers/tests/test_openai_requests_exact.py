"""OpenAI's two requests (Chat Completions and Responses) pinned exactly: headers, the URL
from ``base_url``, the provider's wire cache across requests, Responses reasoning replayed
to OpenAI; and Azure's legacy URLs keeping a blank query value and a path's last letter."""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx
from provider_helpers import sse_response, stream_config
from stream_fixtures import openai_sse, openai_text, responses_sse, responses_text

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ModelConfig,
    OpenAiCompat,
    StopReason,
    TextContent,
    ThinkingContent,
    UserMessage,
)
from yoagent.providers import OpenAiCompletionsProvider, OpenAiResponsesProvider
from yoagent.providers._azure import legacy_deployment, v1_base_url

CHAT = ApiProtocol.OPENAI_COMPLETIONS
RESPONSES = ApiProtocol.OPENAI_RESPONSES
KEY = "sk-test-0123456789abcdef"
REPLIES = {CHAT: openai_sse(openai_text("ok")), RESPONSES: responses_sse(responses_text("ok"))}
PROVIDERS: dict[ApiProtocol, Any] = {
    CHAT: OpenAiCompletionsProvider,
    RESPONSES: OpenAiResponsesProvider,
}
PATHS = {CHAT: "/chat/completions", RESPONSES: "/responses"}


def openai(api: ApiProtocol, **extra: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "api": api,
        "provider": "openai",
        "id": "gpt-5",
        "base_url": "https://gw.example.test/openaiX/",
        "api_key": KEY,
        **extra,
    }
    return ModelConfig(**values)


@pytest.mark.parametrize("api", [CHAT, RESPONSES])
async def test_headers_url_and_the_wire_cache_across_requests(api: ApiProtocol) -> None:
    block = TextContent(text="first")
    model = openai(api)
    config = stream_config(model, messages=[UserMessage(content=[block])], system_prompt="")
    async with PROVIDERS[api](model) as provider, respx.mock() as mock:
        route = mock.post(url__regex=".*").mock(return_value=sse_response(REPLIES[api]))
        await provider.stream(config, lambda _: None)
        block.text = "edited"  # unseen while the cache holds the message (the documented limit)
        await provider.stream(config, lambda _: None)
    first, second = (call.request for call in route.calls)
    assert str(first.url) == "https://gw.example.test/openaiX" + PATHS[api]
    assert first.headers["content-type"] == "application/json"
    assert first.headers["accept"] == "text/event-stream"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    key = "messages" if api is CHAT else "input"
    sent = [json.loads(request.content)[key][0]["content"] for request in (first, second)]
    assert sent == ["first", "first"]


async def test_responses_replays_openais_encrypted_reasoning() -> None:
    stored = {"id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    history = [
        UserMessage.from_text("hi"),
        AssistantMessage(
            content=[
                ThinkingContent(
                    thinking="", redacted=json.dumps(stored), redacted_protocol=RESPONSES
                ),
                TextContent(text="hello"),
            ],
            stop_reason=StopReason.STOP,
        ),
        UserMessage.from_text("more"),
    ]
    model = openai(RESPONSES, reasoning=True, compat=OpenAiCompat(encrypted_reasoning=True))
    async with OpenAiResponsesProvider(model) as provider, respx.mock() as mock:
        route = mock.post(url__regex=".*").mock(return_value=sse_response(REPLIES[RESPONSES]))
        await provider.stream(stream_config(model, messages=history), lambda _: None)
    body = json.loads(route.calls.last.request.content)
    assert body["input"][1] == {**stored, "type": "reasoning"}


def test_a_legacy_url_keeps_a_blank_query_value_and_drops_only_the_api_version() -> None:
    legacy = legacy_deployment(
        "https://contoso.openai.azure.com/openai/deployments/d?api-version=1&flag=&x=1"
    )
    assert legacy is not None
    assert legacy.url("/responses") == (
        "https://contoso.openai.azure.com/openai/v1/responses?flag=&x=1"
    )


def test_an_endpoints_trailing_slash_and_only_it_is_dropped() -> None:
    assert (
        v1_base_url(" https://gw.example.test/pathX/ ") == "https://gw.example.test/pathX/openai/v1"
    )
