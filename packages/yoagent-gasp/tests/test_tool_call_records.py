"""What a tool call leaves in the log, line for line: ``tool.called`` and its pair, a
failure and its pair, ``tool.finished``, each stamped when its agent event came; and the
outcome a loop stop records (pinned from a mutation run of yoagent-gasp,
docs/mutation.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from yoagent.core import (
    AgentStart,
    AssistantMessage,
    MessageEnd,
    RunEnd,
    RunOutcome,
    StopCause,
    StopReason,
    TextContent,
    ToolCall,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
)
from yoagent.gasp import Actor, summarize
from yoagent.gasp._mapping import Entry, RunMapper
from yoagent.gasp.summary import args_fingerprint, args_json

ACTOR = Actor("agent", "recorded-agent")
ARGS = {"path": "src/app.py", "content": "print('hi')\n"}


def _started() -> tuple[RunMapper, str, str]:
    mapper = RunMapper(ACTOR, "goal_1", "fix the app", summarize)
    (started, _pair) = mapper.take(AgentStart(), 100)
    assert mapper.run is not None
    return mapper, mapper.run.run_id, started.event.id


def _line(entry: Entry) -> dict[str, Any]:
    return entry.event.to_json()


def _envelope(
    entry: Entry, kind: str, payload: Any, cause: str, run_id: str, ts: int
) -> dict[str, Any]:
    return {
        "id": entry.event.id,
        "schema_version": 1,
        "ts_ms": ts,
        "actor": {"kind": "agent", "id": "recorded-agent"},
        "kind": kind,
        "payload": payload,
        "causation_id": cause,
        "correlation_id": run_id,
    }


def _tool_finished(
    entry: Entry, run_id: str, started: str, output: str, success: bool
) -> dict[str, Any]:
    """``tool.finished`` of a ``write_file`` call, as logged at 300."""
    payload = {"run_id": run_id, "tool": "write_file", "output_summary": output}
    return _envelope(entry, "tool.finished", {**payload, "success": success}, started, run_id, 300)


def _end(call_id: str, is_error: bool, *content: str) -> ToolExecutionEnd:
    return ToolExecutionEnd(
        result=ToolResultMessage(
            tool_call_id=call_id,
            tool_name="write_file",
            content=[TextContent(text=part) for part in content],
            is_error=is_error,
        )
    )


def test_a_tool_call_is_logged_with_every_field_and_its_pair() -> None:
    mapper, run_id, started = _started()
    start = ToolExecutionStart(tool_call_id="call_1", tool_name="write_file", arguments=ARGS)
    called, pair = mapper.take(start, 200)
    node = called.event.payload["id"]
    assert re.fullmatch(r"node_[0-9a-f]{32}", node)
    call = {
        "run_id": run_id,
        "tool": "write_file",
        "input_summary": summarize(args_json(ARGS)),
        "output_summary": None,
        "success": None,
        "metadata": {
            "args_fingerprint": args_fingerprint("write_file", ARGS),
            "path": "src/app.py",
        },
    }
    assert _line(called) == _envelope(
        called, "tool.called", {"id": node, **call}, started, run_id, 200
    )
    ops = [
        {"CreateNode": {"id": node, "kind": "tool_call", "props": call}},
        {"CreateRelation": {"from": node, "rel": "produced_by", "to": run_id, "props": {}}},
    ]
    assert _line(pair) == _envelope(pair, "state.ops_applied", ops, called.event.id, run_id, 200)
    assert set(mapper.open_calls) == {"call_1"}


def test_a_failed_tool_call_logs_a_failure_derived_from_the_call_then_its_end() -> None:
    mapper, run_id, started = _started()
    start = ToolExecutionStart(tool_call_id="call_1", tool_name="write_file", arguments=ARGS)
    called, _ = mapper.take(start, 200)
    node = called.event.payload["id"]
    observed, pair, finished = mapper.take(_end("call_1", True, "disk\n  full", "more"), 300)
    failure = observed.event.payload["id"]
    assert re.fullmatch(r"node_[0-9a-f]{32}", failure) and failure != node
    body = {"title": "tool write_file failed", "summary": "disk full"}
    assert _line(observed) == _envelope(
        observed,
        "failure.observed",
        {"id": failure, "failure_id": failure, **body},
        started,
        run_id,
        300,
    )
    ops = [
        {"CreateNode": {"id": failure, "kind": "failure", "props": body}},
        {"CreateRelation": {"from": failure, "rel": "derived_from", "to": node, "props": {}}},
    ]
    assert _line(pair) == _envelope(pair, "state.ops_applied", ops, observed.event.id, run_id, 300)
    assert _line(finished) == _tool_finished(finished, run_id, started, "disk full", False)
    assert mapper.open_calls == {}


def test_a_successful_call_without_text_finishes_with_no_output() -> None:
    mapper, run_id, started = _started()
    start = ToolExecutionStart(tool_call_id="call_1", tool_name="write_file", arguments=ARGS)
    mapper.take(start, 200)
    (finished,) = mapper.take(_end("call_1", False), 300)
    assert _line(finished) == _tool_finished(finished, run_id, started, "(no output)", True)
    assert mapper.open_calls == {}


def test_the_end_of_a_call_never_started_is_logged_without_a_link() -> None:
    mapper, _, _ = _started()
    _observed, pair, finished = mapper.take(_end("call_9", True, "lost"), 300)
    (create,) = pair.event.payload
    assert create["CreateNode"]["kind"] == "failure"
    assert finished.event.payload["success"] is False
    assert mapper.open_calls == {}


def _loop_stop(*names: str) -> str:
    mapper, _, _ = _started()
    reply = AssistantMessage(
        content=[ToolCall(id=f"c{i}", name=name, arguments={}) for i, name in enumerate(names)],
        stop_reason=StopReason.TOOL_USE,
    )
    mapper.take(MessageEnd(message=reply), 200)
    mapper.note_end(RunOutcome(end=RunEnd.STOPPED, cause=StopCause.LOOP))
    return mapper.outcome


def test_a_loop_stop_names_the_tools_of_the_last_reply_cleaned() -> None:
    assert _loop_stop("read_file", "bash", "bash") == "loop_aborted:bash,read_file"
    assert _loop_stop(" read file\u200b", "ba\x00sh") == "loop_aborted:bash,readfile"
    assert _loop_stop() == "loop_aborted"
    assert _loop_stop("  ", "\t") == "loop_aborted"


def test_arguments_are_logged_as_sorted_compact_json_with_text_kept_and_objects_as_text() -> None:
    arguments = {"path": "café.py", "at": Path("/tmp/x")}
    assert args_json(arguments) == '{"at":"/tmp/x","path":"café.py"}'
    mapper, _, _ = _started()
    start = ToolExecutionStart(
        tool_call_id="call_1", tool_name="read_file", arguments={"path": "café.py"}
    )
    called, _ = mapper.take(start, 200)
    assert called.event.payload["input_summary"] == '{"path":"café.py"}'
