"""A session file's edges: each corrupt record's reason word for word, the line format,
a repaired tool call's warning and result, a blank line inside the file, the bytes a save
writes after a partial or unterminated last line, a save with nothing new, the file's mode,
a file removed or changed since it was read, loads that share the folder's lock, and the
tree's own edges (ids, ``KeyError`` texts, a checkpoint just before the head, a history
that departs at its first message, a message that cannot be dumped as JSON). (Added from
mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
from pathlib import Path

import pytest

from yoagent.core._session import (
    LOST_TOOL_RESULT,
    LoadWarning,
    Session,
    SessionCorruptError,
    SessionError,
)
from yoagent.core._types.content import TextContent, ToolCall
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
)

USER = {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}


def _user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def _reply(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


def _entry(entry_id: str, parent: str | None = None, message: object = USER) -> str:
    return json.dumps({"id": entry_id, "parent_id": parent, "message": message})


def _corrupt(*lines: str) -> SessionCorruptError:
    text = "\n".join([*lines, _entry("zz-last")]) + "\n"  # the bad line is never the last
    with pytest.raises(SessionCorruptError) as raised:
        Session.from_jsonl(text)
    return raised.value


# -- corrupt records ------------------------------------------------------------------------


def test_a_record_that_is_not_an_object_is_named_with_the_default_source() -> None:
    error = _corrupt("[1]")
    assert str(error) == "<jsonl>: line 1: a record must be a JSON object"
    assert (error.line, error.problem) == (1, "a record must be a JSON object")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (_entry(""), "an entry id must be a non-empty string"),
        (_entry("a") + "\n" + _entry("a"), "entry 'a' appears twice"),
        (
            _entry("a", message={"role": "user", "content": 5, "timestamp": 1}),
            "entry 'a' holds an invalid message (user.content: Input should be a valid list)",
        ),
    ],
)
def test_each_corrupt_entry_is_named_for_what_is_wrong(line: str, problem: str) -> None:
    assert _corrupt(line).problem == problem


def test_a_line_that_is_not_utf8_names_the_column_of_its_first_bad_byte(tmp_path: Path) -> None:
    # A surrogate encoded as UTF-8 (what "surrogatepass" writes) is not UTF-8 either.
    bad = b'{"id": "a", "parent_id": null, "message": "\xed\xa0\x80"}'
    (tmp_path / "s.jsonl").write_bytes(bad + b"\n" + _entry("b").encode() + b"\n")
    with pytest.raises(SessionCorruptError) as raised:
        Session.load(tmp_path / "s.jsonl")
    assert raised.value.problem == "not UTF-8 (invalid byte at column 44)"


def test_a_blank_line_inside_the_file_is_skipped_not_an_end() -> None:
    session = Session.from_jsonl(_entry("a") + "\n\n" + _entry("b", "a") + "\n")
    assert [entry.id for entry in session.entries] == ["a", "b"]


# -- the line format and a repaired tool call ---------------------------------------------------


def test_an_entry_line_is_compact_json_with_text_kept_as_it_is() -> None:
    session = Session()
    entry_id = session.append(_user("café"))
    (line,) = session.to_jsonl().splitlines()
    assert line.startswith(f'{{"id":"{entry_id}","parent_id":null,"message":{{"content":[{{"text"')
    assert "café" in line


def test_tool_calls_a_cut_save_left_open_are_answered_and_reported_at_their_line() -> None:
    call = AssistantMessage(
        content=[
            ToolCall(id="c1", name="bash", arguments={}),
            ToolCall(id="c2", name="bash", arguments={}),
        ],
        stop_reason=StopReason.TOOL_USE,
        timestamp=1234,
    )
    source = Session()
    source.extend([_user("go"), call])
    session = Session.from_jsonl(source.to_jsonl())
    assert session.load_warnings == [
        LoadWarning(
            line=3,
            problem="tool call 'c1', 'c2' has no result (the save was cut off); "
            "answered it as an error",
        )
    ]
    results = session.path_messages()[2:]
    assert all(isinstance(r, ToolResultMessage) for r in results)
    assert [(r.tool_call_id, r.timestamp, r.text) for r in results] == [  # type: ignore[union-attr]
        ("c1", 1234, LOST_TOOL_RESULT),
        ("c2", 1234, LOST_TOOL_RESULT),
    ]


def test_a_loaded_files_repair_warning_counts_its_lines(tmp_path: Path) -> None:
    call = AssistantMessage(
        content=[ToolCall(id="c1", name="bash", arguments={})], stop_reason=StopReason.TOOL_USE
    )
    source = Session()
    source.extend([_user("go"), _reply("thinking"), _user("again"), call])
    (tmp_path / "s.jsonl").write_text(source.to_jsonl())
    assert [w.line for w in Session.load(tmp_path / "s.jsonl").load_warnings] == [5]


# -- what a save writes -----------------------------------------------------------------------


def test_after_a_partial_last_line_the_save_writes_the_file_as_new(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "cut off')
    session = Session.load(path)
    assert len(session.load_warnings) == 1
    session.append(_user("a"))
    session.save(path)
    assert path.read_text() == session.to_jsonl()


def test_after_an_unterminated_last_line_the_save_adds_the_newline_first(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_entry("a"))  # no newline at the end
    session = Session.load(path)
    added = session.append(_user("b"))
    session.save(path)
    assert path.read_text().split("\n")[:2] == [
        _entry("a"),
        session._entry_line(session.get(added)).strip(),
    ]  # pyright: ignore[reportPrivateUsage]
    assert len(Session.load(path)) == 2


def test_after_a_clean_file_the_save_appends_its_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_entry("a") + "\n")
    session = Session.load(path)
    added = session.append(_user("b"))
    session.save(path)
    line = session._entry_line(session.get(added))  # pyright: ignore[reportPrivateUsage]
    assert path.read_text() == _entry("a") + "\n" + line


def test_a_loaded_file_saved_with_nothing_new_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_entry("a") + "\n" + _entry("b") + "\n")  # head: b, the last entry
    session = Session.load(path)
    session.save(path)
    assert path.read_text() == _entry("a") + "\n" + _entry("b") + "\n"


def test_a_save_with_nothing_new_does_not_look_at_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(_user("a"))
    session.save(path)
    with path.open("a") as file:
        file.write(_entry("other") + "\n")  # another writer
    session.save(path)  # nothing to write: no check, no error
    assert path.read_text().endswith(_entry("other") + "\n")


def test_a_new_session_file_is_private(tmp_path: Path) -> None:
    session = Session()
    session.append(_user("a"))
    session.save(tmp_path / "s.jsonl")
    assert (tmp_path / "s.jsonl").stat().st_mode & 0o777 == 0o600


def test_a_file_removed_since_it_was_read_is_refused_or_written_anew(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(_user("a"))
    session.save(path)
    session.append(_user("b"))
    path.unlink()
    with pytest.raises(SessionError) as raised:
        session.save(path)
    assert str(raised.value) == f"{path}: the session file was removed since it was read"
    session.save(path, overwrite=True)
    assert path.read_text() == session.to_jsonl()
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_file_changed_since_it_was_read_is_refused_with_both_sizes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(_user("a"))
    session.save(path)
    size = path.stat().st_size
    with path.open("a") as file:
        file.write("x\n")
    session.append(_user("b"))
    with pytest.raises(SessionError) as raised:
        session.save(path)
    assert str(raised.value).endswith(
        f"({size} bytes expected, {size + 2} found); save to a new path"
    )


def test_a_load_shares_the_folders_lock_with_other_readers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_entry("a") + "\n")
    reader = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(reader, fcntl.LOCK_SH)  # another load, in the middle of reading
    loaded: list[Session] = []
    try:
        thread = threading.Thread(target=lambda: loaded.append(Session.load(path)), daemon=True)
        thread.start()
        thread.join(5)
        assert len(loaded) == 1
    finally:
        os.close(reader)


# -- the tree ---------------------------------------------------------------------------------


def test_entry_ids_are_twelve_hex_digits() -> None:
    session = Session()
    assert re.fullmatch(r"[0-9a-f]{12}", session.append(_user("a")))


def test_an_unknown_id_is_named_in_the_key_error() -> None:
    session = Session()
    for look in (session.get, session.children):
        with pytest.raises(KeyError) as raised:
            look("nope")
        assert raised.value.args == ("no session entry with id 'nope'",)


def test_a_checkpoint_just_before_the_head_counts() -> None:
    session = Session()
    first, checkpoint, _ = session.extend([_user("a"), _reply("b"), _user("c")])
    assert session.seek_checkpoint() == checkpoint
    assert first != checkpoint


def test_a_history_that_departs_at_its_first_message_starts_a_new_root() -> None:
    session = Session()
    old = session.extend([_user("a"), _reply("b")])
    (new,) = session.append_new([_user("z")])
    assert session.get(new).parent_id is None
    assert session.branches() == [old[1], new]


def test_a_message_that_cannot_be_dumped_as_json_is_not_taken_for_a_stored_one() -> None:
    session = Session()
    stored = AssistantMessage(content=[ToolCall(id="c", name="t", arguments={"x": 1})])
    session.append(stored)
    odd: AgentMessage = AssistantMessage(
        content=[ToolCall(id="c", name="t", arguments={"x": object()})]
    )
    assert len(session.append_new([odd])) == 1


def test_an_entry_line_is_strict_json_whatever_the_arguments_hold() -> None:
    session = Session()
    arguments = {"inf": float("inf"), "pair": (1, 2), "raw": b"ab"}
    session.append(AssistantMessage(content=[ToolCall(id="c", name="t", arguments=arguments)]))

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    (line,) = session.to_jsonl().splitlines()
    record = json.loads(line, parse_constant=refuse)
    assert record["message"]["content"][0]["arguments"] == {
        "inf": None,
        "pair": [1, 2],
        "raw": "ab",
    }
