"""Record a run through any provider, replay it offline: same messages, same events."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest
from replay_helpers import (
    CountingAdd,
    add_call,
    events_json,
    messages_json,
    run_agent,
    text_reply,
    tool_reply,
    two_turn_script,
)

from yoagent.core import (
    Agent,
    AssistantMessage,
    ErrorKind,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    ProviderRetry,
    StopReason,
    TextContent,
    TextDelta,
    ThinkingContent,
    UserMessage,
)
from yoagent.core.provider import StreamConfig
from yoagent.testing import Cassette, RecordingProvider, ReplayProvider


async def test_a_replayed_run_has_the_recorded_messages_and_events(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorder = RecordingProvider(MockProvider(two_turn_script()), path)
    live_tool = CountingAdd()
    recorded, recorded_events = await run_agent(recorder, tools=[live_tool])

    replayed_tool = CountingAdd()
    replayed, replayed_events = await run_agent(ReplayProvider(path), tools=[replayed_tool])

    assert messages_json(replayed) == messages_json(recorded)
    assert events_json(replayed_events) == events_json(recorded_events)
    assert [e.type for e in replayed_events].count("message_update") >= 2
    assert (live_tool.runs, replayed_tool.runs) == (1, 1)  # tools still run unless replayed
    # The replies are the recorded ones exactly, timestamps included.
    assert replayed.messages[1] == recorded.messages[1]
    assert replayed.messages[-1] == recorded.messages[-1]


async def test_each_replayed_reply_is_a_fresh_object(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("hi"), path))
    cassette = Cassette.load(path)

    first, _ = await run_agent(ReplayProvider(cassette), "what is 2 + 3?")
    second, _ = await run_agent(ReplayProvider(cassette), "what is 2 + 3?")

    assert first.messages[-1] == second.messages[-1]
    assert first.messages[-1] is not second.messages[-1]


async def test_the_cassette_holds_the_request_as_yoagent_built_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(
        RecordingProvider(MockProvider(two_turn_script()), path),
        tools=[CountingAdd()],
        system_prompt="Be brief.",
        temperature=0.5,
        max_tokens=100,
    )

    first, second = Cassette.load(path).calls
    assert first.request["system_prompt"] == "Be brief."
    assert first.request["model"] == {
        "api": "anthropic_messages",
        "provider": "mock",
        "id": "mock-model",
        "max_tokens": 8192,
        "reasoning": False,
    }
    assert (first.request["temperature"], first.request["max_tokens"]) == (0.5, 100)
    assert [tool["name"] for tool in first.request["tools"]] == ["add"]
    assert [m["role"] for m in first.request["messages"]] == ["user"]
    # The second request shares the history: resolved in full, written once.
    assert [m["role"] for m in second.request["messages"]] == ["user", "assistant", "tool_result"]
    assert second.request["messages"][0] == first.request["messages"][0]
    assert second.request["system_prompt"] == "Be brief."
    assert [d["type"] for d in first.deltas] == ["text_delta", "tool_call_delta"]
    assert first.reply is not None and first.reply["stop_reason"] == "tool_use"


async def test_an_error_mid_stream_is_recorded_and_replayed_as_the_same_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    dying = MockReply(
        message=text_reply("a long answer that breaks off"),
        fail_after=2,
        chunk_size=4,
        error=ProviderError(ErrorKind.NETWORK, "connection reset", status=None, retry_after=0.0),
    )
    script = MockProvider([dying, text_reply("recovered")])
    recorded, recorded_events = await run_agent(RecordingProvider(script, path))

    replayed, replayed_events = await run_agent(ReplayProvider(path))

    assert events_json(replayed_events) == events_json(recorded_events)
    assert messages_json(replayed) == messages_json(recorded)
    retries = [e for e in replayed_events if isinstance(e, ProviderRetry)]
    assert [(r.kind, r.error) for r in retries] == [
        (ErrorKind.NETWORK, "NETWORK: connection reset")
    ]
    failed = Cassette.load(path).calls[0]
    assert failed.error == {
        "kind": "network",
        "message": "connection reset",
        "status": None,
        "retry_after": 0.0,
        "type": "ProviderError",
    }
    assert [d["delta"] for d in failed.deltas] == ["a lo", "ng a"]


async def test_a_replayed_error_has_the_recorded_kind_status_and_retry_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    refusal = ProviderError(ErrorKind.RATE_LIMITED, "slow down", status=429, retry_after=1.5)
    recorder = RecordingProvider(MockProvider([refusal]), path)
    config = StreamConfig(model=ModelConfig.mock(), system_prompt="", messages=[_user("hi")])
    with pytest.raises(ProviderError):
        await recorder.stream(config, lambda delta: None)

    with pytest.raises(ProviderError) as raised:
        await ReplayProvider(path).stream(config, lambda delta: None)

    error = raised.value
    assert (error.kind, error.message, error.status, error.retry_after) == (
        ErrorKind.RATE_LIMITED,
        "slow down",
        429,
        1.5,
    )
    assert str(error) == str(refusal)


async def test_a_provider_that_crashes_replays_as_the_loop_reported_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"

    def broken(config: StreamConfig) -> AssistantMessage:
        raise KeyError("boom")

    recorded, _ = await run_agent(RecordingProvider(MockProvider([broken]), path))
    replayed, _ = await run_agent(ReplayProvider(path))

    assert recorded.messages[-1].stop_reason is StopReason.ERROR  # type: ignore[union-attr]
    assert (
        messages_json(replayed)[-1]["error_message"]
        == (messages_json(recorded)[-1]["error_message"])
    )
    assert "provider failed: KeyError" in str(messages_json(replayed)[-1]["error_message"])


async def test_a_cancelled_call_replays_its_deltas_then_waits_to_be_cancelled(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    slow = MockReply(message=text_reply("abcdefgh"), delay=0.05, chunk_size=2)
    recorder = RecordingProvider(MockProvider([slow]), path)
    config = StreamConfig(model=ModelConfig.mock(), system_prompt="", messages=[_user("hi")])
    seen: list[str] = []

    async def cancel_after_two(provider: RecordingProvider | ReplayProvider) -> None:
        seen.clear()
        with anyio.CancelScope() as scope:

            def sink(delta: object) -> None:
                assert isinstance(delta, TextDelta)
                seen.append(delta.delta)
                if len(seen) == 2:
                    scope.cancel()

            await provider.stream(config, sink)
        assert scope.cancelled_caught

    await cancel_after_two(recorder)
    call = Cassette.load(path).calls[0]
    assert call.cancelled and call.reply is None and call.error is None
    assert [d["delta"] for d in call.deltas] in (["ab", "cd"], ["ab", "cd", "ef"])

    replay = ReplayProvider(path)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()

            async def play() -> None:
                with scope:
                    await replay.stream(config, lambda delta: None)

            group.start_soon(play)
            await anyio.sleep(0.05)
            assert not scope.cancel_called  # still waiting, as the recording did
            scope.cancel()
    assert replay.served == 1


async def test_timing_is_recorded_and_replayed_at_the_chosen_speed(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    slow = MockReply(message=text_reply("abcd"), delay=0.2, chunk_size=2)
    await run_agent(RecordingProvider(MockProvider([slow]), path, timing=True))
    call = Cassette.load(path).calls[0]
    assert call.times is not None and len(call.times) == 2
    assert call.times[0] >= 0.19 and call.times[1] >= call.times[0] + 0.19
    assert call.elapsed is not None and call.elapsed >= call.times[1]

    started = time.monotonic()
    await run_agent(ReplayProvider(path, speed=2.0))
    at_double_speed = time.monotonic() - started
    started = time.monotonic()
    await run_agent(ReplayProvider(path))
    untimed = time.monotonic() - started

    assert at_double_speed >= call.elapsed / 2 - 0.01
    assert untimed < at_double_speed


async def test_timing_is_left_out_unless_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("hi"), path))
    record = json.loads(path.read_text().splitlines()[1])
    assert "times" not in record and "elapsed" not in record


def test_speed_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="speed must be above 0"):
        ReplayProvider(Cassette(), speed=0)


async def test_thinking_and_usage_round_trip_exactly(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    reply = AssistantMessage(
        content=[
            ThinkingContent(thinking="hmm", signature="sig-1"),
            TextContent(text="done 😀 and a lone \ud800"),
        ],
        stop_reason=StopReason.STOP,
    )
    recorded, _ = await run_agent(RecordingProvider(MockProvider([reply]), path))
    replayed, _ = await run_agent(ReplayProvider(path))
    assert replayed.messages[-1] == recorded.messages[-1]
    path.read_bytes().decode("utf-8")  # a lone surrogate is written as an escape


async def test_two_agents_share_one_recording_and_one_replay(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    first = RecordingProvider(MockProvider.text("one"), path)
    second = RecordingProvider(MockProvider.text("two"), first.writer)
    await run_agent(first, "first")
    await run_agent(second, "second")
    assert [call.n for call in Cassette.load(path).calls] == [0, 1]

    replay = ReplayProvider(path)
    a, _ = await run_agent(replay.sibling(then=None), "second")
    b, _ = await run_agent(replay.sibling(then=None), "first")
    assert (a.messages[-1].text, b.messages[-1].text) == ("two", "one")  # type: ignore[union-attr]
    assert replay.unplayed == []


async def test_a_replay_runs_under_trio(tmp_path: Path) -> None:
    pytest.importorskip("trio", reason="trio is not installed")
    path = tmp_path / "run.jsonl"
    recorded, _ = await run_agent(
        RecordingProvider(MockProvider(two_turn_script()), path), tools=[CountingAdd()]
    )
    result: list[Agent] = []

    async def main() -> None:
        replay = ReplayProvider(path)
        agent = Agent.from_provider(replay, ModelConfig.mock(), tools=[CountingAdd()])
        await agent.prompt("what is 2 + 3?")
        result.append(agent)

    await anyio.to_thread.run_sync(lambda: anyio.run(main, backend="trio"))
    assert messages_json(result[0]) == messages_json(recorded)


async def test_a_recorded_tool_call_id_reaches_the_replayed_history(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    script = MockProvider([tool_reply(add_call("toolu_9")), text_reply("5")])
    await run_agent(RecordingProvider(script, path), tools=[CountingAdd()])
    replayed, _ = await run_agent(ReplayProvider(path), tools=[CountingAdd()])
    assert replayed.messages[2].tool_call_id == "toolu_9"  # type: ignore[union-attr]


def _user(text: str) -> UserMessage:
    return UserMessage.from_text(text)
