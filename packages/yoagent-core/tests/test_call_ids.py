"""Tool-call ids a reply repeats: each call gets an id of its own before anything judges or
runs it, so a person approves exactly the calls that run, and the next request answers
every call once."""

from __future__ import annotations

from typing import Any

import pytest
from core_helpers import Recorder, call, held_placeholder, text_reply, tool_reply

from yoagent.core import (
    Agent,
    Allow,
    AssistantMessage,
    Defer,
    Deny,
    MessageUpdate,
    MockProvider,
    MockReply,
    ModelConfig,
    ResumeError,
    ToolCall,
    ToolCallDelta,
    ToolCallRequest,
    ToolDecision,
    ToolExecutionStart,
    ToolResultMessage,
    UserMessage,
    tool,
)
from yoagent.core.context import context_messages
from yoagent.core.provider import validate_transcript


class Ran:
    """A ``delete`` tool that records every path it ran on."""

    def __init__(self) -> None:
        self.paths: list[str] = []

        @tool
        async def delete(path: str) -> str:
            """Delete a file."""
            self.paths.append(path)
            return f"deleted {path}"

        self.tool = delete


def hold_every_delete(request: ToolCallRequest) -> ToolDecision:
    return Defer(f"delete {request.arguments['path']}?")


def holding(ran: Ran, *calls: ToolCall) -> Agent:
    """An agent whose model asks for ``calls`` (every delete held), then says "done"."""
    return Agent.from_provider(
        MockProvider([tool_reply(*calls), text_reply("done")]),
        ModelConfig.mock(),
        tools=[ran.tool],
        tool_middleware=[hold_every_delete],
    )


def sent_ids(message: Any) -> list[str]:
    assert isinstance(message, AssistantMessage)
    return [c.id for c in message.tool_calls]


async def test_two_held_calls_sharing_an_id_are_two_pending_calls() -> None:
    """The defect: both calls held under one id, the person saw one, allowing it ran both."""
    ran = Ran()
    agent = holding(ran, call("delete", "d", path="notes.txt"), call("delete", "d", path="/home"))
    await agent.prompt("tidy up")

    pending = agent.pending
    assert pending is not None
    assert pending.call_ids == ["d", "d_2"]
    assert [c.arguments["path"] for c in pending.calls] == ["notes.txt", "/home"]

    await agent.resume({"d": Allow(), "d_2": Deny("not the home folder")})
    assert ran.paths == ["notes.txt"]
    assert agent.pending is None
    validate_transcript(context_messages(agent.messages))


async def test_allowing_one_id_of_a_repeated_pair_needs_a_decision_for_the_other() -> None:
    ran = Ran()
    agent = holding(ran, call("delete", "d", path="a"), call("delete", "d", path="b"))
    await agent.prompt("go")
    with pytest.raises(ResumeError, match="no decision for the held tool calls \\['d_2'\\]"):
        await agent.resume({"d": Allow()})
    assert ran.paths == []


async def test_calls_sharing_an_id_run_once_each_and_the_next_request_is_valid() -> None:
    ran = Ran()
    provider = MockProvider(
        [tool_reply(call("delete", "x", path="a"), call("delete", "x", path="b")), text_reply("ok")]
    )
    events = Recorder()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[ran.tool])
    await agent.prompt("go", on_event=events)

    assert ran.paths == ["a", "b"]
    starts = events.of(ToolExecutionStart)
    assert [s.tool_call_id for s in starts] == ["x", "x_2"]
    # The next request (validated by the mock as a real API would) answers each call once,
    # under the ids the history's reply holds.
    (_, second) = provider.requests
    reply = second.messages[1]
    assert sent_ids(reply) == ["x", "x_2"]
    results = [m for m in second.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.text) for r in results] == [("x", "deleted a"), ("x_2", "deleted b")]
    assert agent.messages[-1].text == "ok"  # type: ignore[union-attr]


async def test_a_new_id_never_takes_one_already_given_and_a_later_call_holding_it_moves_on() -> (
    None
):
    """Ids are given in the order the calls stream (a later call is not known yet): the
    second ``x`` gets ``x_2``, so the call that arrives as ``x_2`` gets ``x_2_2``."""
    ran = Ran()
    provider = MockProvider(
        [
            tool_reply(
                call("delete", "x", path="a"),
                call("delete", "x", path="b"),
                call("delete", "x_2", path="c"),
                call("delete", "x", path="d"),
            ),
            text_reply("ok"),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[ran.tool])
    await agent.prompt("go")
    assert sent_ids(provider.requests[1].messages[1]) == ["x", "x_2", "x_2_2", "x_3"]
    assert sorted(ran.paths) == ["a", "b", "c", "d"]


async def test_a_long_repeated_id_stays_within_64_characters() -> None:
    """Anthropic and Bedrock cut ids at 64 characters: a suffix past that would be cut off
    again, and the two calls would share an id on the wire."""
    long_id = "t" * 64
    ran = Ran()
    provider = MockProvider(
        [
            tool_reply(call("delete", long_id, path="a"), call("delete", long_id, path="b")),
            text_reply("ok"),
        ]
    )
    await Agent.from_provider(provider, ModelConfig.mock(), tools=[ran.tool]).prompt("go")
    first, second = sent_ids(provider.requests[1].messages[1])
    assert first == long_id
    assert len(second) == 64 and second.endswith("_2") and second != first


async def test_the_message_end_of_a_reply_already_carries_the_unique_ids() -> None:
    events = Recorder()
    provider = MockProvider(
        [tool_reply(call("delete", "x", path="a"), call("delete", "x", path="b")), text_reply("ok")]
    )
    await Agent.from_provider(provider, ModelConfig.mock(), tools=[Ran().tool]).prompt(
        "go", on_event=events
    )
    ends = [e.message for e in events.events if e.type == "message_end"]
    replies = [m for m in ends if isinstance(m, AssistantMessage) and m.tool_calls]
    assert [sent_ids(m) for m in replies] == [["x", "x_2"]]


async def test_the_streamed_deltas_carry_the_ids_the_settled_reply_holds() -> None:
    """The reply was rewritten but its deltas still carried the model's ids: a client
    following the stream (AG-UI) merged two calls into one and got a result for a call it
    never saw."""
    events = Recorder()
    calls = [("x", "a"), ("x", "b"), ("x_2", "c"), ("x", "d")]
    reply = MockReply(  # several deltas per call
        message=tool_reply(*(call("delete", i, path=p) for i, p in calls)), chunk_size=4
    )
    provider = MockProvider([reply, text_reply("ok")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[Ran().tool])
    await agent.prompt("go", on_event=events)
    streamed: dict[int, list[str]] = {}
    for update in events.of(MessageUpdate):
        if isinstance(update.delta, ToolCallDelta):
            streamed.setdefault(update.delta.content_index, []).append(update.delta.id)
    settled = sent_ids(agent.messages[1])
    assert len(set(settled)) == 4
    assert [set(streamed[index]) for index in sorted(streamed)] == [{i} for i in settled]
    assert [e.tool_call_id for e in events.of(ToolExecutionStart)] == settled


async def test_a_stored_history_with_a_repeated_held_id_cannot_be_resumed() -> None:
    """A history written before ids were made unique holds both calls under one id: a
    resume would run both on one decision, so it is refused before anything runs."""
    ran = Ran()
    reply = tool_reply(call("delete", "d", path="a"), call("delete", "d", path="b"))
    held = held_placeholder("d", "delete", "delete a?", path="a")
    agent = Agent.from_provider(
        MockProvider([text_reply("done")], validate=False),
        ModelConfig.mock(),
        tools=[ran.tool],
        messages=[UserMessage.from_text("go"), reply, held],
    )
    with pytest.raises(ResumeError, match="repeats the held tool call id 'd'"):
        await agent.resume(Allow())
    assert ran.paths == []
