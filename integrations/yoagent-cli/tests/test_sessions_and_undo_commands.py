"""``/sessions`` and ``/undo`` in-process, word for word: each refusal, the listing (the
current session marked, 20 shown and the rest counted, titles cut at 50), ``prune``'s
default and its bound at 0 days, and what ``/undo`` says for each file and turn."""

from __future__ import annotations

import hashlib
import os
import time
from datetime import datetime
from pathlib import Path

import pytest
from test_commands import conversation

from yoagent.cli.changes import FileChange, Turn
from yoagent.cli.commands import Commands
from yoagent.core import UserMessage

DAY = 86_400


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lines(text: str) -> list[str]:
    return text.splitlines()


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("/sessions delete", "error: /sessions delete takes a session id (see /sessions)"),
        ("/sessions delete   ", "error: /sessions delete takes a session id (see /sessions)"),
        ("/sessions prune soon", "error: /sessions prune takes a number of days, 1 or more"),
        ("/sessions frob", "error: /sessions takes nothing, 'delete ID' or 'prune DAYS'"),
        ("/sessions", "no saved sessions"),
    ],
)
async def test_sessions_refusals_word_for_word(tmp_path: Path, command: str, said: str) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch(command) is False
    assert lines(out.getvalue()) == [said]


async def test_deleting_the_current_session_is_refused(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one")
    await conv.agent.prompt("first")
    conv.save()
    assert await Commands(conv).dispatch(f"/sessions delete {conv.session.id}") is False
    assert lines(out.getvalue()) == ["error: that is the current session; /clear first"]
    assert conv.session.path.exists()


def _old_session(conv_root: Path, name: str, age_days: float) -> Path:
    path = conv_root / f"{name}.jsonl"
    path.write_text("")
    stamp = time.time() - age_days * DAY
    os.utime(path, (stamp, stamp))
    return path


async def test_prune_takes_30_days_by_default(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one")
    await conv.agent.prompt("first")
    conv.save()
    recent = _old_session(conv.store.root, "20200101-000000-0001", 29)
    _old_session(conv.store.root, "20200101-000000-0002", 31)
    assert await Commands(conv).dispatch("/sessions prune") is False
    assert lines(out.getvalue()) == ["deleted 1 session(s) older than 30 days"]
    assert sorted(info.id for info in conv.store.list()) == sorted([conv.session.id, recent.stem])


async def test_prune_0_or_less_is_refused_and_deletes_nothing(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one")
    await conv.agent.prompt("first")
    conv.save()
    _old_session(conv.store.root, "20200101-000000-0001", 2)
    commands = Commands(conv)
    assert await commands.dispatch("/sessions prune 0") is False
    assert await commands.dispatch("/sessions prune -3") is False
    assert await commands.dispatch("/sessions prune soon") is False
    assert len(conv.store.list()) == 2
    refusal = "error: /sessions prune takes a number of days, 1 or more"
    assert lines(out.getvalue()) == [refusal] * 3


async def test_the_listing_marks_the_current_one_and_counts_past_twenty(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one")
    title = "a question whose title is long enough to be cut somewhere past fifty characters"
    await conv.agent.prompt(title)
    conv.save()
    for index in range(22):
        _old_session(conv.store.root, f"20200101-000000-{index:04d}", 1 + index)
    assert await Commands(conv).dispatch("/sessions") is False
    shown = lines(out.getvalue())
    assert len(shown) == 21
    found = conv.store.list()
    when = datetime.fromtimestamp(found[0].modified).strftime("%Y-%m-%d %H:%M")
    assert shown[0] == f"* {conv.session.id}  {when}  {tmp_path}  {title[:50]}"
    other = found[1]
    when = datetime.fromtimestamp(other.modified).strftime("%Y-%m-%d %H:%M")
    assert shown[1] == f"  {other.id}  {when}    "
    assert all(line.startswith("  2020") for line in shown[1:20])
    assert shown[20] == "  … and 3 older"


async def test_exactly_twenty_sessions_are_all_listed_with_no_count(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.store.root.mkdir(parents=True)
    for index in range(20):
        _old_session(conv.store.root, f"20200101-000000-{index:04d}", 1 + index)
    await Commands(conv).dispatch("/sessions")
    assert len(lines(out.getvalue())) == 20


async def test_undo_with_nothing_to_undo(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch("/undo") is False
    assert lines(out.getvalue()) == ["nothing to undo in this conversation"]


async def test_undo_takes_the_turn_out_and_says_what_it_did_to_each_file(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one", "two")
    await conv.agent.prompt("first")
    kept = list(conv.agent.messages)
    await conv.agent.prompt("second")
    prompt = conv.agent.messages[len(kept)]
    edited, created, lost = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    edited.write_text("new")
    created.write_text("made")
    changes = [
        FileChange(edited, "a.txt", b"old", sha256(b"new")),
        FileChange(created, "b.txt", None, sha256(b"made")),
        FileChange(lost, "c.txt", None, None, unkept="was too large"),
    ]
    conv.changes.turns.append(Turn(changes=changes, prompt=prompt))
    assert await Commands(conv).dispatch("/undo") is False
    assert lines(out.getvalue()) == [
        "  restored a.txt",
        "  removed b.txt (the agent created it)",
        "  left c.txt (no copy was kept: it was too large)",
        "the last turn is out of the conversation",
    ]
    assert conv.agent.messages == kept
    assert edited.read_text() == "old" and not created.exists()


async def test_undo_of_a_turn_without_changes_or_after_a_compaction(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one")
    await conv.agent.prompt("first")
    conv.changes.turns.append(Turn(prompt=conv.agent.messages[0]))
    conv.changes.turns.append(Turn(prompt=UserMessage.from_text("compacted away")))
    commands = Commands(conv)
    assert await commands.dispatch("/undo") is False
    assert lines(out.getvalue()) == [
        "(the conversation was compacted since; it keeps that turn)",
        "(that turn changed no files)",
    ]
    assert len(conv.agent.messages) == 2
    assert await commands.dispatch("/undo") is False
    assert lines(out.getvalue())[2:] == [
        "the last turn is out of the conversation",
        "(that turn changed no files)",
    ]
    assert conv.agent.messages == []
