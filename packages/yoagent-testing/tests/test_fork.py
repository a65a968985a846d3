"""Fork a recorded or live run at a turn and go on with another model."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_helpers import CountingAdd, add_call, run_agent, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    Session,
    StopReason,
    ToolResultMessage,
    UserMessage,
)
from yoagent.testing import Cassette, RecordingProvider, fork, fork_point, fork_provider

MODEL_B = ModelConfig.mock("model-b")


def _three_turn_script() -> list[AssistantMessage]:
    return [
        tool_reply(add_call("c1", 1, 1)),
        tool_reply(add_call("c2", 2, 2)),
        text_reply("model A's answer"),
    ]


async def _recorded_run(path: Path) -> Agent:
    agent, _ = await run_agent(
        RecordingProvider(MockProvider(_three_turn_script()), path), tools=[CountingAdd()]
    )
    return agent


def test_fork_point_ends_a_turn_after_its_tool_results() -> None:
    messages = [
        UserMessage.from_text("go"),
        tool_reply(add_call("c1")),
        ToolResultMessage(tool_call_id="c1", tool_name="add", content=[]),
        AssistantMessage(stop_reason=StopReason.ERROR, error_message="boom"),
        tool_reply(add_call("c2")),
        ToolResultMessage(tool_call_id="c2", tool_name="add", content=[]),
        UserMessage.from_text("follow-up"),
        text_reply("done"),
    ]
    assert fork_point(messages, 0) == 1
    assert fork_point(messages, 1) == 3
    assert fork_point(messages, 2) == 6  # the failed reply is not a turn
    assert fork_point(messages, 3) == 8
    with pytest.raises(ValueError, match="3 turns; there is no turn 4"):
        fork_point(messages, 4)
    with pytest.raises(ValueError, match="0 or more"):
        fork_point(messages, -1)


async def test_a_recorded_run_forks_into_a_new_branch_that_another_model_continues(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    original = await _recorded_run(path)

    session = fork(path, turn=1)
    model_b = MockProvider([text_reply("model B's answer")])
    agent = Agent.from_provider(
        model_b, MODEL_B, tools=[CountingAdd()], messages=session.path_messages()
    )
    await agent.continue_()
    session.append_new(agent.messages)

    # Model B saw the conversation through turn 1 (its tool result included), from the cassette.
    [request] = model_b.requests
    assert [m.role for m in request.messages] == ["user", "assistant", "tool_result"]
    assert request.messages[2].text == "2"  # type: ignore[union-attr]
    # The session keeps both branches: model A's whole run and model B's fork.
    assert len(session.branches()) == 2
    ends = [session.path_messages(leaf)[-1] for leaf in session.branches()]
    assert [getattr(m, "text", None) for m in ends] == ["model A's answer", "model B's answer"]
    assert session.path_messages(session.branches()[0])[-1] == original.messages[-1]


async def test_a_live_run_kept_in_a_session_forks_at_any_turn(tmp_path: Path) -> None:
    live, _ = await run_agent(MockProvider(_three_turn_script()), tools=[CountingAdd()])
    session = Session()
    session.append_new(live.messages)

    forked = fork(session, turn=2)

    assert forked is session
    assert [m.role for m in session.path_messages()] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "tool_result",
    ]
    agent = Agent.from_provider(MockProvider.text("B"), MODEL_B, messages=session.path_messages())
    await agent.continue_()
    new_ids = session.append_new(agent.messages)
    assert len(new_ids) == 1 and len(session.branches()) == 2


async def test_fork_at_turn_zero_starts_from_the_prompt(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _recorded_run(path)
    session = fork(Cassette.load(path), turn=0)
    assert [m.role for m in session.path_messages()] == ["user"]


async def test_fork_provider_serves_the_prefix_then_hands_over(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _recorded_run(path)
    model_b = MockProvider([text_reply("model B's answer")])
    tool = CountingAdd()

    # The agent is already on model B: the cassette serves turn 1 whatever the model.
    provider = fork_provider(path, turn=1, then=model_b)
    agent, _ = await run_agent(provider, tools=[tool], config=MODEL_B)

    assert provider.served == 1
    assert tool.runs == 1  # the prefix's tool ran again: its effects are back in place
    assert len(model_b.requests) == 1
    assert agent.messages[-1].text == "model B's answer"  # type: ignore[union-attr]
    assert agent.messages[1].model == "mock-model"  # type: ignore[union-attr]  # turn 1: model A


async def test_a_turn_past_the_recording_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _recorded_run(path)
    with pytest.raises(ValueError, match="there is no turn 9"):
        fork(path, turn=9)
    from yoagent.testing import CassetteError

    with pytest.raises(CassetteError, match="no turn 9"):
        fork_provider(path, turn=9, then=MockProvider())
