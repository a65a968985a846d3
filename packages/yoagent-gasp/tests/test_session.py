"""A scripted session recorded into a fresh repository, cloned, checked and restored —
the end-to-end promise: the repo is the agent."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import git
import pytest
from gasp_helpers import log_events, scripted_session

from yoagent.gasp import NewGoal, Recorder, restore, run_all
from yoagent.gasp.cli import main as cli_main

EXPECTED_OUTCOMES = [
    "completed",
    "completed",
    "aborted",
    "rejected",
    "loop_aborted:read_file",
]


@pytest.fixture
async def recorded(repo_dir: Path) -> tuple[Recorder, list[str | None], list[str]]:
    recorder = Recorder.init(repo_dir, "scripted-agent", NewGoal("exercise every kind of run"))
    result = await scripted_session(recorder)
    assert result.errors == [None] * 5
    return recorder, result.run_ids, result.outcomes


async def test_each_kind_of_run_gets_its_outcome_and_one_commit_with_trailers(
    recorded: tuple[Recorder, list[str | None], list[str]], repo_dir: Path
) -> None:
    recorder, run_ids, outcomes = recorded
    assert outcomes == EXPECTED_OUTCOMES
    commits = list(git.Repo(repo_dir).iter_commits("HEAD", reverse=True))
    assert commits[0].message.strip() == "gasp: agent scaffolding"
    assert len(commits) == 6  # scaffolding + one per run
    for commit, run_id, outcome in zip(commits[1:], run_ids, outcomes, strict=True):
        assert commit.message == (
            f"run {run_id}: {outcome}\n\nRun-Id: {run_id}\nGoal: {recorder.goal_id}\n"
            f"Outcome: {outcome}\n"
        )
        assert list(commit.stats.files) == ["state/events.jsonl"]
    assert not git.Repo(repo_dir).is_dirty(untracked_files=True)


async def test_the_graph_holds_runs_calls_and_the_failure(
    recorded: tuple[Recorder, list[str | None], list[str]],
) -> None:
    recorder, run_ids, outcomes = recorded
    graph = recorder.graph()
    for run_id, outcome in zip(run_ids, outcomes, strict=True):
        assert run_id is not None
        run = graph.node(run_id)
        assert run is not None and run.kind == "run"
        assert run.props["status"] == "finished" and run.props["outcome"] == outcome
        assert [r.to for r in graph.outgoing(run_id, "serves")] == [recorder.goal_id]
    tools = graph.of_kind("tool_call")
    # the loop run's third round is refused unrun (with a nudge) and its fourth ends the
    # run: each still a call, and a failure
    assert [t.props["tool"] for t in tools] == ["read_file", "read_file", "bash"] + [
        "read_file"
    ] * 4
    assert tools[0].props["metadata"]["args_fingerprint"].startswith("read_file:")
    loop_fingerprints = {t.props["metadata"]["args_fingerprint"] for t in tools[3:]}
    assert len(loop_fingerprints) == 1
    failed, nudged, refused = graph.of_kind("failure")
    assert failed.props["title"] == "tool bash failed"
    assert failed.props["summary"] == "command failed: pytest -q exit status 1"
    assert [r.to for r in graph.outgoing(failed.id, "derived_from")] == [tools[2].id]
    for unrun, call in ((nudged, tools[5]), (refused, tools[6])):
        assert unrun.props["summary"].startswith("Not run: the same tool calls were repeated")
        assert [r.to for r in graph.outgoing(unrun.id, "derived_from")] == [call.id]
    models = graph.of_kind("model_call")
    first_runs = [m.props["prompt_summary"] for m in models if m.props["run_id"] == run_ids[0]]
    assert first_runs == ["read the two modules", "turn 2"]
    rejected = run_ids[3]
    assert not [m for m in models if m.props["run_id"] == rejected]


async def test_a_clone_passes_all_seven_checks_and_restores_the_same_graph(
    recorded: tuple[Recorder, list[str | None], list[str]],
    repo_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    recorder, _, _ = recorded
    clone = tmp_path / "clone"
    restored = restore(repo_dir, clone)
    reports = run_all(clone)
    assert [(r.number, r.failures) for r in reports] == [(n, []) for n in range(1, 8)]
    assert cli_main(["check", str(clone)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("[PASS]") == 7 and "conformant: all checks passed" in printed
    assert restored.graph.same_as(recorder.graph())
    assert restored.fold.clean and restored.notes == []
    assert restored.agent_id == "scripted-agent"
    assert restored.identity == {"identity/IDENTITY.md": "# Identity\n\nI am scripted-agent.\n"}
    assert restored.manifest.identity_hash is not None


async def test_the_console_script_checks_a_clone(
    recorded: tuple[Recorder, list[str | None], list[str]], repo_dir: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    git.Repo.clone_from(str(repo_dir), str(clone))
    script = Path(sys.executable).parent / "yoagent-gasp"
    done = await anyio.run_process([script, "check", clone], check=False)
    output = done.stdout.decode()
    assert done.returncode == 0, output + done.stderr.decode()
    assert output.strip().endswith("conformant: all checks passed")


async def test_every_event_after_a_run_start_chains_to_it(
    recorded: tuple[Recorder, list[str | None], list[str]], repo_dir: Path
) -> None:
    _, run_ids, _ = recorded
    events = log_events(repo_dir)
    starts = {e["payload"]["run_id"]: e["id"] for e in events if e["kind"] == "run.started"}
    assert list(starts) == run_ids
    for event in events:
        run_id = event["correlation_id"]
        if run_id is None or event["kind"] in ("run.started", "state.ops_applied"):
            continue
        assert event["causation_id"] == starts[run_id], event["kind"]
    assert all(type(e["ts_ms"]) is int for e in events)


async def test_restore_at_an_event_folds_only_up_to_it(
    recorded: tuple[Recorder, list[str | None], list[str]], repo_dir: Path, tmp_path: Path
) -> None:
    _, run_ids, _ = recorded
    events = log_events(repo_dir)
    first_finish = next(e for e in events if e["kind"] == "run.finished")
    pair = events[events.index(first_finish) + 1]
    restored = restore(repo_dir, tmp_path / "clone", at=pair["id"])
    assert restored.graph.node(run_ids[0]) is not None
    assert restored.graph.node(run_ids[0]).props["status"] == "finished"  # type: ignore[union-attr]
    assert restored.graph.node(run_ids[1]) is None  # pyright: ignore[reportArgumentType]
