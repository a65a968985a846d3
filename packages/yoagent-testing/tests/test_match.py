"""Which recorded call serves a request, and the diff when none does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from replay_helpers import CountingAdd, add_call, run_agent, text_reply, tool_reply

from yoagent.core import CacheConfig, MockProvider, ModelConfig, ToolResultMessage, UserMessage
from yoagent.core.provider import StreamConfig, ToolDefinition
from yoagent.testing import (
    Cassette,
    Difference,
    Match,
    RecordingProvider,
    ReplayProvider,
    RequestMismatch,
    first_difference,
    request_json,
)
from yoagent.testing._match import canonical_json


def _config(*texts: str, **options: Any) -> StreamConfig:
    return StreamConfig(
        model=options.pop("model", ModelConfig.mock()),
        system_prompt=options.pop("system_prompt", ""),
        messages=[UserMessage.from_text(text) for text in texts],
        **options,
    )


async def _record(tmp_path: Path, *configs: StreamConfig) -> Path:
    path = tmp_path / "run.jsonl"
    recorder = RecordingProvider(MockProvider.text(*(f"reply {i}" for i in range(10))), path)
    for config in configs:
        await recorder.stream(config, lambda delta: None)
    return path


async def test_a_changed_prompt_fails_naming_the_message_and_field(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("what is 2 + 3?"))
    replay = ReplayProvider(path)

    with pytest.raises(RequestMismatch) as raised:
        await replay.stream(_config("what is 2 + 4?"), lambda delta: None)

    mismatch = raised.value
    assert mismatch.difference is not None
    assert mismatch.difference.where == "messages[0].content[0].text"
    assert (mismatch.request, mismatch.call) == (0, 0)
    text = str(mismatch)
    assert "messages[0].content[0].text (message 0, user) differs" in text
    assert "recorded: 'what is 2 + 3?'" in text
    assert "got:      'what is 2 + 4?'" in text
    assert str(path) in text
    assert replay.mismatches == [mismatch]
    with pytest.raises(RequestMismatch):
        replay.check()


async def test_a_mismatch_inside_an_agent_run_ends_it_with_the_diff(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("5"), path), "what is 2 + 3?")
    replay = ReplayProvider(path)

    agent, _ = await run_agent(replay, "what is 2 + 4?")

    reply = agent.messages[-1]
    assert "messages[0].content[0].text" in str(getattr(reply, "error_message", ""))
    assert len(replay.mismatches) == 1


async def test_an_extra_message_is_named_with_its_role(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("one"))
    with pytest.raises(RequestMismatch) as raised:
        await ReplayProvider(path).stream(_config("one", "two"), lambda delta: None)
    assert "messages[1] (message 1, user) differs" in str(raised.value)
    assert "recorded: (nothing)" in str(raised.value)


async def test_other_fields_are_named_too(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("hi", system_prompt="Be brief."))
    with pytest.raises(RequestMismatch) as raised:
        await ReplayProvider(path).stream(
            _config("hi", system_prompt="Be verbose."), lambda delta: None
        )
    assert str(raised.value).splitlines()[0].endswith("system_prompt differs")


async def test_a_request_past_the_recording_says_every_call_was_played(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("hi"))
    replay = ReplayProvider(path)
    await replay.stream(_config("hi"), lambda delta: None)
    with pytest.raises(RequestMismatch, match=r"all 1 calls of .* were played"):
        await replay.stream(_config("hi"), lambda delta: None)


async def test_calls_are_served_by_match_not_only_by_order(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("a"), _config("b"))
    replay = ReplayProvider(path)
    seen: list[str] = []
    for text in ("b", "a"):
        reply = await replay.stream(_config(text), lambda delta: None)
        seen.append(reply.text)
    assert seen == ["reply 1", "reply 0"]


async def test_timestamps_are_ignored_unless_matching_exactly(tmp_path: Path) -> None:
    recorded = _config("hi")
    path = await _record(tmp_path, recorded)
    later = _config("hi")
    later.messages[0].timestamp = recorded.messages[0].timestamp + 1000

    await ReplayProvider(path).stream(later, lambda delta: None)
    with pytest.raises(RequestMismatch) as raised:
        await ReplayProvider(path, match=Match.exact()).stream(later, lambda delta: None)
    assert raised.value.difference is not None
    assert raised.value.difference.where == "messages[0].timestamp"


async def test_the_endpoint_is_ignored_unless_asked_for(tmp_path: Path) -> None:
    recorded = _config("hi")
    path = await _record(tmp_path, recorded)
    elsewhere = replace(recorded, model=replace(ModelConfig.mock(), base_url="http://elsewhere"))

    await ReplayProvider(path).stream(elsewhere, lambda delta: None)
    with pytest.raises(RequestMismatch, match=r"endpoint\.base_url differs"):
        await ReplayProvider(path, match=Match(endpoint=True)).stream(elsewhere, lambda d: None)


async def test_another_model_needs_model_false(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("hi"))
    other = _config("hi", model=ModelConfig.mock("other-model"))
    with pytest.raises(RequestMismatch, match=r"model\.id differs"):
        await ReplayProvider(path).stream(other, lambda delta: None)
    reply = await ReplayProvider(path, match=Match(model=False)).stream(other, lambda d: None)
    assert reply.text == "reply 0"


async def test_cache_hints_are_compared_unless_ignored(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("hi", cache=CacheConfig(session_key="run-1")))
    later = _config("hi", cache=CacheConfig(session_key="run-2"))
    with pytest.raises(RequestMismatch, match=r"cache\.session_key differs"):
        await ReplayProvider(path).stream(later, lambda delta: None)
    await ReplayProvider(path, match=Match(cache=False)).stream(later, lambda delta: None)


async def test_tool_call_ids_can_be_matched_by_position(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    script = MockProvider([tool_reply(add_call("toolu_A")), text_reply("5")])
    await run_agent(RecordingProvider(script, path), tools=[CountingAdd()])
    first, second = Cassette.load(path).calls
    tools = [ToolDefinition(**tool) for tool in first.request["tools"]]

    def request(messages: list[Any]) -> StreamConfig:
        return StreamConfig(
            model=ModelConfig.mock(), system_prompt="", messages=messages, tools=tools
        )

    opening = request(first.messages())
    followup = request([_with_call_id(m, "toolu_B") for m in second.messages()])

    by_id = ReplayProvider(path)
    await by_id.stream(opening, lambda delta: None)
    with pytest.raises(RequestMismatch) as raised:
        await by_id.stream(followup, lambda delta: None)
    assert raised.value.difference is not None
    assert raised.value.difference.where == "messages[1].content[0].id"

    by_position = ReplayProvider(path, match=Match(tool_call_ids=False))
    await by_position.stream(opening, lambda delta: None)
    assert (await by_position.stream(followup, lambda delta: None)).text == "5"


def _with_call_id(message: Any, call_id: str) -> Any:
    if isinstance(message, ToolResultMessage):
        return replace(message, tool_call_id=call_id)
    if getattr(message, "role", None) == "assistant":
        return replace(
            message,
            content=[
                replace(block, id=call_id) if getattr(block, "type", "") == "tool_call" else block
                for block in message.content
            ],
        )
    return message


async def test_a_normalizer_sees_copies_and_decides_what_is_compared(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("hi", system_prompt="Today is Monday."))
    seen: list[dict[str, Any]] = []

    def no_date(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        request["system_prompt"] = request["system_prompt"].split("Today")[0]
        return request

    replay = ReplayProvider(path, match=Match(normalize=no_date))
    await replay.stream(_config("hi", system_prompt="Today is Tuesday."), lambda delta: None)
    assert len(seen) == 2
    assert replay.cassette.calls[0].request["system_prompt"] == "Today is Monday."


async def test_max_calls_stops_serving_and_hands_over_to_then(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("a"), _config("b"))
    fallback = MockProvider.text("live")
    replay = ReplayProvider(path, max_calls=1, then=fallback)
    assert (await replay.stream(_config("a"), lambda d: None)).text == "reply 0"
    assert (await replay.stream(_config("b"), lambda d: None)).text == "live"
    assert replay.served == 1 and len(fallback.requests) == 1

    alone = ReplayProvider(path, max_calls=1)
    await alone.stream(_config("a"), lambda d: None)
    with pytest.raises(RequestMismatch, match="at most 1 calls"):
        await alone.stream(_config("b"), lambda d: None)


async def test_an_unmatched_request_goes_to_then_without_a_mismatch(tmp_path: Path) -> None:
    path = await _record(tmp_path, _config("a"))
    replay = ReplayProvider(path, then=MockProvider.text("live"))
    assert (await replay.stream(_config("new"), lambda d: None)).text == "live"
    assert replay.mismatches == [] and len(replay.unplayed) == 1


def test_first_difference_walks_fields_in_order() -> None:
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}) is None
    assert first_difference({"a": 1, "b": 2}, {"a": 0, "b": 3}) == Difference(("a",), 1, 0)
    found = first_difference({"a": [1, 2]}, {"a": [1, 2, 3]})
    assert found is not None and found.where == "a[2]" and found.actual == 3
    missing = first_difference({"a": 1}, {"a": 1, "z": 2})
    assert missing is not None and missing.where == "z"


def test_first_difference_agrees_with_the_canonical_text() -> None:
    """Values are the same exactly when their JSON texts (keys sorted) are."""
    pairs: list[tuple[Any, Any]] = [
        (1, 1.0),
        (True, 1),
        (0.1, 0.1),
        (float("nan"), float("nan")),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ([1, [2]], [1, [2]]),
        ("x", "x"),
        (None, None),
    ]
    for a, b in pairs:
        assert (first_difference(a, b) is None) == (canonical_json(a) == canonical_json(b))
    assert first_difference(1, 1.0) is not None
    assert first_difference(True, 1) is not None
    assert first_difference("1", 1) is not None
    assert first_difference(None, 0) is not None


def test_long_values_are_cut_in_the_description() -> None:
    text = Difference(("system_prompt",), "x" * 1000, "y").describe()
    assert len(text) < 500 and "…" in text


def test_request_json_holds_settings_and_no_key() -> None:
    config = _config(
        "hi",
        model=replace(ModelConfig.mock(), api_key="sk-very-secret-key-1"),
        temperature=0.2,
    )
    form = request_json(config)
    assert form["temperature"] == 0.2
    assert "sk-very-secret-key-1" not in repr(form)
    assert set(form) == {
        "model",
        "endpoint",
        "system_prompt",
        "messages",
        "tools",
        "thinking_level",
        "max_tokens",
        "temperature",
        "output_schema",
        "cache",
        "turn_notes",
    }
