"""Session files that were tampered with, cut by a crash, or saved by two writers at once."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from yoagent.core import (
    AssistantMessage,
    CustomMessage,
    Session,
    SessionError,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core import _session as session_module
from yoagent.core.session import SessionCorruptError


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def calling(*call_ids: str, stop: StopReason = StopReason.TOOL_USE) -> AssistantMessage:
    return AssistantMessage(
        content=[
            ToolCall(id=call_id, name="bash", arguments={"command": "ls"}) for call_id in call_ids
        ],
        stop_reason=stop,
    )


def result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="bash", content=[TextContent(text="a.txt")]
    )


# -- a tampered line (issue 10, item 12) ------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        '{"head": []}',
        '{"head": {"x": 1}}',
        '{"head": 3}',
        '{"id": [], "parent_id": null, "message": {}}',
    ],
)
def test_tampered_session_line_is_a_session_error_not_a_type_error(line: str) -> None:
    good = Session()
    good.append(user("a"))
    with pytest.raises(SessionCorruptError, match="line 1"):
        Session.from_jsonl(line + "\n" + good.to_jsonl())


# -- a save cut by a crash inside a tool result (issue 10, item 10) --------------------------


def _cut_inside_the_last_result(path: Path) -> None:
    data = path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last + 20])  # the result line, cut 20 bytes in


def test_session_cut_inside_a_tool_result_loads_with_the_dangling_call_closed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("list"), calling("c1", "c2"), result("c1"), result("c2")])
    session.save(path)
    _cut_inside_the_last_result(path)

    loaded = Session.load(path)
    messages = loaded.path_messages()
    assert [type(m).__name__ for m in messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
    ]
    closed = messages[-1]
    assert isinstance(closed, ToolResultMessage)
    assert (closed.tool_call_id, closed.tool_name, closed.is_error) == ("c2", "bash", True)
    assert closed.text == session_module.LOST_TOOL_RESULT
    kept = messages[2]
    assert isinstance(kept, ToolResultMessage) and (kept.tool_call_id, kept.is_error) == (
        "c1",
        False,
    )
    problems = [str(warning) for warning in loaded.load_warnings]
    assert any("line 4" in p for p in problems)  # the cut line
    assert any("c2" in p and "no result" in p for p in problems)  # the repair

    # The repair is saved with the next save, and a second load finds nothing to repair.
    loaded.append(user("go on"))
    loaded.save(path)
    again = Session.load(path)
    assert again.load_warnings == []
    assert again.path_messages() == loaded.path_messages()


def test_session_cut_right_after_a_tool_call_closes_every_call(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("list"), calling("c1", "c2")])
    session.save(path)
    loaded = Session.load(path)
    tail = loaded.path_messages()[2:]
    assert [(m.tool_call_id, m.is_error) for m in tail] == [("c1", True), ("c2", True)]  # type: ignore[union-attr]
    assert Session.from_jsonl(session.to_jsonl()).path_messages()[2:] == tail


@pytest.mark.parametrize(
    "history",
    [
        [user("list"), calling("c1"), result("c1")],
        [user("list"), calling("c1", stop=StopReason.ABORTED)],  # the loop leaves these too
        [user("list"), calling("c1", stop=StopReason.ERROR)],
        [user("list"), calling("c1"), user("never mind")],  # not a cut: the history moved on
        [user("just text")],
        [],
    ],
)
def test_a_session_without_a_dangling_call_loads_unchanged(
    tmp_path: Path, history: list[UserMessage | AssistantMessage | ToolResultMessage]
) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend(history)
    session.save(path)
    loaded = Session.load(path)
    assert loaded.entries == session.entries
    assert loaded.load_warnings == []


def test_only_the_head_branch_is_closed(tmp_path: Path) -> None:
    session = Session()
    ask = session.append(user("list"))
    session.append(calling("c1"))  # an old branch left dangling
    session.seek(ask)
    session.append(AssistantMessage(content=[TextContent(text="done")]))
    loaded = Session.from_jsonl(session.to_jsonl())
    assert loaded.entries == session.entries


def test_custom_messages_after_the_call_do_not_hide_it() -> None:
    session = Session()
    session.extend([user("list"), calling("c1"), CustomMessage(kind="note", data=1)])
    loaded = Session.from_jsonl(session.to_jsonl())
    closed = loaded.path_messages()[-1]
    assert isinstance(closed, ToolResultMessage) and closed.tool_call_id == "c1"


# -- two writers (issue 10, item 8) -----------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="the save lock is POSIX-only (fcntl)")
def test_concurrent_session_saves_lose_no_acknowledged_entry(tmp_path: Path) -> None:
    """Two writers load, append and save the same file in a loop. A save either lands or
    raises SessionError (the file changed since the writer read it); every save that
    returned is in the final file."""
    path = tmp_path / "s.jsonl"
    seed = Session()
    seed.append(user("seed"))
    seed.save(path)
    acknowledged: list[str] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def writer(name: str) -> None:
        try:
            for index in range(150):
                text = f"{name}-{index}"
                try:
                    session = Session.load(path)
                    session.append(user(text))
                    session.save(path)
                except SessionError:
                    continue
                with lock:
                    acknowledged.append(text)
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    final = Session.load(path)
    assert final.load_warnings == []
    stored = {m.text for m in (e.message for e in final.entries) if isinstance(m, UserMessage)}
    missing = [text for text in acknowledged if text not in stored]
    assert missing == [], f"{len(missing)} of {len(acknowledged)} acknowledged saves lost"
    assert len(acknowledged) > 10  # the writers did make progress
