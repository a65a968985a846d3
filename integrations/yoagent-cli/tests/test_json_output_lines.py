"""``--json`` in-process: the summary line field by field and the streaming
``message_start`` line, both written as readable UTF-8 (what scripts read)."""

from __future__ import annotations

import io
import json

import pytest

from yoagent.cli.json_output import JsonLines
from yoagent.core import (
    AssistantMessage,
    MessageStart,
    SessionStats,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
    event_adapter,
)


def test_the_summary_line_field_by_field() -> None:
    out = io.StringIO()
    stats = SessionStats(
        usage=Usage(input=100, output=20, cache_read=7, cache_write=3), cost_usd=0.5, turns=2
    )
    JsonLines(out).summary(
        2, "fini é", "error", stats=stats, session_id="s-1", duration=1.25, problem="boom"
    )
    line = out.getvalue()
    assert line.endswith("\n") and line.count("\n") == 1
    assert "fini é" in line  # UTF-8 as itself, not \u00e9
    assert json.loads(line) == {
        "type": "result",
        "subtype": "error",
        "is_error": True,
        "exit_code": 2,
        "result": "fini é",
        "error": "boom",
        "usage": {"input": 100, "output": 20, "cache_read": 7, "cache_write": 3},
        "cost_usd": 0.5,
        "session_id": "s-1",
        "num_turns": 2,
        "duration_ms": 1250,
    }


@pytest.mark.parametrize(("exit_code", "is_error"), [(0, False), (1, True), (2, True), (130, True)])
def test_is_error_follows_the_exit_code(exit_code: int, is_error: bool) -> None:
    out = io.StringIO()
    JsonLines(out).summary(exit_code, "", "success", stats=SessionStats(), session_id=None,
                           duration=0.0)  # fmt: skip
    summary = json.loads(out.getvalue())
    assert summary["is_error"] is is_error
    assert summary["error"] is None  # no problem given


def test_a_streaming_replys_start_line_has_no_stop_reason_and_reads_back() -> None:
    message = AssistantMessage(
        content=[TextContent(text="déjà")], stop_reason=StopReason.TOOL_USE, model="m"
    )
    out = io.StringIO()
    JsonLines(out).event(MessageStart(message=message))
    line = out.getvalue()
    assert "déjà" in line
    payload = json.loads(line)
    assert payload["type"] == "message_start"
    assert "stop_reason" not in payload["message"]
    expected = event_adapter.dump_python(MessageStart(message=message), mode="json")
    del expected["message"]["stop_reason"]
    assert payload == expected
    back = event_adapter.validate_json(line)
    assert isinstance(back, MessageStart) and isinstance(back.message, AssistantMessage)
    assert back.message.content == message.content


def test_another_messages_start_line_is_the_event_whole() -> None:
    event = MessageStart(message=UserMessage.from_text("hé"))
    out = io.StringIO()
    JsonLines(out).event(event)
    assert event_adapter.validate_json(out.getvalue()) == event


def _strict(constant: str) -> object:
    raise ValueError(f"not strict JSON: {constant}")


def test_a_start_line_is_strict_json_even_for_a_number_json_cannot_hold() -> None:
    call = ToolCall(id="c1", name="bash", arguments={"ratio": float("inf"), "n": 1.5})
    message = AssistantMessage(content=[call], stop_reason=StopReason.TOOL_USE)
    out = io.StringIO()
    JsonLines(out).event(MessageStart(message=message))
    payload = json.loads(out.getvalue(), parse_constant=_strict)
    assert payload["message"]["content"][0]["arguments"] == {"ratio": None, "n": 1.5}
