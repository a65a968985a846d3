"""The recorder's contract: forwarding first, failures that never stop a run, dropped
streams, retried replies, one run per recording, goals, summaries and commits."""

from __future__ import annotations

import gc
import logging
import re
from pathlib import Path
from typing import Any

import anyio
import git
import pytest
from gasp_helpers import calls, log_events, make_agent, text

from yoagent.core import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    AssistantMessage,
    ErrorKind,
    MessageEnd,
    ProviderError,
    ProviderRetry,
    RunEnd,
    RunFailedError,
    RunOutcome,
    StopCause,
    StopReason,
    TextContent,
    ToolCall,
    ToolExecutionStart,
    UserMessage,
)
from yoagent.gasp import (
    AgentRepo,
    ExistingGoal,
    GoalNotFoundError,
    Lease,
    LeaseHeldError,
    NewGoal,
    Recorder,
    RecorderBusyError,
    RecordingError,
    RepositoryError,
    fold_log,
    run_all,
)


@pytest.fixture
def recorder(repo_dir: Path) -> Recorder:
    return Recorder.init(repo_dir, "unit-agent", NewGoal("unit tests"))


def kinds(root: Path) -> list[str]:
    return [event["kind"] for event in log_events(root)]


async def test_events_are_forwarded_before_they_are_recorded(recorder: Recorder) -> None:
    order: list[str] = []

    def forward(event: AgentEvent) -> None:
        order.append(f"forward {event.type}")

    recording = recorder.recording("t", forward=forward)
    writer = recording._writer  # pyright: ignore[reportPrivateUsage]
    mapped = writer._map  # pyright: ignore[reportPrivateUsage]

    def recorded(event: AgentEvent, ts: int) -> list[object]:
        order.append(f"record {event.type}")
        return mapped(event, ts)  # type: ignore[return-value]

    writer._map = recorded  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
    recording(AgentStart())
    recording(AgentEnd())
    recording.close()
    for kind in ("agent_start", "agent_end"):
        assert order.index(f"forward {kind}") < order.index(f"record {kind}")
    assert len(order) == 4


async def test_a_forward_that_raises_is_dropped_and_recording_goes_on(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_: AgentEvent) -> None:
        raise RuntimeError("ui bug")

    agent = make_agent([text("hello")])
    with caplog.at_level(logging.ERROR, logger="yoagent.gasp"):
        async with recorder.recording("hi", forward=broken) as recording:
            await agent.prompt("hi", on_event=recording)
    assert recording.error is None and recording.commit is not None
    assert "forwarded event consumer raised" in caplog.text


async def test_a_recording_failure_never_stops_the_run(
    recorder: Recorder, repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = AgentRepo.open(repo_dir)
    Lease(other.root, "someone-else").acquire()  # a live worker holds the repository
    seen: list[str] = []
    agent = make_agent([calls(("read_file", {"path": "x"}), turn=1), text("done")])
    with caplog.at_level(logging.ERROR, logger="yoagent.gasp"):
        async with recorder.recording("t", forward=lambda e: seen.append(e.type)) as recording:
            added = await agent.prompt("t", on_event=recording)
    assert len(added) == 4 and seen[-1] == "agent_end"
    assert type(recording.error).__name__ == "LeaseHeldError"
    assert "recording stops, the run goes on" in caplog.text
    with pytest.raises(RecordingError, match="someone-else"):
        await recording.finish()
    assert "run.started" not in kinds(repo_dir)


async def test_a_run_left_open_by_a_failed_recording_is_closed_by_the_next(
    recorder: Recorder, repo_dir: Path
) -> None:
    recording = recorder.recording("first")
    recording(AgentStart())
    recording(MessageEnd(message=text("partial")))
    # the writer has logged run.started; the lease then breaks before the commit
    while "run.started" not in kinds(repo_dir):  # noqa: ASYNC110 - polls the file
        await anyio.sleep(0.01)
    first = recording.run_id
    (repo_dir / ".agent" / "lease").write_text("garbage")
    recording.close()
    assert recording.error is not None
    (repo_dir / ".agent" / "lease").unlink()
    async with recorder.recording("second") as second:
        await make_agent([text("ok")]).prompt("second", on_event=second)
    assert second.error is None
    graph = recorder.graph()
    assert first is not None and graph.node(first).props["outcome"] == "interrupted"  # type: ignore[union-attr]
    assert all(report.passed for report in run_all(repo_dir))


async def test_a_stream_dropped_without_agent_end_finishes_as_derived_so_far(
    recorder: Recorder, repo_dir: Path
) -> None:
    recording = recorder.recording("dropped")
    recording(AgentStart())
    assert recording.close() is not None
    assert recording.outcome == "interrupted" and recording.commit is not None
    recording = recorder.recording("dropped after a reply")
    recording(AgentStart())
    recording(MessageEnd(message=text("half")))
    recording.close()
    assert recording.outcome == "completed"
    finished = [
        e["payload"]["outcome"] for e in log_events(repo_dir) if e["kind"] == "run.finished"
    ]
    assert finished == ["interrupted", "completed"]


async def test_no_agent_start_means_no_run_and_no_commit(
    recorder: Recorder, repo_dir: Path
) -> None:
    head = git.Repo(repo_dir).head.commit.hexsha
    recording = recorder.recording("nothing")
    recording(ToolExecutionStart(tool_call_id="c", tool_name="x"))
    assert recording.close() is None
    assert recording.result() is None and recording.commit is None
    assert git.Repo(repo_dir).head.commit.hexsha == head
    assert not (repo_dir / ".agent" / "lease").exists()


async def test_a_retried_reply_is_not_a_model_call(recorder: Recorder) -> None:
    failed = AssistantMessage(
        content=[TextContent(text="par")], stop_reason=StopReason.ERROR, error_message="503"
    )
    recording = recorder.recording("retry")
    for event in (
        AgentStart(),
        MessageEnd(message=failed),
        ProviderRetry(
            attempt=1, max_retries=3, delay_seconds=0.1, kind=ErrorKind.RATE_LIMITED, error="503"
        ),
        MessageEnd(message=text("full answer")),
        AgentEnd(),
    ):
        recording(event)
    recording.close()
    calls_made = recorder.graph().of_kind("model_call")
    assert len(calls_made) == 1 and recording.outcome == "completed"


async def test_a_final_error_reply_is_recorded_as_an_error_run(recorder: Recorder) -> None:
    failed = AssistantMessage(content=[], stop_reason=StopReason.ERROR, error_message="boom")
    recording = recorder.recording("fails")
    for event in (AgentStart(), MessageEnd(message=failed), AgentEnd()):
        recording(event)
    recording.close()
    assert recording.outcome == "error"
    assert len(recorder.graph().of_kind("model_call")) == 1


async def test_a_run_that_fails_through_prompt_is_recorded_and_committed(
    recorder: Recorder,
) -> None:
    """``Agent.prompt`` raises ``RunFailedError`` out of the block; the recording still
    holds the whole run, with the ``error`` outcome, in one commit."""
    agent = make_agent([ProviderError(ErrorKind.AUTH, "401 invalid key")])
    with pytest.raises(RunFailedError):
        async with recorder.recording("fails for real") as recording:
            await agent.prompt("fails for real", on_event=recording)
    assert recording.error is None
    assert recording.outcome == "error"
    assert recording.result() is not None and recording.commit is not None
    assert len(recorder.graph().of_kind("model_call")) == 1


async def test_the_outcome_is_read_from_agent_end_not_from_marker_text(
    recorder: Recorder,
) -> None:
    """A stop is what ``AgentEnd.outcome`` says; a user message that merely reads like a
    stop marker changes nothing."""
    looped = AssistantMessage(
        content=[ToolCall(id="c1", name="read_file", arguments={"path": "x"})],
        stop_reason=StopReason.TOOL_USE,
    )
    stopped = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.LOOP, reason="loop detected")
    recording = recorder.recording("loops")
    for event in (
        AgentStart(),
        MessageEnd(message=looped),
        MessageEnd(message=UserMessage.from_text("[Agent stopped: cancelled]")),
        AgentEnd(outcome=stopped),
    ):
        recording(event)
    recording.close()
    assert recording.outcome == "loop_aborted:read_file"


async def test_a_run_cancelled_before_the_model_answered_is_recorded_aborted(
    recorder: Recorder,
) -> None:
    recording = recorder.recording("cancelled early")
    for event in (AgentStart(), AgentEnd(outcome=RunOutcome(end=RunEnd.CANCELLED))):
        recording(event)
    recording.close()
    assert recording.outcome == "aborted"


async def test_one_recording_records_one_run(recorder: Recorder) -> None:
    recording = recorder.recording("one")
    with pytest.raises(RecorderBusyError):
        recorder.recording("two")
    recording(AgentStart())
    recording(AgentEnd())
    recording(AgentStart())
    recording.close()
    assert isinstance(recording.error, ValueError) and "second AgentStart" in str(recording.error)
    recorder.recording("after close").close()


def test_an_existing_goal_must_be_a_goal_of_the_repository(
    recorder: Recorder, repo_dir: Path
) -> None:
    reopened = Recorder.open(repo_dir, ExistingGoal(recorder.goal_id))
    assert reopened.goal_id == recorder.goal_id
    with pytest.raises(GoalNotFoundError):
        Recorder.open(repo_dir, ExistingGoal("goal_typo"))
    with pytest.raises(ValueError, match="declares agent"):
        Recorder.open(repo_dir, ExistingGoal(recorder.goal_id), agent_id="someone-else")


async def test_the_summarizer_sees_every_text_before_it_is_logged(repo_dir: Path) -> None:
    secret = "sk_live_0123456789"

    def redact(value: str) -> str:
        return value.replace(secret, "[redacted]")

    recorder = Recorder.init(repo_dir, "careful", NewGoal("no secrets"), summarizer=redact)
    agent = make_agent(
        [calls(("read_file", {"path": f"/keys/{secret}"}), turn=1), text(f"key is {secret}")]
    )
    async with recorder.recording(f"find {secret}") as recording:
        await agent.prompt("find it", on_event=recording)
    log = (repo_dir / "state" / "events.jsonl").read_text()
    # the task is stored verbatim (run.started); every summary went through redact
    assert log.count(secret) == 2  # run.started's task and its CreateNode props
    assert "[redacted]" in log


async def test_the_run_commit_leaves_other_staged_and_dirty_files_alone(
    recorder: Recorder, repo_dir: Path
) -> None:
    (repo_dir / "notes.txt").write_text("staged work\n")
    repo = git.Repo(repo_dir)
    repo.index.add(["notes.txt"])
    async with recorder.recording("t") as recording:
        await make_agent([text("ok")]).prompt("t", on_event=recording)
    assert list(repo.head.commit.stats.files) == ["state/events.jsonl"]
    assert [d.a_path for d in repo.index.diff("HEAD")] == ["notes.txt"]  # still staged


def test_trailer_values_with_a_newline_are_refused(recorder: Recorder) -> None:
    with pytest.raises(ValueError, match="forge commit trailers"):
        recorder.repo.commit_run("run_1", recorder.goal_id, "completed\nGoal: forged")


def test_without_a_git_identity_commits_are_authored_as_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-config"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("EMAIL", "")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "")
    root = tmp_path / "agent"
    root.mkdir()
    git.Repo.init(root).config_writer().set_value("user", "useConfigOnly", "true").release()
    Recorder.init(root, "lonely", NewGoal("commit anyway"))
    author = git.Repo(root).head.commit.author
    assert (author.name, author.email) == ("lonely (yoagent-gasp)", "lonely@gasp.invalid")


def test_a_torn_uncommitted_tail_is_cut_under_the_lease_and_reported(
    recorder: Recorder, repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = repo_dir / "state" / "events.jsonl"
    whole = log.read_bytes()
    with log.open("ab") as handle:
        handle.write(b'{"id":"event_torn","schema_ver')  # a writer killed mid-append
    assert fold_log(log).torn_tail
    with caplog.at_level(logging.WARNING, logger="yoagent.gasp"):
        reopened = Recorder.open(repo_dir, ExistingGoal(recorder.goal_id))
    assert log.read_bytes() == whole
    assert reopened.repairs == [
        f"cut a partial last line (30 bytes after byte {len(whole)}) from state/events.jsonl: "
        "a writer died mid-append, and what it was writing is lost"
    ]
    assert reopened.repairs[0] in caplog.text
    assert all(report.passed for report in run_all(repo_dir))


def test_a_torn_tail_git_has_committed_is_refused(recorder: Recorder, repo_dir: Path) -> None:
    log = repo_dir / "state" / "events.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"id":"event_torn"')
    repo = git.Repo(repo_dir)
    repo.git.commit("-q", "-m", "a torn log, committed", "--", "state/events.jsonl")
    with pytest.raises(RepositoryError, match="committed"):
        Recorder.open(repo_dir, ExistingGoal(recorder.goal_id))
    assert log.read_bytes().endswith(b'{"id":"event_torn"')
    assert not (repo_dir / ".agent" / "lease").exists()


async def test_a_recording_dropped_without_close_finishes_its_run_and_frees_the_lease(
    repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder.init(repo_dir, "forgetful", NewGoal("never closed"), lease_ttl=0.4)
    recording = recorder.recording("dropped on the floor")
    recording(AgentStart())
    await _wait_for_kind(repo_dir, "run.started")
    run_id = recording.run_id
    with caplog.at_level(logging.WARNING, logger="yoagent.gasp"):
        del recording
        gc.collect()
        with anyio.fail_after(10):
            while not git.Repo(repo_dir).head.commit.message.startswith(f"run {run_id}"):  # noqa: ASYNC110 - polls git
                await anyio.sleep(0.02)
    assert _outcomes(repo_dir) == [(run_id, "interrupted")]
    assert "garbage-collected without close()" in caplog.text
    Lease(repo_dir, "next-worker").acquire()  # the lease is free, not renewed forever


async def test_a_quiet_run_keeps_its_lease(repo_dir: Path) -> None:
    # A lifetime of 2 s leaves the renewal (due once less than half is left, looked at
    # every quarter) half a second of slack on a loaded machine.
    recorder = Recorder.init(repo_dir, "patient", NewGoal("long tools"), lease_ttl=2)
    other = Lease(repo_dir, "other")
    recording = recorder.recording("wait")
    recording(AgentStart())
    await anyio.sleep(4.5)  # more than two lease lifetimes without an event
    with pytest.raises(LeaseHeldError, match=re.escape(recorder.worker_id)):
        other.acquire()
    recording(AgentEnd())
    recording.close()
    assert recording.error is None and recording.commit is not None


def test_opening_never_commits_an_edit_to_a_tracked_manifest(
    recorder: Recorder, repo_dir: Path
) -> None:
    manifest = repo_dir / "AGENT.md"
    manifest.write_text(manifest.read_text() + "\nA human's edit, not yet reviewed.\n")
    Recorder.open(repo_dir, NewGoal("another goal"))
    repo = git.Repo(repo_dir)
    assert [d.a_path for d in repo.index.diff(None)] == ["AGENT.md"]  # still uncommitted
    assert list(repo.head.commit.stats.files) == ["state/events.jsonl"]


async def _wait_for_kind(root: Path, kind: str, count: int = 1) -> None:
    with anyio.fail_after(30):
        while kinds(root).count(kind) < count:  # noqa: ASYNC110 - polls the file
            await anyio.sleep(0.01)


def _outcomes(root: Path) -> list[tuple[str, str]]:
    return [
        (e["payload"]["run_id"], e["payload"]["outcome"])
        for e in log_events(root)
        if e["kind"] == "run.finished"
    ]


def _before_first_lease(monkeypatch: pytest.MonkeyPatch, worker: str, action: Any) -> None:
    """Run ``action`` once, just before ``worker`` first asks for the lease."""
    real = Lease.acquire
    pending = [action]

    def acquire(self: Lease) -> None:
        if self.worker_id == worker and pending:
            pending.pop()()
        real(self)

    monkeypatch.setattr(Lease, "acquire", acquire)


async def test_opening_folds_under_the_lease_so_a_run_finished_meanwhile_stays_finished(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """W3 opens while W2's run is open; W2's run then ends normally before W3 gets the
    lease. What W3 closes as stale must be what the log says under the lease."""
    w2 = Recorder.init(repo_dir, "shared", NewGoal("two writers"), worker_id="w2")
    recording = w2.recording("w2's run")
    recording(AgentStart())
    await _wait_for_kind(repo_dir, "run.started")

    def w2_finishes() -> None:
        recording(MessageEnd(message=text("done")))
        recording(AgentEnd())
        recording.close()

    _before_first_lease(monkeypatch, "w3", w2_finishes)
    Recorder.open(repo_dir, ExistingGoal(w2.goal_id), worker_id="w3")
    assert recording.error is None and recording.commit is not None
    assert _outcomes(repo_dir) == [(recording.run_id, "completed")]
    assert (
        fold_log(repo_dir / "state" / "events.jsonl")
        .graph.node(
            recording.run_id  # type: ignore[arg-type]
        )
        .props["outcome"]
        == "completed"
    )  # type: ignore[union-attr]


async def test_two_openers_after_a_crash_close_the_stale_run_once(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed = Recorder.init(repo_dir, "shared", NewGoal("crash"), worker_id="crashed")
    recording = crashed.recording("dies")
    recording(AgentStart())
    await _wait_for_kind(repo_dir, "run.started")
    (repo_dir / ".agent" / "lease").write_text("garbage")  # its writer fails: the run stays open
    recording.close()
    assert recording.error is not None
    (repo_dir / ".agent" / "lease").unlink()

    def w2_opens() -> None:
        Recorder.open(repo_dir, ExistingGoal(crashed.goal_id), worker_id="w2")

    _before_first_lease(monkeypatch, "w3", w2_opens)
    Recorder.open(repo_dir, ExistingGoal(crashed.goal_id), worker_id="w3")
    assert _outcomes(repo_dir) == [(recording.run_id, "interrupted")]
    assert all(report.passed for report in run_all(repo_dir))


async def test_a_recorder_sees_what_other_writers_recorded_between_its_runs(
    repo_dir: Path,
) -> None:
    first = Recorder.init(repo_dir, "shared", NewGoal("first's goal"), worker_id="first")
    second = Recorder.open(repo_dir, NewGoal("second's goal"), worker_id="second")
    async with second.recording("second's run") as theirs:
        await make_agent([text("ok")]).prompt("x", on_event=theirs)
    async with first.recording("first's run") as mine:
        await make_agent([text("ok")]).prompt("y", on_event=mine)
    graph = first.graph()
    assert graph.node(second.goal_id) is not None
    assert theirs.run_id is not None and graph.node(theirs.run_id) is not None
    assert graph.same_as(fold_log(repo_dir / "state" / "events.jsonl").graph)


async def test_a_run_another_writer_left_open_after_this_recorder_opened_is_closed_at_its_next_run(
    repo_dir: Path,
) -> None:
    first = Recorder.init(repo_dir, "shared", NewGoal("outlive a crash"), worker_id="first")
    other = Recorder.open(repo_dir, ExistingGoal(first.goal_id), worker_id="other")
    recording = other.recording("dies")
    recording(AgentStart())
    await _wait_for_kind(repo_dir, "run.started")
    (repo_dir / ".agent" / "lease").write_text("garbage")  # its writer fails: the run stays open
    recording.close()
    (repo_dir / ".agent" / "lease").unlink()

    async with first.recording("next") as mine:
        await make_agent([text("ok")]).prompt("next", on_event=mine)

    assert _outcomes(repo_dir) == [(recording.run_id, "interrupted"), (mine.run_id, "completed")]
    assert all(report.passed for report in run_all(repo_dir))
