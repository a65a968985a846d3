"""Saved sessions: JSONL files that round-trip a history exactly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from yoagent.cli.session_store import SessionError, SessionStore, read_messages
from yoagent.core import (
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.core.messages import AnyMessage


def history() -> list[AnyMessage]:
    return [
        UserMessage.from_text("fix the bug"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm", signature="sig"),
                TextContent(text="Looking."),
                ToolCall(id="c1", name="read_file", arguments={"path": "a.py"}),
            ],
            stop_reason=StopReason.TOOL_USE,
            usage=Usage(input=10, output=5, cache_read=3),
            model="m",
            provider="p",
        ),
        ToolResultMessage(
            tool_call_id="c1", tool_name="read_file", content=[TextContent(text="x = 1")]
        ),
        AssistantMessage(content=[TextContent(text="Fixed.")]),
    ]


def test_a_history_round_trips_exactly(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd=tmp_path, model="m")
    messages = history()
    session.sync(messages)
    assert read_messages(session.path) == messages


def test_nothing_is_written_for_an_empty_history(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(cwd=tmp_path, model="m")
    session.sync([])
    assert not session.path.exists()
    assert SessionStore(tmp_path).list() == []


def test_new_messages_are_appended_and_a_replaced_history_rewrites(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(cwd=tmp_path, model="m")
    messages = history()
    session.sync(messages[:2])
    first_lines = session.path.read_text().splitlines()
    session.sync(messages)
    lines = session.path.read_text().splitlines()
    assert lines[: len(first_lines)] == first_lines
    assert len(lines) == 1 + 4
    replaced: list[AnyMessage] = [UserMessage.from_text("new start")]
    session.sync(replaced)
    assert read_messages(session.path) == replaced
    assert json.loads(session.path.read_text().splitlines()[0])["type"] == "session"


def test_list_latest_and_find(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    old = store.create(cwd=here, model="m")
    old.sync([UserMessage.from_text("old question")])
    new = store.create(cwd=elsewhere, model="m")
    new.sync([UserMessage.from_text("new question")])
    os.utime(old.path, (1_000_000, 1_000_000))

    listed = store.list()
    assert [info.id for info in listed] == [new.id, old.id]
    assert listed[1].title == "old question"
    assert listed[1].cwd == str(here)

    latest_here = store.latest(here)
    assert latest_here is not None and latest_here.id == old.id
    latest_anywhere = store.latest(tmp_path / "nowhere")
    assert latest_anywhere is not None and latest_anywhere.id == new.id
    assert store.find(old.id).path == old.path
    assert store.find(str(new.path)).id == new.id
    with pytest.raises(SessionError, match="no saved session"):
        store.find("nope")


def test_a_loaded_session_continues_by_appending(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create(cwd=tmp_path, model="m")
    messages = history()
    first.sync(messages)
    again = store.open(store.list()[0])
    loaded = again.load()
    loaded.append(UserMessage.from_text("more"))
    again.sync(loaded)
    assert len(again.path.read_text().splitlines()) == 1 + 5
    assert read_messages(again.path)[-1] == loaded[-1]


def test_a_corrupt_line_is_reported_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "session", "id": "x"}\nnot json\n')
    with pytest.raises(SessionError, match=r"bad.jsonl:2"):
        read_messages(path)
