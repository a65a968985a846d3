"""Delegated runs in the log, line by line: each stamped when its sub-agent event came, a
run closed when the call that delegated it ends first (at every depth), what a delegated
run was asked, and the warning when two delegations share a call id (pinned from a
mutation run of yoagent-gasp, docs/mutation.md)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from yoagent.core import (
    AgentEvent,
    AgentStart,
    AssistantMessage,
    MessageEnd,
    SubAgentEvent,
    TextContent,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
)
from yoagent.gasp import Actor, summarize
from yoagent.gasp._delegations import RunTree, delegated_task
from yoagent.gasp._mapping import Entry, OpenCall

ACTOR = Actor("agent", "delegating-agent")


def _tree() -> RunTree:
    tree = RunTree(ACTOR, "goal_1", "top task", summarize)
    tree.take(AgentStart(), 100)
    return tree


def _sub(depth: int, call_id: str, event: AgentEvent) -> SubAgentEvent:
    return SubAgentEvent(tool_call_id=call_id, tool_name="delegate", depth=depth, event=event)


def _start(call_id: str, task: str) -> ToolExecutionStart:
    return ToolExecutionStart(tool_call_id=call_id, tool_name="delegate", arguments={"task": task})


def _end(call_id: str) -> ToolExecutionEnd:
    return ToolExecutionEnd(
        result=ToolResultMessage(
            tool_call_id=call_id, tool_name="delegate", content=[TextContent(text="done")]
        )
    )


def _kinds(entries: list[Entry]) -> list[tuple[str, int]]:
    return [(entry.event.kind, entry.event.ts_ms) for entry in entries]


def _payload(entries: list[Entry], kind: str) -> dict[str, Any]:
    (payload,) = [entry.event.payload for entry in entries if entry.event.kind == kind]
    return payload


def test_delegated_runs_are_stamped_when_their_events_come_and_closed_with_their_call() -> None:
    tree = _tree()
    assert tree.run is not None
    (called, _) = tree.take(_start("call_1", "sub task"), 200)
    child_start = tree.take(_sub(1, "call_1", AgentStart()), 300)
    assert _kinds(child_start) == [("run.started", 300), ("state.ops_applied", 300)]
    started = child_start[0].event
    child_run = started.payload["run_id"]
    assert started.payload == {
        "run_id": child_run,
        "task": "sub task",
        "parent_run_id": tree.run.run_id,
    }
    assert started.causation_id == called.event.id
    reply = AssistantMessage(content=[TextContent(text="working")])
    assert [t for _, t in _kinds(tree.take(_sub(1, "call_1", MessageEnd(message=reply)), 400))] == [
        400,
        400,
        400,
    ]
    # the child delegates in turn; its call ends before the grandchild does
    tree.take(_sub(1, "call_1", _start("call_2", "deeper")), 500)
    grandchild = tree.take(_sub(2, "call_2", AgentStart()), 600)
    assert _kinds(grandchild)[0] == ("run.started", 600)
    assert grandchild[0].event.payload["parent_run_id"] == child_run
    closed = tree.take(_sub(1, "call_1", _end("call_2")), 700)
    assert _kinds(closed) == [
        ("run.finished", 700),
        ("state.ops_applied", 700),
        ("tool.finished", 700),
    ]
    assert _payload(closed, "run.finished")["run_id"] == grandchild[0].event.payload["run_id"]
    # the top-level call ends before the child run did: the child is closed first
    ended = tree.take(_end("call_1"), 800)
    assert _kinds(ended) == [
        ("run.finished", 800),
        ("state.ops_applied", 800),
        ("tool.finished", 800),
    ]
    assert _payload(ended, "run.finished") == {"run_id": child_run, "outcome": "completed"}
    assert tree.take(_sub(1, "call_1", MessageEnd(message=reply)), 900) == []


def test_a_delegated_run_is_asked_its_task_or_the_whole_arguments() -> None:
    def call(arguments: Any) -> OpenCall:
        return OpenCall("node_1", "event_1", "delegate", arguments)

    assert delegated_task(call({"task": "do it", "x": 1})) == "do it"
    assert delegated_task(call({"task": 3, "x": "é"})) == '{"task":3,"x":"é"}'
    assert delegated_task(call(["do", "it"])) == '["do","it"]'
    circular: dict[str, Any] = {}
    circular["self"] = circular
    assert delegated_task(call(circular)) == "\"{'self': {...}}\""


def test_two_delegations_sharing_a_call_id_are_warned_about_once_by_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tree = _tree()
    tree.take(_start("call_1", "first"), 200)
    tree.take(_sub(1, "call_1", AgentStart()), 300)
    with caplog.at_level(logging.WARNING, logger="yoagent.gasp"):
        lost = tree.take(_sub(1, "call_1", AgentStart()), 400)  # the same key again
        assert tree.take(_sub(1, "call_1", AgentStart()), 500) == []
    assert _kinds(lost) == [("run.finished", 400), ("state.ops_applied", 400)]
    assert _payload(lost, "run.finished")["outcome"] == "unattributed"
    assert [r.getMessage() for r in caplog.records] == [
        "GASP: the sub-agent runs delegated by call 'call_1' at depth 1 cannot be told apart "
        "(the call id repeats); their events are not recorded"
    ]


def test_sub_agent_events_no_open_call_explains_are_not_recorded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tree = _tree()
    tree.take(_start("call_1", "first"), 200)
    reply = AssistantMessage(content=[TextContent(text="whose?")])
    other_tool = SubAgentEvent(
        tool_call_id="call_1", tool_name="other", depth=1, event=AgentStart()
    )
    with caplog.at_level(logging.WARNING, logger="yoagent.gasp"):
        assert tree.take(other_tool, 300) == []  # call_1 is open, but for another tool
        assert tree.take(_sub(1, "call_9", MessageEnd(message=reply)), 400) == []  # never started
        # a run that finished with a call still open delegates nothing more
        tree.take(_start("call_2", "second"), 500)
        tree.take(_sub(1, "call_2", AgentStart()), 600)
        tree.take(_sub(1, "call_2", _start("call_3", "deeper")), 700)
        tree.take(_end("call_2"), 800)
        assert tree.take(_sub(2, "call_3", AgentStart()), 900) == []
    assert [r.getMessage() for r in caplog.records] == [
        f"GASP: the sub-agent run delegated by call '{call}' at depth {depth} is not "
        f"recorded: no open '{tool}' call has that id"
        for call, depth, tool in (("call_1", 1, "other"), ("call_3", 2, "delegate"))
    ]


def _nested(tree: RunTree) -> tuple[str, str]:
    """A delegated run (``call_1``) that delegated in turn (``call_2``), both open."""
    tree.take(_start("call_1", "sub task"), 200)
    child = tree.take(_sub(1, "call_1", AgentStart()), 300)[0].event.payload["run_id"]
    tree.take(_sub(1, "call_1", _start("call_2", "deeper")), 400)
    grandchild = tree.take(_sub(2, "call_2", AgentStart()), 500)[0].event.payload["run_id"]
    return child, grandchild


def _finished(entries: list[Entry]) -> list[tuple[str, int]]:
    return [
        (entry.event.payload["run_id"], entry.event.ts_ms)
        for entry in entries
        if entry.event.kind == "run.finished"
    ]


def test_a_call_that_ends_first_closes_its_whole_subtree_deepest_first() -> None:
    tree = _tree()
    child, grandchild = _nested(tree)
    ended = tree.take(_end("call_1"), 800)
    assert _finished(ended) == [(grandchild, 800), (child, 800)]
    assert [entry.event.kind for entry in ended][-1] == "tool.finished"


def test_a_run_that_ends_closes_the_runs_it_delegated_deepest_first() -> None:
    tree = _tree()
    assert tree.run is not None
    child, grandchild = _nested(tree)
    assert _finished(tree.finish(900)) == [
        (grandchild, 900),
        (child, 900),
        (tree.run.run_id, 900),
    ]


def test_a_delegated_run_prices_its_replies_as_the_top_run_does() -> None:
    tree = RunTree(ACTOR, "goal_1", "top task", summarize, price=lambda message: 0.25)
    tree.take(AgentStart(), 100)
    tree.take(_start("call_1", "sub task"), 200)
    tree.take(_sub(1, "call_1", AgentStart()), 300)
    reply = AssistantMessage(content=[TextContent(text="priced")])
    entries = tree.take(_sub(1, "call_1", MessageEnd(message=reply)), 400)
    assert _payload(entries, "model.finished")["metadata"]["cost_usd"] == 0.25


def test_a_call_that_ends_first_closes_every_run_its_run_delegated() -> None:
    tree = _tree()
    tree.take(_start("call_1", "sub task"), 200)
    child = tree.take(_sub(1, "call_1", AgentStart()), 300)[0].event.payload["run_id"]
    grandchildren = []
    for call_id in ("call_2", "call_3"):  # the child delegates twice, in parallel
        tree.take(_sub(1, "call_1", _start(call_id, "deeper")), 400)
        started = tree.take(_sub(2, call_id, AgentStart()), 500)
        grandchildren.append(started[0].event.payload["run_id"])
    ended = tree.take(_end("call_1"), 800)
    assert _finished(ended) == [(grandchildren[0], 800), (grandchildren[1], 800), (child, 800)]
