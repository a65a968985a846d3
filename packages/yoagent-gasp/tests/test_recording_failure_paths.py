"""A recording's failure paths, word for word: the error logged when recording stops, a
recording closed from a cancelled task, and the log's repair (its refusal, its log line, a
link swapped in for the log) (pinned from a mutation run of yoagent-gasp,
docs/mutation.md)."""

from __future__ import annotations

import errno
import logging
import sys
from pathlib import Path

import anyio
import git
import pytest
from gasp_helpers import log_events, make_agent, text

from yoagent.core import AgentStart, MessageEnd
from yoagent.gasp import Actor, AgentRepo, Event, NewGoal, Recorder, RepositoryError

LOG = Path("state/events.jsonl")


@pytest.fixture
def recorder(repo_dir: Path) -> Recorder:
    return Recorder.init(repo_dir, "failing-agent", NewGoal("fail well"))


async def test_a_failed_recording_logs_its_run_and_error_with_the_traceback(
    recorder: Recorder, repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    recording = recorder.recording("first")
    recording(AgentStart())
    recording(MessageEnd(message=text("partial")))
    while "run.started" not in [e["kind"] for e in log_events(repo_dir)]:  # noqa: ASYNC110
        await anyio.sleep(0.01)
    (repo_dir / ".agent" / "lease").write_text("garbage")  # the lease breaks before the commit
    with caplog.at_level(logging.ERROR, logger="yoagent.gasp"):
        recording.close()
    error = recording.error
    assert error is not None and recording.run_id is not None
    (record,) = [r for r in caplog.records if "recording stops" in r.getMessage()]
    assert record.getMessage() == (
        f"GASP recording of run {recording.run_id} failed; recording stops, the run goes on: "
        f"{error}"
    )
    assert record.exc_info is not None and record.exc_info[1] is error


async def test_a_recording_closed_by_a_cancelled_task_still_closes_its_run(
    recorder: Recorder, repo_dir: Path
) -> None:
    with anyio.CancelScope() as scope:
        async with recorder.recording("cancelled") as recording:
            recording(AgentStart())
            scope.cancel()
            await anyio.sleep(5)  # cancelled at once; leaving the block closes the recording
    assert scope.cancelled_caught
    assert recording.closed and recording.error is None
    assert recording.commit is not None
    finished = [e for e in log_events(repo_dir) if e["kind"] == "run.finished"]
    assert [e["payload"]["run_id"] for e in finished] == [recording.run_id]


def test_cutting_a_committed_partial_line_is_refused_in_words(repo_dir: Path) -> None:
    repo = AgentRepo.init(repo_dir, "cut-agent")
    (repo_dir / LOG).write_bytes(b'{"a":1}\n{"b"')
    assert repo.commit_scaffolding() is not None
    with pytest.raises(RepositoryError) as refused:
        repo.cut_log(8)
    assert str(refused.value) == (
        "state/events.jsonl ends in a partial line that git has committed (HEAD holds 12 "
        "bytes, the whole lines end at 8); cutting it would rewrite committed history, so "
        "repair it by hand"
    )
    assert (repo_dir / LOG).read_bytes() == b'{"a":1}\n{"b"'


@pytest.mark.skipif(sys.platform == "win32", reason="O_NOFOLLOW and symbolic links")
def test_a_link_swapped_in_for_the_log_is_never_cut_through(repo_dir: Path, tmp_path: Path) -> None:
    repo = AgentRepo.init(repo_dir, "cut-agent")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not the agent's\n")
    (repo_dir / LOG).unlink(missing_ok=True)
    (repo_dir / LOG).symlink_to(outside)  # swapped in after the repository was opened
    with pytest.raises(OSError, match="Too many levels of symbolic links") as refused:
        repo.cut_log(0)
    assert refused.value.errno == errno.ELOOP
    assert outside.read_bytes() == b"not the agent's\n"


def test_a_partial_line_cut_at_open_is_logged_as_the_repair_it_records(
    repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    Recorder.init(repo_dir, "cut-agent", NewGoal("first"))
    with (repo_dir / LOG).open("ab") as log:
        log.write(b'{"id":"event_torn"')
    with caplog.at_level(logging.WARNING, logger="yoagent.gasp"):
        reopened = Recorder.open(repo_dir, NewGoal("second"))
    (repair,) = reopened.repairs
    assert repair.startswith("cut a partial last line (18 bytes after byte ")
    assert [r.getMessage() for r in caplog.records if r.name == "yoagent.gasp"] == [repair]


async def test_a_line_another_writer_left_unreadable_is_logged_with_its_line_number(
    recorder: Recorder, repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = repo_dir / LOG
    other = Event.new(Actor("agent", "another-writer"), "observation.noted", {})
    with log.open("ab") as handle:  # another writer, between this recorder's runs
        handle.write(other.to_line().encode())
    async with recorder.recording("first") as first:
        await make_agent([text("one")]).prompt("first", on_event=first)
    with log.open("ab") as handle:
        handle.write(b"not an event\n")
    bad_line = log.read_bytes().count(b"\n")
    with caplog.at_level(logging.WARNING, logger="yoagent.gasp"):
        async with recorder.recording("second") as second:
            await make_agent([text("two")]).prompt("second", on_event=second)
    assert second.error is None
    assert [r.getMessage() for r in caplog.records if r.name == "yoagent.gasp"] == [
        f"{log}: line {bad_line}: not JSON: Expecting value: line 1 column 1 (char 0)"
    ]


def test_opening_a_folder_that_is_no_repository_is_refused_in_words(tmp_path: Path) -> None:
    for folder in (tmp_path / "missing", tmp_path):
        with pytest.raises(RepositoryError) as refused:
            AgentRepo.open(folder)
        assert str(refused.value) == (
            f"{folder} is not a git repository (the GASP layout requires one)"
        )


def test_opening_what_is_not_a_work_tree_root_is_refused_in_words(
    repo_dir: Path, tmp_path: Path
) -> None:
    AgentRepo.init(repo_dir, "outer-agent")
    bare = tmp_path / "bare.git"
    git.Repo.init(bare, bare=True)
    for folder in (repo_dir / ".git", bare):
        with pytest.raises(RepositoryError) as refused:
            AgentRepo.open(folder)
        assert str(refused.value) == f"{folder} is not the root of a git work tree"


def test_git_failing_while_a_repository_is_opened_is_named_as_git(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    AgentRepo.init(repo_dir, "opened-agent")

    def failing(_root: Path) -> git.Repo:
        raise git.GitCommandError(["git", "rev-parse"], 128, stderr="fatal: bad object")

    monkeypatch.setattr("yoagent.gasp.repository.DetachedRepo", failing)
    with pytest.raises(RepositoryError) as refused:
        AgentRepo.open(repo_dir)
    assert str(refused.value) == "git failed: stderr: 'fatal: bad object'"
