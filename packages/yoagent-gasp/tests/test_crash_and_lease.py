"""Crash safety and the single-writer lease, with real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from gasp_helpers import log_events, make_agent, text

import yoagent.gasp.lease as lease_module
from yoagent.gasp import (
    ExistingGoal,
    Lease,
    LeaseCorruptError,
    LeaseHeldError,
    NewGoal,
    Recorder,
    RecordingError,
    fold_log,
    restore,
    run_all,
)
from yoagent.gasp.lease import LeaseRecord

CHILD = Path(__file__).parent / "gasp_child.py"
TESTS = str(Path(__file__).parent)


def _child(*args: str | Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, str(CHILD), *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(predicate: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_process_killed_mid_run_leaves_a_foldable_log_and_the_next_open_closes_the_run(
    repo_dir: Path, tmp_path: Path
) -> None:
    Recorder.init(repo_dir, "crashy", NewGoal("survive crashes"))
    marker = tmp_path / "in-tool"
    child = _child("crash", repo_dir, marker)
    log = repo_dir / "state" / "events.jsonl"
    try:
        _wait_for(marker.exists, "the tool to start")
        _wait_for(lambda: b'"tool.called"' in log.read_bytes(), "tool.called in the log")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    crashed = fold_log(log)
    assert crashed.clean and not crashed.torn_tail
    (run,) = [e for e in crashed.events if e.kind == "run.started"]
    assert not [e for e in crashed.events if e.kind == "run.finished"]
    lease = json.loads((repo_dir / ".agent" / "lease").read_text())
    assert lease["worker_id"] == "doomed"  # left behind, unexpired: its process is gone

    goal = next(
        n.id for n in crashed.graph.of_kind("goal") if n.props["title"] == "survive crashes"
    )
    recorder = Recorder.open(repo_dir, ExistingGoal(goal))
    run_id = run.payload["run_id"]
    node = recorder.graph().node(run_id)
    assert node is not None and node.props["outcome"] == "interrupted"
    finished = [e for e in log_events(repo_dir) if e["kind"] == "run.finished"]
    assert [(f["payload"], f["causation_id"]) for f in finished] == [
        ({"run_id": run_id, "outcome": "interrupted"}, run.id)
    ]
    assert not (repo_dir / ".agent" / "lease").exists()
    clone = restore(repo_dir, tmp_path / "clone")
    assert clone.graph.same_as(recorder.graph())
    assert all(report.passed for report in run_all(tmp_path / "clone"))


def test_a_process_killed_mid_write_leaves_a_torn_line_the_next_open_cuts_before_closing_the_run(
    repo_dir: Path, tmp_path: Path
) -> None:
    Recorder.init(repo_dir, "torn", NewGoal("survive a torn write"))
    log = repo_dir / "state" / "events.jsonl"
    child = _child("tear", repo_dir)
    _, err = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGKILL, err
    raw = log.read_bytes()
    assert not raw.endswith(b"\n") and raw.endswith(b'"tool.ca')  # killed mid-line
    crashed = fold_log(log)
    assert crashed.torn_tail
    (run,) = [e for e in crashed.events if e.kind == "run.started"]
    goal = next(
        n.id for n in crashed.graph.of_kind("goal") if n.props["title"] == "survive a torn write"
    )

    recorder = Recorder.open(repo_dir, ExistingGoal(goal))

    whole = raw[: raw.rindex(b"\n") + 1]
    assert log.read_bytes().startswith(whole)
    run_id = run.payload["run_id"]
    assert recorder.repairs == [
        f"cut a partial last line ({len(raw) - len(whole)} bytes after byte {len(whole)}) "
        "from state/events.jsonl: a writer died mid-append, and what it was writing is lost",
        f"closed the run {run_id}, which a writer left open, as interrupted",
    ]
    node = recorder.graph().node(run_id)
    assert node is not None and node.props["outcome"] == "interrupted"
    assert fold_log(log).clean
    clone = restore(repo_dir, tmp_path / "clone")
    assert clone.graph.same_as(recorder.graph())
    assert all(report.passed for report in run_all(tmp_path / "clone"))


def test_two_processes_race_for_the_lease_and_exactly_one_writes(
    repo_dir: Path, tmp_path: Path
) -> None:
    Recorder.init(repo_dir, "contended", NewGoal("race"))
    go = tmp_path / "go"
    children = []
    for name in ("a", "b"):
        ready = tmp_path / f"ready-{name}"
        children.append(_child("race", repo_dir, ready, go))
        _wait_for(ready.exists, f"child {name} to open")
    go.write_text("go")
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    writers = [r for r in results if r["error"] is None]
    losers = [r for r in results if r["error"] is not None]
    assert len(writers) == 1 and len(losers) == 1, results
    assert writers[0]["commit"] is not None
    assert losers[0]["error"] == "LeaseHeldError" and losers[0]["commit"] is None
    # the loser's run still ran to the end, and its forwarding never stopped
    assert [r["forwarded_end"] for r in results] == ["agent_end", "agent_end"]
    assert [r["run_messages"] for r in results] == [4, 4]
    starts = [e["payload"]["run_id"] for e in log_events(repo_dir) if e["kind"] == "run.started"]
    assert starts == [writers[0]["run_id"]]
    assert all(report.passed for report in run_all(repo_dir))


def test_a_corrupt_lease_is_an_error_and_is_never_stolen(repo_dir: Path) -> None:
    recorder = Recorder.init(repo_dir, "careful", NewGoal("never steal"))
    lease_file = repo_dir / ".agent" / "lease"
    lease_file.write_text("{not json")
    with pytest.raises(LeaseCorruptError, match="corrupt"):
        Recorder.open(repo_dir, ExistingGoal(recorder.goal_id))
    before = len(log_events(repo_dir))

    async def run() -> None:
        seen: list[str] = []
        agent = make_agent([text("fine")])
        async with recorder.recording("go", forward=lambda e: seen.append(e.type)) as recording:
            await agent.prompt("go", on_event=recording)
        assert isinstance(recording.error, LeaseCorruptError)
        assert seen[-1] == "agent_end"
        with pytest.raises(RecordingError):
            recording.result()

    anyio.run(run)
    assert lease_file.read_text() == "{not json"
    assert len(log_events(repo_dir)) == before


def test_an_expired_lease_of_another_worker_is_taken_and_a_live_one_is_not(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo_dir.mkdir()
    clock = [1_000_000]  # the lease's clock, moved by hand: no race with a slow fsync
    monkeypatch.setattr(lease_module, "now_ms", lambda: clock[0])
    mine, theirs = Lease(repo_dir, "mine"), Lease(repo_dir, "theirs", ttl=0.05)
    theirs.acquire()
    clock[0] += 49
    with pytest.raises(LeaseHeldError, match="theirs"):
        mine.acquire()
    clock[0] += 51
    mine.acquire()
    assert mine.read() is not None and mine.read().worker_id == "mine"  # type: ignore[union-attr]
    mine.release()
    assert mine.read() is None


def test_a_lease_steal_racing_a_renewal_and_a_third_worker_leaves_exactly_one_holder(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B takes over A's expired lease; meanwhile A (alive after all) renews it, and C
    arrives just after B's first rename. Whatever the interleaving, exactly one of them
    may come out believing it holds the lease, and the file must name that one."""
    repo_dir.mkdir()
    clock = [1_000_000]
    monkeypatch.setattr(lease_module, "now_ms", lambda: clock[0])
    a, b, c = (Lease(repo_dir, name, ttl=10) for name in ("a", "b", "c"))
    a.acquire()
    clock[0] += 20_000  # A's lease has expired

    stealer = threading.get_ident()
    holders: list[str] = []
    others: list[threading.Thread] = []

    def take(lease: Lease) -> None:
        try:
            lease.acquire()
        except LeaseHeldError:
            return
        holders.append(lease.worker_id)

    def meanwhile(lease: Lease) -> None:
        # another worker's attempt in the middle of B's; a correct lease makes it wait
        # for B (so only give it a moment), a racy one lets it through at once
        thread = threading.Thread(target=take, args=(lease,))
        thread.start()
        thread.join(timeout=1.0)
        others.append(thread)

    real_read, real_replace = lease_module._read, os.replace  # pyright: ignore[reportPrivateUsage]
    pending = {"renewal", "arrival"}

    def read_lease(name: str, folder: int | None, path: Path) -> LeaseRecord | None:
        record = real_read(name, folder, path)
        if threading.get_ident() == stealer and record is not None and "renewal" in pending:
            pending.discard("renewal")
            meanwhile(a)  # B has seen A's expired lease; A renews it now
        return record

    def replace(source: Any, target: Any, **folders: Any) -> None:
        real_replace(source, target, **folders)
        if threading.get_ident() == stealer and "arrival" in pending:
            pending.discard("arrival")
            meanwhile(c)  # C arrives right after B's first rename

    monkeypatch.setattr(lease_module, "_read", read_lease)
    monkeypatch.setattr(os, "replace", replace)
    take(b)
    for thread in others:
        thread.join(timeout=30)
    monkeypatch.undo()

    assert not pending  # both interleavings happened
    on_file = lease_module.read_lease(repo_dir / ".agent" / "lease")
    assert len(holders) == 1, holders
    assert on_file is not None and on_file.worker_id == holders[0]
