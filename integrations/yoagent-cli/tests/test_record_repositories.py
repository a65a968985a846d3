"""``record.open_recording`` in this process: a new or empty folder becomes an agent
repository, one that is already made is opened with the session's goal, and a file, a
folder of something else or a path that cannot be made is refused, word for word."""

from __future__ import annotations

from pathlib import Path

import pytest

from yoagent.cli.record import AGENT_ID, RecordError, open_recording
from yoagent.gasp import AgentRepo


def goal_titles(path: Path) -> list[str]:
    recording = open_recording(path, "later")  # the graph read back by a second session
    try:
        return sorted(
            str(node.props["title"]) for node in recording.recorder.graph().of_kind("goal")
        )
    finally:
        recording.close()


@pytest.mark.parametrize("make", [False, True])
def test_a_new_or_empty_folder_becomes_an_agent_repository(tmp_path: Path, make: bool) -> None:
    path = tmp_path / "repo"
    if make:
        path.mkdir()
    recording = open_recording(path, "20260101-000000-0001")
    recording.close()
    assert AgentRepo.open(path).manifest().agent_id == AGENT_ID == "yoagent"
    assert goal_titles(path) == ["yoagent session 20260101-000000-0001", "yoagent session later"]


def test_a_repository_made_before_is_opened_not_made_again(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    open_recording(path, "first").close()
    manifest = (path / "AGENT.md").read_text()
    open_recording(path, "second").close()
    assert (path / "AGENT.md").read_text() == manifest
    assert goal_titles(path) == [
        "yoagent session first",
        "yoagent session later",
        "yoagent session second",
    ]


def test_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(RecordError) as raised:
        open_recording(path, "s")
    assert str(raised.value) == f"--record {path}: not a folder"


def test_a_folder_holding_something_else_is_refused_not_scaffolded(tmp_path: Path) -> None:
    path = tmp_path / "project"
    path.mkdir()
    (path / "main.py").write_text("print()\n")
    with pytest.raises(RecordError) as raised:
        open_recording(path, "s")
    assert str(raised.value) == (
        f"--record {path}: not an agent repository (no AGENT.md); give a new or empty "
        "folder to create one"
    )
    assert sorted(p.name for p in path.iterdir()) == ["main.py"]


def test_a_path_that_cannot_be_made_is_refused_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    path = blocker / "repo"
    with pytest.raises(RecordError) as raised:
        open_recording(path, "s")
    message = str(raised.value)
    assert message.startswith(f"--record {path}: ")
    assert "Not a directory" in message or "not a directory" in message
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__


def test_a_repository_that_will_not_open_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "AGENT.md").write_text("not a manifest\n")
    with pytest.raises(RecordError) as raised:
        open_recording(path, "s")
    assert str(raised.value).startswith(f"--record {path}: ")
