"""A run's first lines and a model call's, field for field as GASP.md's event mapping
table gives them (``AgentStart``, ``MessageEnd``, ``AgentEnd``): a root run and a
delegated one, the model call's node and its raw ``model.finished``, the spend metadata and
its ``cacheHitRate``, and a plain stop's outcome (pinned from a mutation run of
yoagent-gasp, docs/mutation.md)."""

from __future__ import annotations

import re
from typing import Any

from yoagent.core import (
    AgentEnd,
    AgentStart,
    AssistantMessage,
    MessageEnd,
    RunEnd,
    RunOutcome,
    SessionStats,
    StopCause,
    StopReason,
    TextContent,
    Usage,
)
from yoagent.gasp import Actor, summarize
from yoagent.gasp._mapping import Delegation, Entry, OpenCall, RunMapper, stats_metadata

ACTOR = Actor("agent", "recorder-test")
ACTOR_JSON = {"kind": "agent", "id": "recorder-test"}
RUN_ID = re.compile(r"^run_[0-9a-f]{32}$")
NODE_ID = re.compile(r"^node_[0-9a-f]{32}$")


def _line(entry: Entry) -> dict[str, Any]:
    return entry.event.to_json()


def _envelope(
    entry: Entry, kind: str, payload: Any, cause: str | None, run_id: str, ts: int
) -> dict[str, Any]:
    return {
        "id": entry.event.id,
        "schema_version": 1,
        "ts_ms": ts,
        "actor": ACTOR_JSON,
        "kind": kind,
        "payload": payload,
        "causation_id": cause,
        "correlation_id": run_id,
    }


def test_a_root_run_starts_with_its_node_serving_the_goal() -> None:
    mapper = RunMapper(ACTOR, "goal_1", "fix the app", summarize)
    started, ops = mapper.take(AgentStart(), 100)
    assert mapper.run is not None
    run_id = mapper.run.run_id
    assert RUN_ID.match(run_id)
    assert _line(started) == _envelope(
        started, "run.started", {"run_id": run_id, "task": "fix the app"}, None, run_id, 100
    )
    assert _line(ops) == _envelope(
        ops,
        "state.ops_applied",
        [
            {
                "CreateNode": {
                    "id": run_id,
                    "kind": "run",
                    "props": {"task": "fix the app", "status": "started"},
                }
            },
            {"CreateRelation": {"from": run_id, "rel": "serves", "to": "goal_1", "props": {}}},
        ],
        started.event.id,
        run_id,
        100,
    )


def test_a_delegated_run_starts_caused_by_and_derived_from_its_call() -> None:
    call = OpenCall(node="node_call", event="event_call", tool="delegate", arguments={})
    mapper = RunMapper(
        ACTOR, "goal_1", "sub task", summarize, delegation=Delegation("run_parent", call, 2)
    )
    started, ops = mapper.take(AgentStart(), 100)
    assert mapper.run is not None
    run_id = mapper.run.run_id
    payload = {"run_id": run_id, "task": "sub task", "parent_run_id": "run_parent"}
    assert _line(started) == _envelope(started, "run.started", payload, "event_call", run_id, 100)
    props = {"task": "sub task", "status": "started", "depth": 2}
    assert _line(ops)["payload"] == [
        {"CreateNode": {"id": run_id, "kind": "run", "props": props}},
        {"CreateRelation": {"from": run_id, "rel": "derived_from", "to": "node_call", "props": {}}},
    ]
    assert _line(ops)["causation_id"] == started.event.id


def test_a_model_call_is_a_node_produced_by_the_run_and_a_raw_finished_line() -> None:
    mapper = RunMapper(ACTOR, "goal_1", "fix the app", summarize)
    (started, _) = mapper.take(AgentStart(), 100)
    assert mapper.run is not None
    run_id = mapper.run.run_id
    usage = Usage(input=3, output=4, cache_read=5, cache_write=6)
    reply = AssistantMessage(content=[TextContent(text="done")], model="m1", usage=usage)
    called, ops, finished = mapper.take(MessageEnd(message=reply), 200)
    node = _line(called)["payload"]["id"]
    assert NODE_ID.match(node)
    call = {
        "run_id": run_id,
        "model": "m1",
        "prompt_summary": "fix the app",
        "output_summary": None,
        "metadata": {},
    }
    cause = started.event.id
    assert _line(called) == _envelope(
        called, "model.called", {"id": node, **call}, cause, run_id, 200
    )
    assert _line(ops) == _envelope(
        ops,
        "state.ops_applied",
        [
            {"CreateNode": {"id": node, "kind": "model_call", "props": call}},
            {"CreateRelation": {"from": node, "rel": "produced_by", "to": run_id, "props": {}}},
        ],
        called.event.id,
        run_id,
        200,
    )
    spent = {"usage": {"input": 3, "output": 4, "cache_read": 5, "cache_write": 6}}
    assert _line(finished) == _envelope(
        finished,
        "model.finished",
        {"run_id": run_id, "model": "m1", "output_summary": "done", "metadata": spent},
        cause,
        run_id,
        200,
    )
    assert mapper.outcome == "completed"


def test_the_spend_metadata_is_the_stats_with_the_cache_hit_rate_of_the_prompt() -> None:
    stats = SessionStats(usage=Usage(input=10, output=7, cache_read=30, cache_write=10), turns=2)
    metadata = stats_metadata(stats)
    assert metadata["cacheHitRate"] == 0.6  # 30 read of 10 + 30 + 10 prompt tokens
    assert metadata["usage"] == {"input": 10, "output": 7, "cache_read": 30, "cache_write": 10}
    assert metadata["turns"] == 2
    assert metadata["sub_agents"]["runs"] == 0
    assert stats_metadata(SessionStats(usage=Usage(output=9)))["cacheHitRate"] == 0.0


def test_spend_json_cannot_hold_is_written_as_text_or_named_not_raised() -> None:
    stats = SessionStats()
    stats.turns = {7}  # type: ignore[assignment]  # a value JSON has no form for: its text
    assert stats_metadata(stats)["turns"] == "{7}"
    stats.turns = {(1, 2): 3}  # type: ignore[assignment]  # a key JSON cannot hold
    assert stats_metadata(stats) == {"error": "session stats not serializable"}


def test_a_run_stopped_for_another_cause_than_a_loop_says_stopped() -> None:
    mapper = RunMapper(ACTOR, "goal_1", "fix the app", summarize)
    mapper.take(AgentStart(), 100)
    outcome = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.TURN_LIMIT)
    finished, _ops = mapper.take(AgentEnd(outcome=outcome, stats=SessionStats()), 300)
    assert _line(finished)["payload"]["outcome"] == "stopped"


def _error_reply() -> AssistantMessage:
    return AssistantMessage(
        content=[], model="m1", stop_reason=StopReason.ERROR, error_message="overloaded"
    )


def test_a_reply_without_text_is_summarized_as_no_text() -> None:
    mapper = RunMapper(ACTOR, "goal_1", "fix the app", summarize)
    mapper.take(AgentStart(), 100)
    *_, finished = mapper.take(MessageEnd(message=AssistantMessage(content=[], model="m1")), 200)
    assert _line(finished)["payload"]["output_summary"] == "(no text)"


def test_a_run_closed_with_an_error_reply_held_logs_the_reply_then_the_end_with_its_metadata() -> (
    None
):
    mapper = RunMapper(ACTOR, "goal_1", "fix the app", summarize)
    mapper.take(AgentStart(), 100)
    assert mapper.take(MessageEnd(message=_error_reply()), 200) == []  # held: a retry may come
    entries = mapper.finish(300, {"closed": "by the recording"})
    kinds = [(_line(entry)["kind"], _line(entry)["ts_ms"]) for entry in entries]
    assert kinds == [
        ("model.called", 200),
        ("state.ops_applied", 200),
        ("model.finished", 200),
        ("run.finished", 300),
        ("state.ops_applied", 300),
    ]
    assert mapper.run is not None
    assert _line(entries[3])["payload"] == {
        "run_id": mapper.run.run_id,
        "outcome": "error",
        "metadata": {"closed": "by the recording"},
    }
    assert mapper.finish(400) == []  # once
    assert mapper.take(MessageEnd(message=_error_reply()), 500) == []  # nothing after the end
