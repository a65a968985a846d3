"""Anthropic, Bedrock, Gemini and Responses convert each history message once (WireCache).

Every request built with a provider's cache must equal the one built afresh, through
growth, compaction, blocks replaced in place, a tool result's flag flipped in place, notes,
cache marks and a caller editing the body it was given.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx
from bedrock_fixtures import bedrock_config
from provider_helpers import ANTHROPIC_URL, anthropic_config, sse_response, stream_config
from stream_fixtures import anthropic_sse, anthropic_text

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    CacheConfig,
    ImageContent,
    ModelConfig,
    OpenAiCompat,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig, StreamDelta
from yoagent.providers import AnthropicProvider
from yoagent.providers import _anthropic_request as anthropic
from yoagent.providers import _bedrock_request as bedrock
from yoagent.providers import _gemini_request as gemini
from yoagent.providers import _responses_request as responses
from yoagent.providers._messages import (
    WireCache,
    WireMessage,
    drop_empty,
    join_same_role,
    merge_same_role,
)

GEMINI = ApiProtocol.GOOGLE_GENERATIVE_AI
RESPONSES = ApiProtocol.OPENAI_RESPONSES

Build = Callable[[StreamConfig, "WireCache[Any] | None"], dict[str, Any]]


def _gemini_config() -> ModelConfig:
    return ModelConfig(
        api=GEMINI, provider="google", id="gemini-2.5-flash", base_url="http://g", api_key="k"
    )


def _responses_config() -> ModelConfig:
    return ModelConfig(
        api=RESPONSES,
        provider="openai",
        id="gpt-5",
        base_url="http://o",
        api_key="k",
        reasoning=True,
        compat=OpenAiCompat(encrypted_reasoning=True),
    )


CASES: dict[str, tuple[Callable[[], ModelConfig], Build, str]] = {
    "anthropic": (anthropic_config, anthropic.build_request_body, "messages"),
    "bedrock": (bedrock_config, bedrock.build_request_body, "messages"),
    "gemini": (
        _gemini_config,
        lambda config, cache: gemini.build_request_body(config, GEMINI, cache),
        "contents",
    ),
    "responses": (
        _responses_config,
        lambda config, cache: responses.build_request_body(config, RESPONSES, cache),
        "input",
    ),
}


def _random_history(rng: random.Random, turns: int) -> list[Message]:
    history: list[Message] = [UserMessage.from_text("task ü")]
    for turn in range(turns):
        blocks: list[Any] = []
        ids = [f"c{turn}_{k}" for k in range(rng.randint(0, 3))]
        if rng.random() < 0.3:
            blocks.append(ThinkingContent(thinking=f"think {turn}", signature=f"sig{turn}"))
        if not ids or rng.random() < 0.7:  # an empty reply is dropped now and then
            blocks.append(TextContent(text=rng.choice([f"text {turn}", "déjà vu", ""])))
        blocks += [ToolCall(id=i, name="read", arguments={"n": rng.randint(0, 2)}) for i in ids]
        history.append(AssistantMessage(content=blocks))
        for i in ids:
            content: list[Any] = [TextContent(text=f"result {i}")]
            if rng.random() < 0.1:
                content.append(ImageContent(data="QUJD", mime_type="image/png"))
            history.append(
                ToolResultMessage(
                    tool_call_id=i, tool_name="read", content=content, is_error=rng.random() < 0.2
                )
            )
        if rng.random() < 0.2:
            history.append(UserMessage.from_text(f"steer {turn}"))
    return history


def _tamper(body: dict[str, Any], key: str) -> None:
    """What a caller may do to the body it was given: edit each message and its list."""
    for message in body[key]:
        items = message.get("content", message.get("parts"))
        if isinstance(items, list):
            items.append({"text": "tampered"})
        message["role"] = "tampered"


@pytest.mark.parametrize("protocol", list(CASES))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cached_bodies_equal_fresh_ones_as_a_history_changes(protocol: str, seed: int) -> None:
    make_config, build, key = CASES[protocol]
    rng = random.Random(seed)
    history = _random_history(rng, 12)
    cache: WireCache[Any] = WireCache()
    for end in range(1, len(history) + 1):
        sent = history[:end]
        change = rng.random()
        if change < 0.15 and len(sent) > 2:  # compaction: new objects
            sent = [UserMessage.from_text("summary"), *copy.deepcopy(sent[2:])]
        elif change < 0.25:  # a block replaced in place
            target: Any = rng.choice(sent)
            if target.content:
                target.content[0] = copy.deepcopy(target.content[0])
        elif change < 0.35:  # a tool result's flag flipped in place
            results = [m for m in sent if isinstance(m, ToolResultMessage)]
            if results:
                flipped = rng.choice(results)
                flipped.is_error = not flipped.is_error
        elif change < 0.4:
            sent = [*sent, sent[-1]]
        config = stream_config(
            make_config(),
            messages=sent,
            turn_notes=["note"] if rng.random() < 0.2 else [],
            system_prompt=rng.choice(["", "Be terse."]),
            cache=CacheConfig(enabled=rng.random() < 0.7),
        )
        cached = build(config, cache)
        assert cached == build(config, None)
        _tamper(cached, key)  # never reaches the next request


def test_a_flag_flipped_in_place_is_sent_as_it_is_now() -> None:
    result = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="r")])
    reply = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={})])
    history: list[Message] = [UserMessage.from_text("go"), reply, result]
    cache: WireCache[WireMessage] = WireCache()
    config = stream_config(bedrock_config(), messages=history)
    bedrock.build_request_body(config, cache)
    result.is_error = True
    sent = bedrock.build_request_body(config, cache)["messages"][-1]["content"][0]
    assert sent["toolResult"]["status"] == "error"


def _random_wire(rng: random.Random) -> list[WireMessage]:
    return [
        {
            "role": rng.choice(["user", "assistant"]),
            "content": [{"n": n, "k": k} for k in range(rng.randint(0, 2))],
        }
        for n in range(rng.randint(0, 12))
    ]


@pytest.mark.parametrize("seed", range(20))
def test_join_same_role_is_drop_empty_then_merge_and_leaves_its_input_alone(seed: int) -> None:
    rng = random.Random(seed)
    wire = _random_wire(rng)
    before = copy.deepcopy(wire)
    joined = join_same_role(wire)
    assert joined == merge_same_role(drop_empty(wire))
    for message in joined:
        message["content"].append("edited")
        message["role"] = "edited"
    assert wire == before


def test_join_same_role_joins_the_given_key() -> None:
    wire: list[WireMessage] = [
        {"role": "user", "parts": [1]},
        {"role": "model", "parts": []},
        {"role": "user", "parts": [2]},
    ]
    assert join_same_role(wire, "parts") == [{"role": "user", "parts": [1, 2]}]


@respx.mock
async def test_one_provider_sends_the_same_bodies_with_its_cache() -> None:
    route = respx.post(ANTHROPIC_URL + "/v1/messages").mock(
        side_effect=lambda request: sse_response(anthropic_sse(anthropic_text("ok")))
    )
    provider = AnthropicProvider(http_client=httpx.AsyncClient())
    history = _random_history(random.Random(7), 6)
    deltas: list[StreamDelta] = []
    for end in range(1, len(history) + 1):
        config = stream_config(anthropic_config(), messages=history[:end])
        await provider.stream(config, deltas.append)
        sent = json.loads(route.calls.last.request.content)
        assert sent == json.loads(json.dumps(anthropic.build_request_body(config)))
    assert route.call_count == len(history)
