"""The Chat Completions provider converts each history message once (WireCache), exactly."""

from __future__ import annotations

import copy
import json
import random
from typing import Any, cast

import httpx
import pytest
import respx
from provider_helpers import OPENAI_URL, READ_TOOL, openai_config, sse_response, stream_config
from stream_fixtures import openai_sse, openai_text

from yoagent.core import (
    AssistantMessage,
    ErrorKind,
    ImageContent,
    OpenAiCompat,
    ProviderError,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, OutputSchema, StreamDelta, ToolDefinition
from yoagent.providers import OpenAiCompletionsProvider
from yoagent.providers._completions_request import (
    KEPT_JSON_MAX,
    _convert,  # pyright: ignore[reportPrivateUsage]
    _merged,  # pyright: ignore[reportPrivateUsage]
    _standalone,  # pyright: ignore[reportPrivateUsage]
    build_messages,
    build_request_body,
    encode_request,
)
from yoagent.providers._http import encode_body, json_text
from yoagent.providers._messages import WireCache


def _history(turns: int, *, images: bool = True) -> list[Message]:
    """A task, then ``turns`` replies of one call each and their results, each result
    followed by an image (the general way) unless ``images`` is false (the usual history,
    non-ASCII text included)."""
    history: list[Message] = [UserMessage.from_text("start — déjà vu")]
    for turn in range(turns):
        history.append(
            AssistantMessage(
                content=[
                    TextContent(text=f"turn {turn} ✓"),
                    ToolCall(id=f"c{turn}", name="read", arguments={"path": f"ü{turn}"}),
                ]
            )
        )
        picture = [ImageContent(data="QUJD", mime_type="image/png")] if images else []
        history.append(
            ToolResultMessage(
                tool_call_id=f"c{turn}",
                tool_name="read",
                content=[TextContent(text=f"r{turn}"), *picture],
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
    assert len(cache._state[1]) == len(short)  # pyright: ignore[reportPrivateUsage]


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


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"system_prompt": ""},
        {"tools": [READ_TOOL], "temperature": 0.2, "max_tokens": 100},
        {"output_schema": OutputSchema(name="out", schema={"type": "object"})},
        {"turn_notes": ["note"]},  # the general way
        {"messages": _history(2)},  # images after tool results: the general way
        {"messages": [UserMessage.from_text("a"), UserMessage.from_text("b")]},  # merged
        {"messages": [UserMessage.from_text("bad \udcff byte")]},  # a lone surrogate
    ],
)
def test_the_encoded_request_is_byte_for_byte_the_encoded_body(overrides: dict[str, Any]) -> None:
    cache: WireCache[Any] = WireCache()
    history = overrides.pop("messages", _history(3, images=False))
    for end in range(1, len(history) + 1):  # the history grows turn by turn, as in a run
        config = stream_config(openai_config(), messages=history[:end], **overrides)
        assert encode_request(config, cache) == encode_body(build_request_body(config))


def test_a_message_is_encoded_once_and_its_json_reused_on_later_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import yoagent.providers._completions_request as module

    encoded: list[object] = []

    def counting(value: object) -> str:
        encoded.append(value)
        return json_text(value)

    monkeypatch.setattr(module, "json_text", counting)
    cache: WireCache[Any] = WireCache()
    history = _history(3, images=False)  # 7 messages
    for end in range(1, len(history) + 1):
        encode_request(stream_config(openai_config(), messages=history[:end]), cache)
    roles = [
        cast(dict[str, Any], value).get("role") for value in encoded if isinstance(value, dict)
    ]
    messages = [role for role in roles if role is not None]
    # Each history message once, and the system prompt once per request (7 requests).
    assert len(messages) == len(history) + len(history)
    assert messages.count("system") == len(history)


def test_a_request_nested_too_deeply_to_encode_is_a_clear_error() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    tool = ToolDefinition(
        name="read", description="Read.", parameters={"type": "object", "x": deep}
    )
    config = stream_config(openai_config(), messages=_history(1, images=False), tools=[tool])
    with pytest.raises(ProviderError, match="nested too deeply") as caught:
        encode_request(config, WireCache())
    assert caught.value.kind is ErrorKind.OTHER


def _random_history(rng: random.Random, turns: int) -> list[Message]:
    history: list[Message] = [UserMessage.from_text("task ü")]
    for turn in range(turns):
        blocks: list[Any] = []
        ids = [f"c{turn}_{k}" for k in range(rng.randint(0, 3))]
        if rng.random() < 0.3:
            blocks.append(ThinkingContent(thinking=f"think {turn}"))
        # An empty reply is dropped (the general way): only now and then.
        texts = [f"text {turn}", "déjà \u2028 vu", *([""] if ids or rng.random() < 0.1 else [])]
        if not ids or rng.random() < 0.7:
            blocks.append(TextContent(text=rng.choice(texts)))
        blocks += [ToolCall(id=i, name="read", arguments={"n": rng.randint(0, 2)}) for i in ids]
        history.append(AssistantMessage(content=blocks))
        for i in ids:
            content: list[Any] = [TextContent(text=f"result {i}")]
            if rng.random() < 0.02:  # images after tool results: the general way from here on
                content.append(ImageContent(data="QUJD", mime_type="image/png"))
            history.append(ToolResultMessage(tool_call_id=i, tool_name="read", content=content))
        if rng.random() < 0.2:
            history.append(UserMessage.from_text(f"steer {turn}"))
    return history


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_encoded_requests_match_the_encoded_body_as_a_history_changes(seed: int) -> None:
    # One cache through growth, compaction (new objects), a block replaced in place, the
    # same object twice, a vendor change, notes: every request's bytes as if made afresh.
    rng = random.Random(seed)
    history = _random_history(rng, 12)
    compats = [OpenAiCompat(), OpenAiCompat(supports_developer_role=False, replay_reasoning=True)]
    cache: WireCache[Any] = WireCache()
    for end in range(1, len(history) + 1):
        sent = history[:end]
        change = rng.random()
        if change < 0.15 and len(sent) > 2:
            sent = [UserMessage.from_text("summary"), *copy.deepcopy(sent[2:])]
        elif change < 0.25:
            target: Any = rng.choice(sent)  # any message kind: its first block, a new object
            if target.content:
                target.content[0] = copy.deepcopy(target.content[0])
        elif change < 0.3:
            sent = [*sent, sent[-1]]
        config = stream_config(
            openai_config(compat=rng.choice(compats)),
            messages=sent,
            turn_notes=["note"] if rng.random() < 0.1 else [],
            system_prompt=rng.choice(["", "Be terse."]),
        )
        assert encode_request(config, cache) == encode_body(build_request_body(config))


def test_a_block_replaced_by_an_equal_looking_one_is_sent_as_it_is_now() -> None:
    # {"n": 1} == {"n": True}: blocks are compared as objects, so the edit is seen.
    reply = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={"n": 1})])
    history: list[Message] = [UserMessage.from_text("go"), reply]
    cache: WireCache[Any] = WireCache()
    config = stream_config(openai_config(), messages=history)
    assert b'\\"n\\": 1' in encode_request(config, cache)
    reply.content[0] = ToolCall(id="c1", name="read", arguments={"n": True})
    assert b'\\"n\\": true' in encode_request(config, cache)


def test_a_history_call_nested_too_deeply_is_a_clear_error() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    config = stream_config(
        openai_config(),
        messages=[AssistantMessage(content=[ToolCall(id="c1", name="read", arguments=deep)])],
    )
    for encode in (lambda: encode_request(config, WireCache()), lambda: build_request_body(config)):
        with pytest.raises(ProviderError, match="nested too deeply") as caught:
            encode()
        assert caught.value.kind is ErrorKind.OTHER


def test_only_short_message_json_is_kept_between_requests() -> None:
    compat = OpenAiCompat()
    short = _convert(UserMessage.from_text("short"), compat)
    long = _convert(UserMessage.from_text("x" * (KEPT_JSON_MAX + 1)), compat)
    assert short.final_json() is short.final_json()  # kept: the same text object
    assert long.final_json() == long.final_json()
    assert long.final_json() is not long.final_json()  # made again: not held twice


def test_a_merge_form_is_rebuilt_once_when_a_usual_history_first_needs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The usual history keeps no merge form (one dict and list fewer per message for the
    # garbage collector); a request with a note rebuilds it once per message, then reuses it.
    from yoagent.providers import _completions_request as request

    built: list[Message] = []
    original = request._wire_form  # pyright: ignore[reportPrivateUsage]

    def counted(message: Message, compat: OpenAiCompat) -> Any:
        built.append(message)
        return original(message, compat)

    monkeypatch.setattr(request, "_wire_form", counted)
    history = _history(3, images=False)
    cache: WireCache[Any] = WireCache()
    usual = stream_config(openai_config(), messages=history)
    noted = stream_config(openai_config(), messages=history, turn_notes=["mind the note"])
    assert encode_request(usual, cache) == encode_body(build_request_body(usual))
    assert len(built) == 2 * len(history)  # the cache's conversion, and the fresh body's
    built.clear()
    for _ in range(2):
        assert encode_request(noted, cache) == encode_body(build_request_body(noted))
    # Each fresh body converts every message once (keeping its merge form for the merge);
    # the cache rebuilt each merge form once, on the first noted request.
    assert len(built) == 2 * len(history) + len(history)
    built.clear()
    assert encode_request(usual, cache) == encode_body(build_request_body(usual))
    assert len(built) == len(history)  # the fresh body's only
