"""Session trees: branching, post-run sync, and JSONL persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yoagent.core._session import (
    LOST_TOOL_RESULT,
    LoadWarning,
    Session,
    SessionCorruptError,
    SessionError,
)
from yoagent.core._types.config import ApiProtocol
from yoagent.core._types.content import ImageContent, TextContent, ThinkingContent, ToolCall
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    ToolResultMessage,
    Usage,
    UserMessage,
)


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def test_append_advances_the_head_and_path_follows_it() -> None:
    session = Session()
    first = session.append(user("a"))
    second = session.append(user("b"))
    assert session.head == second
    assert session.get(second).parent_id == first
    assert [m.text for m in session.path_messages()] == ["a", "b"]  # type: ignore[union-attr]


def test_appending_after_a_seek_forks_and_never_overwrites() -> None:
    session = Session()
    a = session.append(user("a"))
    b = session.append(user("b"))
    session.seek(a)
    c = session.append(user("c"))
    assert session.get(b).message.text == "b"  # type: ignore[union-attr]
    assert [e.id for e in session.children(a)] == [b, c]
    assert session.branches() == [b, c]
    assert [m.text for m in session.path_messages()] == ["a", "c"]  # type: ignore[union-attr]
    assert [m.text for m in session.path_messages(b)] == ["a", "b"]  # type: ignore[union-attr]
    session.seek(None)
    root = session.append(user("r"))
    assert [e.id for e in session.children(None)] == [a, root]
    with pytest.raises(KeyError, match="nope"):
        session.seek("nope")


def test_append_new_adds_only_what_the_branch_lacks() -> None:
    session = Session()
    history: list[AgentMessage] = [user("a"), AssistantMessage(content=[TextContent(text="b")])]
    session.extend(history)
    history.append(user("c"))
    added = session.append_new(history)
    assert len(added) == 1
    assert session.append_new(history) == []
    assert session.path_messages() == history


def test_append_new_forks_when_the_history_was_compacted() -> None:
    session = Session()
    old = [user("task"), user("x"), user("y"), user("z")]
    session.extend(old)
    old_leaf = session.head
    compacted: list[AgentMessage] = [old[0], user("[Context compacted: 2 ...]"), old[3]]
    session.append_new(compacted)
    assert session.path_messages() == compacted
    assert old_leaf is not None
    assert session.path_messages(old_leaf) == old
    assert len(session.branches()) == 2


def test_jsonl_round_trip_keeps_tree_and_head(tmp_path: Path) -> None:
    session = Session()
    a = session.append(user("a"))
    session.append(user("b"))
    session.seek(a)
    session.append(user("c"))
    session.seek(a)
    path = tmp_path / "s.jsonl"
    session.save(path)
    loaded = Session.load(path)
    assert loaded.entries == session.entries
    assert loaded.head == a
    assert loaded.load_warnings == []
    assert Session.from_jsonl(session.to_jsonl()).entries == session.entries


def test_save_appends_only_new_entries(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(user("a"))
    session.save(path)
    first = path.read_text()
    session.append(user("b"))
    session.save(path)
    text = path.read_text()
    assert text.startswith(first)
    assert len(text.splitlines()) == 2
    session.save(path)  # nothing new: nothing written
    assert path.read_text() == text
    session.seek(None)
    session.save(path)
    assert json.loads(path.read_text().splitlines()[-1]) == {"head": None}
    assert Session.load(path).head is None

    reopened = Session.open(path)
    reopened.append(user("c"))
    reopened.save(path)
    assert [m.text for m in Session.load(path).path_messages()] == ["c"]  # type: ignore[union-attr]


def test_save_refuses_a_file_changed_by_someone_else(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(user("a"))
    session.save(path)
    with path.open("a") as handle:
        handle.write("{}\n")
    session.append(user("b"))
    with pytest.raises(SessionError, match="changed on disk"):
        session.save(path)


def test_a_cut_off_last_line_is_reported_and_the_rest_loads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("a"), user("b")])
    session.save(path)
    whole = path.read_bytes()
    path.write_bytes(whole[:-15])  # a write interrupted mid-line
    loaded = Session.load(path)
    assert [m.text for m in loaded.path_messages()] == ["a"]  # type: ignore[union-attr]
    assert len(loaded.load_warnings) == 1
    warning = loaded.load_warnings[0]
    assert isinstance(warning, LoadWarning)
    assert warning.line == 2
    assert "not JSON" in str(warning)
    # The next save replaces the broken line.
    loaded.append(user("c"))
    loaded.save(path)
    again = Session.load(path)
    assert again.load_warnings == []
    assert [m.text for m in again.path_messages()] == ["a", "c"]  # type: ignore[union-attr]


def test_a_last_line_without_newline_is_kept_and_extended(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(user("a"))
    path.write_text(session.to_jsonl().rstrip("\n"))
    loaded = Session.load(path)
    loaded.append(user("b"))
    loaded.save(path)
    assert [m.text for m in Session.load(path).path_messages()] == ["a", "b"]  # type: ignore[union-attr]


def test_corruption_in_the_middle_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("a"), user("b"), user("c")])
    session.save(path)
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:20]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionCorruptError, match="line 2") as caught:
        Session.load(path)
    assert caught.value.line == 2
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id":"x","parent_id":"missing","message":{"role":"user","content":[]}}', "parent"),
        ('{"id":"x","parent_id":null,"message":{"role":"robot"}}', "invalid message"),
        ('{"what":1}', "unknown record"),
        ("[1]", "JSON object"),
        ('{"head":"nowhere"}', "names no entry"),
    ],
)
def test_invalid_records_are_named(line: str, problem: str) -> None:
    good = Session()
    good.append(user("a"))
    with pytest.raises(SessionCorruptError, match=problem):
        Session.from_jsonl(line + "\n" + good.to_jsonl())


_text = st.text(max_size=30)
_user = st.builds(lambda t: UserMessage(content=[TextContent(text=t)], timestamp=1), _text)
_assistant = st.builds(
    lambda t, th, args, n: AssistantMessage(
        content=[
            TextContent(text=t),
            ThinkingContent(
                thinking=th,
                signature="sig",
                redacted="r",
                redacted_protocol=ApiProtocol.BEDROCK_CONVERSE_STREAM,
            ),
            ToolCall(id="c1", name="bash", arguments=args),
        ],
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input=n, output=n + 1, cache_read=2, cache_write=3),
        model="m",
        provider="p",
        timestamp=2,
    ),
    _text,
    _text,
    st.dictionaries(
        st.text(max_size=5), st.integers() | st.text(max_size=5) | st.booleans(), max_size=3
    ),
    st.integers(0, 10**6),
)
_result = st.builds(
    lambda t, err: ToolResultMessage(
        tool_call_id="c1",
        tool_name="bash",
        content=[TextContent(text=t), ImageContent(data="aGk=", mime_type="image/png")],
        is_error=err,
        details={"exit": 1},
        timestamp=3,
    ),
    _text,
    st.booleans(),
)
_custom = st.builds(lambda d: CustomMessage(kind="k", data=d, timestamp=4), st.integers() | _text)
_message = st.one_of(_user, _assistant, _result, _custom)
# Each op: (message, seek-back distance or None).
_ops = st.lists(st.tuples(_message, st.none() | st.integers(0, 5)), max_size=15)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_ops)
def test_any_session_round_trips_exactly(
    tmp_path: Path, ops: list[tuple[AgentMessage, int | None]]
) -> None:
    """Whatever the messages and branching, load(save(s)) has the same entries and head
    (plus, when the head's branch ends on unanswered tool calls, their closing error
    results), and saving in several steps writes the same file as saving once."""
    session = Session()
    path = tmp_path / "round.jsonl"
    path.unlink(missing_ok=True)
    for i, (message, back) in enumerate(ops):
        if back is not None and len(session):
            entries = session.entries
            session.seek(entries[max(0, len(entries) - 1 - back)].id)
        session.append(message)
        if i % 3 == 0:
            session.save(path)
    session.save(path)
    loaded = Session.load(path)
    stored, closing = loaded.entries[: len(session)], loaded.entries[len(session) :]
    assert stored == session.entries
    assert all(
        isinstance(e.message, ToolResultMessage) and e.message.text == LOST_TOOL_RESULT
        for e in closing
    )
    assert loaded.head == (closing[-1].id if closing else session.head)
    assert loaded.path_messages()[: len(session.path_messages())] == session.path_messages()
    assert Session.from_jsonl(session.to_jsonl()).entries[: len(session)] == session.entries


def test_a_same_size_rewrite_by_someone_else_is_refused(tmp_path: Path) -> None:
    import os

    path = tmp_path / "s.jsonl"
    first = Session()
    first.append(UserMessage.from_text("aaaa"))
    first.save(path)
    other = Session.load(path)
    replaced = Session()
    replaced.append(UserMessage.from_text("bbbb"))
    data = replaced.to_jsonl().encode()
    size = len(path.read_bytes())
    path.write_bytes(data[:size].ljust(size, b" "))  # other content, the very same size
    assert path.stat().st_size == size
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))
    other.append(UserMessage.from_text("mine"))
    with pytest.raises(SessionError, match="changed on disk"):
        other.save(path)


def test_save_refuses_to_replace_a_file_it_did_not_load_or_save(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = Session()
    first.extend([user("a"), user("b")])
    first.save(path)
    before = path.read_bytes()
    other = Session()
    other.append(user("other"))
    with pytest.raises(SessionError, match="overwrite=True"):
        other.save(path)
    assert path.read_bytes() == before
    # A session that saved elsewhere is refused too, since it never loaded this file.
    other.save(tmp_path / "elsewhere.jsonl")
    with pytest.raises(SessionError, match="did not load or save"):
        other.save(path)
    other.save(path, overwrite=True)
    assert [m.text for m in Session.load(path).path_messages()] == ["other"]  # type: ignore[union-attr]
    # From then on it is this session's file: saves append again.
    other.append(user("more"))
    other.save(path)
    assert len(Session.load(path)) == 2


def test_overwrite_replaces_a_file_changed_by_someone_else(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(user("a"))
    session.save(path)
    with path.open("a") as handle:
        handle.write("{}\n")
    session.append(user("b"))
    session.save(path, overwrite=True)
    loaded = Session.load(path)
    assert loaded.load_warnings == []
    assert loaded.entries == session.entries


def test_a_whole_file_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    path = tmp_path / "s.jsonl"
    path.write_text("precious\n")
    path.chmod(0o640)
    session = Session()
    session.append(user("a"))
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])

    def crash(src: object, dst: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        session.save(path, overwrite=True)
    assert path.read_text() == "precious\n"  # untouched, and no temporary left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    assert synced
    monkeypatch.undo()
    session.save(path, overwrite=True)
    assert Session.load(path).entries == session.entries
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


@pytest.mark.parametrize(
    "message",
    [
        CustomMessage(kind="k", data={"ids": (1, 2)}),
        CustomMessage(kind="k", data={1: "a"}),
        AssistantMessage(
            content=[ToolCall(id="c", name="t", arguments={"x": float("inf")})],
            stop_reason=StopReason.TOOL_USE,
        ),
    ],
    ids=["tuple", "int-key", "inf"],
)
def test_append_new_after_a_round_trip_adds_nothing(tmp_path: Path, message: AgentMessage) -> None:
    path = tmp_path / "s.jsonl"
    history: list[AgentMessage] = [user("task"), message, user("next")]
    session = Session()
    session.append_new(history)
    session.save(path)
    loaded = Session.load(path)
    assert loaded.append_new(history) == []
    assert len(loaded) == 3
    assert len(loaded.branches()) == 1
    # A message that really differs still forks.
    assert len(loaded.append_new([history[0], user("changed")])) == 1


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_deeply_nested_last_line_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("a"), user("b")])
    path.write_text(session.to_jsonl() + _nested(100_000) + "\n")
    loaded = Session.load(path)
    assert len(loaded) == 2
    assert [w.line for w in loaded.load_warnings] == [3]
    assert "nested too deeply" in loaded.load_warnings[0].problem


def test_a_deeply_nested_middle_line_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("a"), user("b")])
    path.write_text(_nested(100_000) + "\n" + session.to_jsonl())
    with pytest.raises(SessionCorruptError, match="line 1: nested too deeply") as caught:
        Session.load(path)
    assert caught.value.line == 1


def test_invalid_utf8_is_corrupt_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.extend([user("hi"), user("there")])
    raw = session.to_jsonl().encode()
    path.write_bytes(raw.replace(b'"hi"', b'"h\xff"'))
    with pytest.raises(SessionCorruptError, match="line 1: not UTF-8"):
        Session.load(path)
    # On the last line, it is skipped and reported like a cut-off line.
    path.write_bytes(raw.replace(b'"there"', b'"ther\xff"'))
    loaded = Session.load(path)
    assert [m.text for m in loaded.path_messages()] == ["hi"]  # type: ignore[union-attr]
    assert "not UTF-8" in loaded.load_warnings[0].problem
    loaded.append(user("again"))
    loaded.save(path)
    again = Session.load(path)
    assert again.load_warnings == []
    assert [m.text for m in again.path_messages()] == ["hi", "again"]  # type: ignore[union-attr]


def test_lone_surrogates_survive_a_save_and_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session()
    session.append(user("bad \ud800 and \udcff, fine é 😀"))
    session.save(path)
    session.append(user("later \udfff"))
    session.save(path)  # later saves keep working
    path.read_bytes().decode("utf-8")  # the file is strict UTF-8
    loaded = Session.load(path)
    assert loaded.entries == session.entries
    assert Session.from_jsonl(session.to_jsonl()).entries == session.entries
