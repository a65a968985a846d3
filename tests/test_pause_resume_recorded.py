"""A paused run and its resume, recorded to a cassette, replayed, and forked from a session.

Core's own tests pin pause and resume; these check that the testing package's recorder,
replay and fork take a paused run as they take any other: the resume's request (with the
caller's denial in it) is recorded, the two halves replay with no model and no tool run,
and a paused session forks into a branch that resumes with another model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yoagent.core import (
    Agent,
    AgentEvent,
    Allow,
    AssistantMessage,
    Defer,
    Deny,
    MockProvider,
    ModelConfig,
    Session,
    StopReason,
    TextContent,
    ToolCall,
    ToolCallRequest,
    ToolDecision,
    ToolResultMessage,
    event_adapter,
    message_adapter,
    messages_adapter,
    tool,
)
from yoagent.core.context import context_messages
from yoagent.core.extension import HELD_RESULT
from yoagent.core.provider import StreamProvider, validate_transcript
from yoagent.testing import Cassette, RecordingProvider, ReplayProvider, fork

RAN: list[tuple[str, str]] = []


@tool
async def read(path: str) -> str:
    """Read a file."""
    RAN.append(("read", path))
    return f"contents of {path}"


@tool
async def delete(path: str) -> str:
    """Delete a file."""
    RAN.append(("delete", path))
    return f"deleted {path}"


def defer_deletes(request: ToolCallRequest) -> ToolDecision:
    if request.tool_name == "delete":
        return Defer("deleting needs the user's approval")
    return Allow()


def model() -> MockProvider:
    """Asks for read(a.txt) and delete(b.txt) at once, then answers."""
    return MockProvider(
        [
            AssistantMessage(
                content=[
                    ToolCall(id="c1", name="read", arguments={"path": "a.txt"}),
                    ToolCall(id="c2", name="delete", arguments={"path": "b.txt"}),
                ],
                stop_reason=StopReason.TOOL_USE,
            ),
            AssistantMessage(content=[TextContent(text="I kept b.txt.")]),
        ]
    )


def agent_on(provider: StreamProvider, tools: list[Any], messages: Sequence[Any] = ()) -> Agent:
    return Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=tools,
        tool_middleware=[defer_deletes],
        messages=messages,
    )


def comparable(values: list[Any], adapter: Any) -> list[Any]:
    """JSON forms without timestamps (a replay makes its own tool results and prompt)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "timestamp"}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return [strip(adapter.dump_python(value, mode="json")) for value in values]


async def test_a_paused_and_resumed_run_is_recorded_and_replays_with_no_model(
    tmp_path: Path,
) -> None:
    RAN.clear()
    path = tmp_path / "cassettes" / "pause.jsonl"
    # The pause, recorded.
    recorder = RecordingProvider(model(), path)
    live_events: list[AgentEvent] = []
    agent = agent_on(recorder, recorder.record_tools([read, delete]))
    await agent.prompt("tidy up", on_event=live_events.append)
    stored = messages_adapter.dump_json(agent.messages)
    # The resume, as another process would do it: the stored history, a recorder
    # appending to the same cassette, and the caller's denial.
    resumer = RecordingProvider(
        MockProvider([AssistantMessage(content=[TextContent(text="I kept b.txt.")])]),
        path,
        append=True,
    )
    resumed = agent_on(
        resumer,
        resumer.record_tools([read, delete]),
        messages_adapter.validate_json(stored),
    )
    await resumed.resume({"c2": Deny("the user wants to keep b.txt")}, on_event=live_events.append)
    assert RAN == [("read", "a.txt")]

    cassette = Cassette.load(path)
    assert len(cassette.calls) == 2
    denial = [m for m in cassette.calls[-1].messages() if isinstance(m, ToolResultMessage)]
    assert [(m.tool_call_id, m.text, m.is_error) for m in denial] == [
        ("c1", "contents of a.txt", False),
        ("c2", "Tool call denied: the user wants to keep b.txt", True),
    ]

    # The replay: no model, no tool run, the same pause and the same resumed history.
    RAN.clear()
    replay = ReplayProvider(path)
    tools = replay.replay_tools([read, delete])
    again = agent_on(replay, tools)
    replay_events: list[AgentEvent] = []
    await again.prompt("tidy up", on_event=replay_events.append)
    assert again.pending == agent.pending
    await again.resume({"c2": Deny("the user wants to keep b.txt")}, on_event=replay_events.append)
    assert RAN == []
    assert replay.unplayed == [] and replay.mismatches == []
    assert comparable(again.messages, message_adapter) == comparable(
        resumed.messages, message_adapter
    )
    assert comparable(replay_events, event_adapter) == comparable(live_events, event_adapter)
    validate_transcript(context_messages(again.messages))


async def test_a_paused_session_forks_into_a_branch_that_resumes_with_another_model() -> None:
    RAN.clear()
    agent = agent_on(model(), [read, delete])
    await agent.prompt("tidy up")
    session = Session()
    session.append_new(agent.messages)

    fork(session, turn=1)  # the head: the paused reply and its results, placeholder included
    branch = session.path_messages()
    assert branch[-1].text == HELD_RESULT
    model_b = MockProvider([AssistantMessage(content=[TextContent(text="Deleted it.")])])
    other = agent_on(model_b, [read, delete], branch)
    assert other.pending == agent.pending
    await other.resume({"c2": Allow()})
    session.append_new(other.messages)

    assert RAN == [("read", "a.txt"), ("delete", "b.txt")]
    assert len(session.branches()) == 2  # the paused branch is kept beside the resumed one
    paused_branch = [b for b in session.branches() if session.get(b).message.text == HELD_RESULT]
    assert len(paused_branch) == 1
    assert session.path_messages()[-1].text == "Deleted it."
    validate_transcript(context_messages(session.path_messages()))
