"""The session store at its edges: where it lives, ids, titles, the sidecar and when it is
written, opening and finding sessions, and pruning by age and by size exactly at the
limits (a session that cannot be deleted skipped, one kept never counted out)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from yoagent.cli.session_store import SessionStore, default_root, meta_path
from yoagent.core import AssistantMessage, SessionError, TextContent, UserMessage
from yoagent.core.extension import AGENT_STOPPED_PREFIX

DAY = 86_400
MB = 1024 * 1024


def said(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


def test_the_store_lives_in_the_users_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_root() == tmp_path / "data" / "yoagent" / "sessions"
    assert SessionStore().root == tmp_path / "data" / "yoagent" / "sessions"


def test_a_new_session_has_a_dated_id_and_start_time_and_saves_into_new_folders(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "deep" / "sessions")
    session = store.create(cwd=tmp_path, model="m1")
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", session.id)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", session.created)
    session.save([UserMessage.from_text("go")])
    [info] = store.list()
    assert (info.id, info.cwd, info.model, info.created) == (
        session.id,
        str(tmp_path),
        "m1",
        session.created,
    )


def test_the_title_is_the_first_typed_prompt_on_one_line_cut_at_80(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd=tmp_path, model="m")
    prompt = "fix   the\nbug " + "x" * 100
    session.save(
        [
            said("a reply first"),
            UserMessage.from_text(f"{AGENT_STOPPED_PREFIX} by a hook"),
            UserMessage.from_text(prompt),
        ]
    )
    assert store.list()[0].title == " ".join(prompt.split())[:80]
    assert len(store.list()[0].title) == 80


def test_a_session_without_a_typed_prompt_has_no_title(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(cwd=tmp_path, model="m").save([said("only a reply")])
    assert store.list()[0].title == ""


def test_the_sidecar_is_written_when_the_title_changes_or_it_is_missing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd=tmp_path, model="m")
    session.save([said("no prompt yet")])
    assert store.list()[0].title == ""
    session.save([said("no prompt yet"), UserMessage.from_text("café now")])
    assert store.list()[0].title == "café now"
    assert '"title": "café now"' in meta_path(session.path).read_text(encoding="utf-8")
    meta_path(session.path).unlink()
    session.save([said("no prompt yet"), UserMessage.from_text("café now"), said("ok")])
    assert json.loads(meta_path(session.path).read_text(encoding="utf-8"))["model"] == "m"


def test_a_listed_session_without_a_sidecar_has_empty_fields(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd=tmp_path, model="m")
    session.save([UserMessage.from_text("go")])
    meta_path(session.path).unlink()
    [info] = store.list()
    assert (info.cwd, info.model, info.created, info.title) == ("", "", "", "")


def test_an_opened_session_keeps_its_folder_model_start_and_title(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd=tmp_path, model="m2")
    session.save([UserMessage.from_text("the prompt")])
    opened = store.open(store.list()[0])
    assert (opened.cwd, opened.model, opened.created, opened.title) == (
        str(tmp_path),
        "m2",
        session.created,
        "the prompt",
    )


def test_a_session_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    (tmp_path / "broken.jsonl").mkdir()
    with pytest.raises(SessionError) as error:
        store.open(store.list()[0])
    assert str(error.value) == f"cannot read session {tmp_path / 'broken.jsonl'}: Is a directory"


def test_find_names_at_most_five_of_several_matches_and_takes_only_jsonl_paths(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "sessions")
    (tmp_path / "sessions").mkdir()
    for n in range(6):
        (tmp_path / "sessions" / f"2026-{n}.jsonl").write_text("")
    with pytest.raises(SessionError) as error:
        store.find("2026")
    listed = [info.id for info in store.list()][:5]
    assert str(error.value) == f"'2026' matches several sessions: {', '.join(listed)}"
    notes = tmp_path / "notes.txt"
    notes.write_text("")
    with pytest.raises(SessionError, match="no saved session"):
        store.find(str(notes))


def test_deleting_a_session_already_gone_is_no_error(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(cwd=tmp_path, model="m").save([UserMessage.from_text("go")])
    [info] = store.list()
    info.path.unlink()
    store.delete(info)
    assert not meta_path(info.path).exists()


def aged(path: Path, modified: float) -> None:
    os.utime(path, (modified, modified))


def test_prune_deletes_nothing_unless_given_a_limit(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with (tmp_path / "old.jsonl").open("wb") as file:
        file.truncate(2 * MB)
    aged(tmp_path / "old.jsonl", time.time() - 400 * DAY)
    assert store.prune() == []


def test_prune_by_age_is_strictly_older_than_the_days_from_now(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    now = 2_000_000_000.0
    for name, modified in [("edge", now - DAY), ("older", now - DAY - 0.5), ("new", now)]:
        (tmp_path / f"{name}.jsonl").write_text("")
        aged(tmp_path / f"{name}.jsonl", modified)
    deleted = store.prune(max_age_days=1, now=now)
    assert [info.id for info in deleted] == ["older"]
    assert sorted(info.id for info in store.list()) == ["edge", "new"]


def test_prune_by_age_without_now_counts_from_the_clock(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    (tmp_path / "recent.jsonl").write_text("")
    assert store.prune(max_age_days=1, now=time.time() + 2 * DAY)[0].id == "recent"


def test_a_session_that_cannot_be_deleted_is_skipped(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    (tmp_path / "stuck.jsonl").mkdir()  # unlink cannot remove a folder
    aged(tmp_path / "stuck.jsonl", 1_000_000_000)
    assert store.prune(max_age_days=1) == []
    assert (tmp_path / "stuck.jsonl").is_dir()


def sized(root: Path, *sizes: int) -> None:
    """Sessions ``s0`` (oldest), ``s1``, ... of these sizes in bytes."""
    root.mkdir(exist_ok=True)
    for index, size in enumerate(sizes):
        path = root / f"s{index}.jsonl"
        path.write_bytes(b"x" * size)
        aged(path, 1_000_000_000 + index)


def test_prune_by_size_keeps_exactly_the_limit(tmp_path: Path) -> None:
    sized(tmp_path, MB // 2, MB // 2)
    assert SessionStore(tmp_path).prune(max_total_mb=1) == []


def test_prune_by_size_deletes_the_oldest_until_under_the_limit(tmp_path: Path) -> None:
    sized(tmp_path / "just", 1, MB // 2, MB // 2)  # one byte over
    assert [info.id for info in SessionStore(tmp_path / "just").prune(max_total_mb=1)] == ["s0"]
    sized(tmp_path, 100 * 1024, 500 * 1024, 450 * 1024)  # 1 MB and 2 KB
    deleted = SessionStore(tmp_path).prune(max_total_mb=1)
    assert [info.id for info in deleted] == ["s0"]
    sized(tmp_path / "more", 100 * 1024, 500 * 1024, 600 * 1024)
    deleted = SessionStore(tmp_path / "more").prune(max_total_mb=1)
    assert [info.id for info in deleted] == ["s0", "s1"]


def test_prune_by_size_passes_over_a_kept_session(tmp_path: Path) -> None:
    sized(tmp_path, 600 * 1024, 300 * 1024, 300 * 1024)
    deleted = SessionStore(tmp_path).prune(max_total_mb=1, keep={"s0"})
    assert [info.id for info in deleted] == ["s1"]
