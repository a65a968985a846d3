"""The Chat Completions provider converts each history message once (WireCache), exactly."""

from __future__ import annotations

import json
from typing import Any

import httpx
import respx
from provider_helpers import OPENAI_URL, openai_config, sse_response, stream_config
from stream_fixtures import openai_sse, openai_text

from yoagent.core import (
    AssistantMessage,
    ImageContent,
    OpenAiCompat,
    StreamDelta,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message
from yoagent.providers import OpenAiCompletionsProvider
from yoagent.providers._messages import WireCache
from yoagent.providers.openai_completions import (
    _convert,  # pyright: ignore[reportPrivateUsage]
    _merged,  # pyright: ignore[reportPrivateUsage]
    _standalone,  # pyright: ignore[reportPrivateUsage]
    build_messages,
    build_request_body,
)


def _history(turns: int) -> list[Message]:
    history: list[Message] = [UserMessage.from_text("start")]
    for turn in range(turns):
        history.append(
            AssistantMessage(
                content=[
                    TextContent(text=f"turn {turn}"),
                    ToolCall(id=f"c{turn}", name="read", arguments={"path": f"f{turn}"}),
                ]
            )
        )
        history.append(
            ToolResultMessage(
                tool_call_id=f"c{turn}",
                tool_name="read",
                content=[
                    TextContent(text=f"r{turn}"),
                    ImageContent(data="QUJD", mime_type="image/png"),
                ],
            )
        )
    return history


def _converter(calls: list[Message]) -> Any:
    def convert(message: Message) -> str:
        calls.append(message)
        return f"wire of {id(message)}"

    return convert


def test_each_message_is_converted_once_across_calls() -> None:
    cache: WireCache[str] = WireCache()
    history = _history(2)
    calls: list[Message] = []
    first = cache.convert(history, "setting", _converter(calls))
    history += _history(1)[1:]
    second = cache.convert(history, "setting", _converter(calls))
    assert second[: len(first)] == first
    assert calls == history  # every message converted exactly once, in order


def test_a_replaced_message_or_block_is_converted_again() -> None:
    cache: WireCache[str] = WireCache()
    history = _history(2)
    cache.convert(history, "setting", _converter([]))
    calls: list[Message] = []
    history[1] = AssistantMessage(content=[TextContent(text="compacted")])
    reply = history[3]
    assert isinstance(reply, AssistantMessage)
    reply.content[0] = TextContent(text="edited")
    result = history[4]
    assert isinstance(result, ToolResultMessage)
    result.tool_call_id = "renamed"
    cache.convert(history, "setting", _converter(calls))
    assert calls == [history[1], history[3], history[4]]


def test_a_new_setting_drops_every_entry() -> None:
    cache: WireCache[str] = WireCache()
    history = _history(1)
    cache.convert(history, OpenAiCompat(), _converter([]))
    calls: list[Message] = []
    cache.convert(history, OpenAiCompat(replay_reasoning=True), _converter(calls))
    assert calls == history


def test_only_the_latest_messages_are_kept() -> None:
    cache: WireCache[str] = WireCache()
    cache.convert(_history(5), "setting", _converter([]))
    short = _history(1)
    cache.convert(short, "setting", _converter([]))
    assert len(cache._entries) == len(short)  # pyright: ignore[reportPrivateUsage]


def test_cached_bodies_equal_fresh_ones_even_when_a_body_is_edited() -> None:
    cache: WireCache[Any] = WireCache()
    history = _history(3)
    for end in range(1, len(history) + 1):
        config = stream_config(openai_config(), messages=history[:end], turn_notes=["note"])
        cached = build_request_body(config, cache)
        assert cached == build_request_body(config)
        # What a caller does with one body never reaches the next one.
        for message in cached["messages"]:
            if isinstance(message.get("content"), list):
                message["content"].append({"type": "text", "text": "tampered"})
            message["role"] = "tampered"


@respx.mock
async def test_one_provider_sends_the_same_bodies_with_its_cache() -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return sse_response(openai_sse(openai_text("ok")))

    route = respx.post(OPENAI_URL + "/chat/completions").mock(side_effect=reply)
    provider = OpenAiCompletionsProvider(http_client=httpx.AsyncClient())
    history = _history(3)
    deltas: list[StreamDelta] = []
    for end in range(1, len(history) + 1):
        config = stream_config(openai_config(), messages=history[:end])
        await provider.stream(config, deltas.append)
        sent = json.loads(route.calls.last.request.content)
        assert sent == json.loads(json.dumps(build_request_body(config)))
    assert route.call_count == len(history)


def test_the_usual_history_is_sent_as_the_general_merge_would_send_it() -> None:
    history: list[Message] = [
        UserMessage.from_text("start"),
        AssistantMessage(
            content=[
                TextContent(text="Reading."),
                ToolCall(id="c1", name="read", arguments={"path": "a"}),
                ToolCall(id="c2", name="read", arguments={"path": "b"}),
            ]
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id="c2", tool_name="read", content=[]),
        AssistantMessage(content=[TextContent(text="Done.")]),
        UserMessage(content=[TextContent(text="more"), TextContent(text="please")]),
    ]
    compat = OpenAiCompat()
    converted = [_convert(message, compat) for message in history]
    standalone = _standalone(converted)
    assert standalone is not None
    assert standalone == _merged(history, converted, [])


def test_merges_drops_and_images_take_the_general_way() -> None:
    compat = OpenAiCompat()
    two_users: list[Message] = [UserMessage.from_text("a"), UserMessage.from_text("b")]
    empty_reply: list[Message] = [UserMessage.from_text("a"), AssistantMessage(content=[])]
    images = _history(1)
    for history in (two_users, empty_reply, images):
        assert _standalone([_convert(message, compat) for message in history]) is None
    sent = build_messages("", two_users, [], compat)
    assert sent == [{"role": "user", "content": "a\n\nb"}]
