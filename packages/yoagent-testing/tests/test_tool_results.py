"""Recorded tool results: a replay that serves them runs no tool and has no side effects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from replay_helpers import (
    CountingAdd,
    add_call,
    events_json,
    messages_json,
    run_agent,
    text_reply,
    tool_reply,
)

from yoagent.core import (
    MockProvider,
    ProgressMessage,
    ToolContext,
    ToolExecutionUpdate,
    ToolResult,
    ToolResultMessage,
)
from yoagent.testing import (
    Cassette,
    RecordingProvider,
    ReplayProvider,
    ToolResultMismatch,
)


async def _record(path: Path, *calls: Any) -> tuple[list[Any], CountingAdd]:
    replies = [tool_reply(call) for call in calls]
    recorder = RecordingProvider(MockProvider([*replies, text_reply("done")]), path)
    tool = CountingAdd()
    agent, events = await run_agent(recorder, tools=recorder.record_tools([tool]))
    return [agent, events], tool


async def test_replayed_tool_results_run_no_tool_and_match_every_event(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    (recorded, recorded_events), live = await _record(path, add_call("c1"), add_call("c2", 4, 5))
    assert live.runs == 2

    replay = ReplayProvider(path)
    offline = CountingAdd()
    replayed, replayed_events = await run_agent(replay, tools=replay.replay_tools([offline]))

    assert offline.runs == 0
    assert messages_json(replayed) == messages_json(recorded)
    assert events_json(replayed_events) == events_json(recorded_events)
    assert [e.text for e in replayed_events if isinstance(e, ProgressMessage)] == ["adding"] * 2
    assert len([e for e in replayed_events if isinstance(e, ToolExecutionUpdate)]) == 2
    results = [m for m in replayed.messages if isinstance(m, ToolResultMessage)]
    assert [(r.text, r.details) for r in results] == [("5", {"sum": 5}), ("9", {"sum": 9})]
    assert replay.mismatches == []


async def test_a_recorded_tool_failure_replays_as_the_same_error_result(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    (recorded, _), _ = await _record(path, add_call("c1", -1, 3))
    replay = ReplayProvider(path)
    replayed, _ = await run_agent(replay, tools=replay.replay_tools([CountingAdd()]))

    result = next(m for m in replayed.messages if isinstance(m, ToolResultMessage))
    assert (result.text, result.is_error, result.details) == ("negative: -1", True, {"a": -1})
    assert messages_json(replayed) == messages_json(recorded)
    record = Cassette.load(path).tools[0]
    assert record.is_error and record.content == [{"type": "text", "text": "negative: -1"}]


class Crashing:
    name = "crash"
    description = "Always raises."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("disk on fire")


class NotAResult:
    name = "odd"
    description = "Returns the wrong type."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return "just a string"  # type: ignore[return-value]


@pytest.mark.parametrize("tool", [Crashing(), NotAResult()], ids=["raises", "wrong type"])
async def test_a_tool_that_breaks_replays_as_the_loop_reported_it(
    tmp_path: Path, tool: Any
) -> None:
    from yoagent.core import ToolCall

    path = tmp_path / "run.jsonl"
    call = ToolCall(id="c1", name=tool.name, arguments={})
    recorder = RecordingProvider(MockProvider([tool_reply(call), text_reply("ok")]), path)
    recorded, _ = await run_agent(recorder, tools=recorder.record_tools([tool]))
    replay = ReplayProvider(path)
    replayed, _ = await run_agent(replay, tools=replay.replay_tools([tool]))

    assert messages_json(replayed) == messages_json(recorded)
    result = next(m for m in replayed.messages if isinstance(m, ToolResultMessage))
    assert result.is_error


async def _record_calls_only(path: Path) -> None:
    """A run recorded without the tool wrapper: the cassette holds no tool results."""
    await run_agent(
        RecordingProvider(MockProvider([tool_reply(add_call()), text_reply("5")]), path),
        tools=[CountingAdd()],
    )


async def test_a_call_with_no_recording_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _record_calls_only(path)
    replay = ReplayProvider(path)
    tool = CountingAdd()
    await run_agent(replay, tools=replay.replay_tools([tool]))

    assert tool.runs == 0
    [mismatch, request_mismatch] = replay.mismatches
    assert isinstance(mismatch, ToolResultMismatch)
    assert "no recorded result for add call 'call_1'" in str(mismatch)
    # The model read the failure, so the next request departs from the recording there.
    assert "messages[2].content[0].text" in str(request_mismatch)
    with pytest.raises(ToolResultMismatch):
        replay.check()


async def test_run_missing_runs_the_tool_when_nothing_was_recorded(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _record_calls_only(path)
    replay = ReplayProvider(path)
    tool = CountingAdd()
    await run_agent(replay, tools=replay.replay_tools([tool], run_missing=True))
    assert tool.runs == 1 and replay.mismatches == []


async def test_a_recording_for_other_arguments_is_not_served(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _record(path, add_call("c1", 2, 3))

    def double_a(request: Any) -> Any:
        from yoagent.core import Modify

        return Modify(arguments={**request.arguments, "a": 20})

    replay = ReplayProvider(path)
    await run_agent(replay, tools=replay.replay_tools([CountingAdd()]), tool_middleware=[double_a])
    mismatch = replay.mismatches[0]
    assert isinstance(mismatch, ToolResultMismatch)
    assert "recorded add({'a': 2, 'b': 3}), got add({'a': 20, 'b': 3})" in str(mismatch)


async def test_wrapped_tools_show_the_model_what_the_tool_shows(tmp_path: Path) -> None:
    recorder = RecordingProvider(MockProvider.text("x"), tmp_path / "run.jsonl")
    tool = CountingAdd()
    [recording] = recorder.record_tools([tool])
    [replaying] = ReplayProvider(Cassette()).replay_tools([tool])
    for wrapped in (recording, replaying):
        assert (wrapped.name, wrapped.description, wrapped.parameters) == (
            tool.name,
            tool.description,
            tool.parameters,
        )
