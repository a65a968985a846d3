"""Saved sessions: core ``Session`` files that round-trip a history exactly, plus a sidecar."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_testing import saved_messages

from yoagent.cli.session_store import SavedSession, SessionStore, meta_path
from yoagent.core import (
    AgentMessage,
    AssistantMessage,
    Session,
    SessionError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)


def history() -> list[AgentMessage]:
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
    session = SessionStore(tmp_path).create(cwd=tmp_path, model="m")
    messages = history()
    session.save(messages)
    assert saved_messages(session.path) == messages


def test_the_sidecar_holds_folder_model_start_and_first_prompt(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(cwd=tmp_path / "project", model="the-model")
    session.save(history())
    meta = json.loads(meta_path(session.path).read_text())
    assert meta == {
        "cwd": str(tmp_path / "project"),
        "model": "the-model",
        "created": session.created,
        "title": "fix the bug",
    }
    assert meta_path(session.path).name == f"{session.id}.meta.json"


def test_nothing_is_written_for_an_empty_history(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(cwd=tmp_path, model="m")
    session.save([])
    assert not session.path.exists()
    assert not meta_path(session.path).exists()
    assert SessionStore(tmp_path).list() == []


def test_new_messages_are_appended(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(cwd=tmp_path, model="m")
    messages = history()
    session.save(messages[:2])
    first = session.path.read_text()
    session.save(messages)
    text = session.path.read_text()
    assert text.startswith(first)
    assert len(text.splitlines()) == 4


def test_a_compacted_history_forks_a_branch_and_resumes_on_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd=tmp_path, model="m")
    messages = history()
    session.save(messages)
    before = session.path.read_text()
    compacted: list[AgentMessage] = [
        messages[0],
        UserMessage.from_text("[summary of earlier turns]"),
        messages[3],
    ]
    session.save(compacted)
    assert session.path.read_text().startswith(before)  # appended, never rewritten
    loaded = Session.load(session.path)
    assert loaded.path_messages() == compacted
    assert len(loaded) == 6  # the old branch is kept
    assert len(loaded.branches()) == 2

    again = store.open(store.list()[0])
    assert again.messages == compacted
    more = UserMessage.from_text("more")
    again.save([*compacted, more])
    assert saved_messages(session.path)[-1] == more


def test_list_latest_and_find(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    old = store.create(cwd=here, model="m")
    old.save([UserMessage.from_text("old question")])
    new = store.create(cwd=elsewhere, model="m")
    new.save([UserMessage.from_text("new question")])
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
    with pytest.raises(SessionError, match="matches several"):
        store.find(old.id[:4])  # the year
    assert store.find(str(new.path)).id == new.id
    with pytest.raises(SessionError, match="no saved session"):
        store.find("nope")


def test_any_core_session_file_resumes_without_a_sidecar(tmp_path: Path) -> None:
    messages = history()
    plain = Session()
    plain.extend(messages)
    path = tmp_path / "elsewhere.jsonl"
    plain.save(path)
    store = SessionStore(tmp_path / "sessions")
    info = store.find(str(path))
    assert (info.id, info.cwd, info.title) == ("elsewhere", "", "")
    assert store.open(info).messages == messages


def test_a_loaded_session_continues_by_appending(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create(cwd=tmp_path, model="m")
    first.save(history())
    again = store.open(store.list()[0])
    loaded = again.messages
    loaded.append(UserMessage.from_text("more"))
    again.save(loaded)
    assert len(again.path.read_text().splitlines()) == 5
    assert saved_messages(again.path)[-1] == loaded[-1]


def test_a_corrupt_last_line_is_reported_and_the_rest_resumed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create(cwd=tmp_path, model="m")
    messages = history()
    first.save(messages)
    with first.path.open("a") as file:
        file.write('{"id": "cut-off", "parent')
    again = store.open(store.list()[0])
    assert len(again.warnings) == 1
    assert "line 5" in again.warnings[0] and str(first.path) in again.warnings[0]
    assert again.messages == messages
    again.save([*again.messages, UserMessage.from_text("more")])
    assert "cut-off" not in first.path.read_text()  # the next save drops the bad line
    assert Session.load(first.path).load_warnings == []


def test_a_corrupt_line_before_the_last_is_an_error_naming_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create(cwd=tmp_path, model="m")
    first.save(history())
    lines = first.path.read_text().splitlines()
    lines[1] = "not json"
    first.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionError, match=r"line 2"):
        store.open(store.list()[0])


def test_a_file_changed_elsewhere_is_saved_under_a_new_id(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create(cwd=tmp_path, model="m")
    messages = history()
    first.save(messages[:2])
    one = store.open(store.list()[0])
    two: SavedSession = store.open(store.list()[0])
    from_one, from_two = UserMessage.from_text("from one"), UserMessage.from_text("from two")
    one.save([*messages[:2], from_one])
    old_id = two.id
    assert two.save([*messages[:2], from_two]) == old_id
    assert two.id != old_id
    assert saved_messages(one.path) == [*messages[:2], from_one]
    assert saved_messages(two.path) == [*messages[:2], from_two]
    assert {info.id for info in store.list()} == {old_id, two.id}
    assert store.find(two.id).cwd == str(tmp_path)
