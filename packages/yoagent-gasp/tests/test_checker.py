"""The checker's own tests: each corruption GASP.md §1.6 lists is caught by the check that
owns it, and no other check changes its verdict."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import git
import pytest
from gasp_helpers import calls, make_agent, snapshot_record, text, write_snapshot

from yoagent.gasp import CheckReport, NewGoal, Recorder, run_all
from yoagent.gasp.cli import main as cli_main

LOG = Path("state/events.jsonl")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conformant repository: one recorded run with a successful and a failing tool."""
    root = tmp_path_factory.mktemp("template") / "agent"
    recorder = Recorder.init(root, "checked-agent", NewGoal("be checked"))
    agent = make_agent(
        [calls(("read_file", {"path": "a.py"}), ("bash", {"command": "make"}), turn=1), text("ok")]
    )

    async def record() -> None:
        async with recorder.recording("inspect a.py") as recording:
            await agent.prompt("inspect a.py", on_event=recording)
        assert recording.error is None

    anyio.run(record)
    return root


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(template, copy)
    return copy


def events(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG).read_text().splitlines() if line.strip()]


def append(root: Path, *lines: dict[str, Any] | str) -> None:
    with (root / LOG).open("a", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")


def event(kind: str, payload: Any, cause: str | None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"event_{hashlib.sha1(json.dumps([kind, payload, cause]).encode()).hexdigest()}",
        "schema_version": 1,
        "ts_ms": 1_800_000_000_000,
        "actor": {"kind": "agent", "id": "checked-agent"},
        "kind": kind,
        "payload": payload,
        "causation_id": cause,
        "correlation_id": None,
    }
    body.update(extra)
    return body


def run_start(root: Path) -> str:
    return next(e["id"] for e in events(root) if e["kind"] == "run.started")


def failing(reports: list[CheckReport]) -> set[int]:
    assert [r.number for r in reports] == list(range(1, 8))
    return {r.number for r in reports if not r.passed}


def failures_of(reports: list[CheckReport], number: int) -> str:
    return "\n".join(reports[number - 1].failures)


def commit_all(root: Path, message: str) -> None:
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", message)


def test_the_template_is_conformant(repo: Path) -> None:
    assert failing(run_all(repo)) == set()


# --- check 1 ----------------------------------------------------------------------------


def test_an_unknown_top_level_field_fails_check_1_only(repo: Path) -> None:
    append(repo, event("goal.created", {"id": "goal_x"}, None, extra=1))
    append(
        repo,
        event(
            "state.ops_applied",
            [{"CreateNode": {"id": "goal_x", "kind": "goal", "props": {}}}],
            event("goal.created", {"id": "goal_x"}, None)["id"],
        ),
    )
    reports = run_all(repo)
    assert failing(reports) == {1}
    assert "unknown top-level field `extra`" in failures_of(reports, 1)


def test_a_missing_field_fails_check_1_and_every_check_that_needs_the_log(repo: Path) -> None:
    broken = event("goal.created", {"id": "goal_x"}, None)
    del broken["correlation_id"]
    append(repo, broken)
    reports = run_all(repo)
    assert failing(reports) == {1, 2, 3, 5, 6, 7}
    assert "missing envelope field `correlation_id`" in failures_of(reports, 1)
    assert all("see check 1" in failures_of(reports, n) for n in (2, 3, 5, 6, 7))


def test_a_float_timestamp_and_an_extra_actor_key_fail_check_1(repo: Path) -> None:
    append(repo, event("goal.created", {"id": "g1"}, None, ts_ms=1.5))
    reports = run_all(repo)
    assert 1 in failing(reports) and "`ts_ms` must be an integer" in failures_of(reports, 1)


def test_an_extra_actor_key_breaks_the_round_trip(repo: Path) -> None:
    append(
        repo,
        event("run.started", {"run_id": "r"}, None, actor={"kind": "agent", "id": "a", "x": 1}),
    )
    reports = run_all(repo)
    assert failing(reports) == {1}
    assert "does not round-trip structurally" in failures_of(reports, 1)


def test_a_repeated_key_inside_a_payload_passes_as_the_reference_reads_it(repo: Path) -> None:
    """The reference reads a payload as serde_json's ``Value``: a repeated key keeps its
    last value, and the event round-trips."""
    line = json.dumps(event("run.started", {"run_id": "run_x", "task": "b"}, None))
    append(repo, line.replace('"task": "b"', '"task": "a", "task": "b"'))
    assert failing(run_all(repo)) == set()


@pytest.mark.parametrize(
    ("repeat", "field"),
    [
        (('"kind": "run.started"', '"kind": "run.started", "kind": "run.started"'), "kind"),
        (('"id": "agent-1"', '"id": "agent-1", "id": "agent-1"'), "id"),
    ],
)
def test_a_repeated_envelope_or_actor_key_fails_check_1(
    repo: Path, repeat: tuple[str, str], field: str
) -> None:
    """The envelope and the actor are typed structs in the reference: serde refuses a
    repeated field there."""
    body = event("run.started", {"run_id": "run_x"}, None, actor={"kind": "agent", "id": "agent-1"})
    append(repo, json.dumps(body).replace(*repeat))
    reports = run_all(repo)
    assert 1 in failing(reports)
    assert f"duplicate field `{field}`" in failures_of(reports, 1)


def test_reordered_keys_and_nested_extras_pass(repo: Path) -> None:
    body = event("run.started", {"run_id": "r", "novel": {"nested": True}}, None)
    append(repo, json.dumps(dict(reversed(list(body.items())))))
    assert failing(run_all(repo)) == set()


# --- check 2 ----------------------------------------------------------------------------


def test_a_valid_snapshot_passes(repo: Path) -> None:
    write_snapshot(repo, snapshot_record(repo, len(events(repo))))
    assert failing(run_all(repo)) == set()


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda s: s["integrity"].update(sha256="0" * 64), "integrity hash mismatch"),
        (lambda s: s["integrity"].update(line_count=0), "out of range"),
        (lambda s: s["integrity"].update(line_count=999), "out of range"),
        (lambda s: s["integrity"].pop("sha256"), "missing `sha256`"),
        (lambda s: s["integrity"].update(event_id="event_99"), "not the last event"),
        (lambda s: s["integrity"].pop("event_id"), "missing string `event_id`"),
        (lambda s: s["integrity"].update(event_id=42), "missing string `event_id`"),
        (lambda s: s["graph"].update(version=999), "differs from folding"),
        (lambda s: s.pop("integrity"), "missing `graph` or `integrity`"),
    ],
)
def test_each_snapshot_corruption_fails_check_2_only(
    repo: Path, corrupt: Any, message: str
) -> None:
    snapshot = snapshot_record(repo, 5)
    corrupt(snapshot)
    write_snapshot(repo, snapshot)
    reports = run_all(repo)
    assert failing(reports) == {2}
    assert message in failures_of(reports, 2)


def test_a_snapshot_folder_without_graph_json_is_noted(repo: Path) -> None:
    (repo / "snapshots" / "empty").mkdir(parents=True)
    reports = run_all(repo)
    assert failing(reports) == set()
    assert any("not verified" in note for note in reports[1].notes)


def test_a_dangling_update_is_readable_and_noted(repo: Path) -> None:
    append(
        repo, event("state.ops_applied", [{"UpdateNode": {"id": "node_gone", "props": {}}}], None)
    )
    reports = run_all(repo)
    assert failing(reports) == set()
    assert any("skipped" in note and "node_gone" in note for note in reports[1].notes)


# --- check 3 ----------------------------------------------------------------------------


def _custom_node(kind: str) -> dict[str, Any]:
    return event(
        "state.ops_applied", [{"CreateNode": {"id": "node_c", "kind": kind, "props": {}}}], None
    )


def test_an_undeclared_node_kind_fails_check_3_only(repo: Path) -> None:
    append(repo, _custom_node("vibe"))
    reports = run_all(repo)
    assert failing(reports) == {3}
    assert "undeclared kind `vibe`" in failures_of(reports, 3)


def test_an_undeclared_relation_fails_check_3_only(repo: Path) -> None:
    rel = {"CreateRelation": {"from": "a", "rel": "likes", "to": "b", "props": {}}}
    append(repo, event("state.ops_applied", [rel], None))
    reports = run_all(repo)
    assert failing(reports) == {3}
    assert "undeclared rel `likes`" in failures_of(reports, 3)


def test_a_pack_admits_its_kind_and_a_broken_pack_fails(repo: Path) -> None:
    append(repo, _custom_node("experiment"))
    packs = repo / ".agent" / "packs"
    packs.mkdir(parents=True)
    pack = {
        "id": "pack_custom",
        "name": "custom",
        "version": "1",
        "object_types": {
            "experiment": {"kind": "experiment", "required_props": [], "prop_docs": {}}
        },
        "relation_types": {},
        "policies": [],
        "prompts": [],
        "settings": {},
    }
    (packs / "custom.json").write_text(json.dumps(pack))
    assert failing(run_all(repo)) == set()
    (packs / "broken.json").write_text('{"id":')
    reports = run_all(repo)
    assert failing(reports) == {3}
    assert "broken.json" in failures_of(reports, 3)


def test_a_malformed_ops_payload_fails_the_checks_that_fold_it(repo: Path) -> None:
    append(repo, event("state.ops_applied", {"not": "ops"}, None))
    reports = run_all(repo)
    assert failing(reports) == {2, 3, 6}
    assert "does not parse as ops" in failures_of(reports, 3)
    assert "fold failed" in failures_of(reports, 2) and "fold failed" in failures_of(reports, 6)


# --- check 4 ----------------------------------------------------------------------------


def _rewrite_first_line(root: Path) -> None:
    lines = (root / LOG).read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["ts_ms"] += 1
    lines[0] = json.dumps(first) + "\n"
    (root / LOG).write_text("".join(lines))


def test_an_append_passes_and_a_work_tree_edit_fails_check_4_only(repo: Path) -> None:
    append(repo, event("run.started", {"run_id": "r2"}, None))
    commit_all(repo, "append")
    assert failing(run_all(repo)) == set()
    _rewrite_first_line(repo)
    reports = run_all(repo)
    assert failing(reports) == {4}
    assert "working tree edits committed lines" in failures_of(reports, 4)


def test_a_committed_edit_fails_check_4_only(repo: Path) -> None:
    _rewrite_first_line(repo)
    commit_all(repo, "rewrite history")
    reports = run_all(repo)
    assert failing(reports) == {4}
    assert "edits existing lines" in failures_of(reports, 4)


def test_a_committed_deletion_fails_check_4_even_after_the_file_returns(repo: Path) -> None:
    saved = (repo / LOG).read_bytes()
    (repo / LOG).unlink()
    commit_all(repo, "delete the log")
    (repo / LOG).write_bytes(saved)
    commit_all(repo, "bring it back")
    reports = run_all(repo)
    assert failing(reports) == {4}
    assert "deleted in commit" in failures_of(reports, 4)


def test_any_facts_jsonl_is_append_only(repo: Path) -> None:
    facts = repo / "knowledge" / "facts.jsonl"
    facts.parent.mkdir()
    facts.write_text("fact one\n")
    commit_all(repo, "facts")
    facts.write_text("fact ONE\n")
    commit_all(repo, "edit a fact")
    reports = run_all(repo)
    assert failing(reports) == {4}
    assert "knowledge/facts.jsonl" in failures_of(reports, 4)


def test_a_committed_journal_missing_from_the_work_tree_fails_check_4(repo: Path) -> None:
    journal = repo / "journal" / "JOURNAL.md"
    journal.parent.mkdir()
    journal.write_text("# Journal\n")
    commit_all(repo, "journal")
    journal.unlink()
    reports = run_all(repo)
    assert failing(reports) == {4}
    assert "missing from working tree" in failures_of(reports, 4)


def test_a_directory_that_is_not_a_git_repository_fails_check_4_only(
    repo: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    reports = run_all(plain)
    assert failing(reports) == {4}
    assert "not a git repository" in failures_of(reports, 4)


# --- check 5 ----------------------------------------------------------------------------


def test_a_dangling_cause_fails_check_5_only(repo: Path) -> None:
    append(repo, event("tool.finished", {"run_id": "r"}, "event_nowhere"))
    reports = run_all(repo)
    assert failing(reports) == {5}
    assert "does not reference an earlier event" in failures_of(reports, 5)


def test_a_raw_event_as_root_fails_and_an_ops_only_root_passes(repo: Path) -> None:
    ops_root = [{"MarkStale": {"id": "node_old", "reason": "maintenance"}}]
    append(repo, event("state.ops_applied", ops_root, None))
    assert failing(run_all(repo)) == set()
    append(repo, event("tool.called", {"id": "node_t"}, None))
    reports = run_all(repo)
    assert failing(reports) == {5}
    assert "root event (null causation) has kind `tool.called`" in failures_of(reports, 5)


def test_duplicate_and_self_referencing_ids_fail_check_5(repo: Path) -> None:
    finished = next(
        line for line in (repo / LOG).read_text().splitlines() if "tool.finished" in line
    )
    append(repo, finished)
    reports = run_all(repo)
    assert failing(reports) == {5}
    assert "duplicate event id" in failures_of(reports, 5)


def test_an_event_citing_itself_fails_check_5(repo: Path) -> None:
    body = event("observation.created", {"id": "node_o"}, None)
    body["causation_id"] = body["id"]
    append(repo, body)
    append(
        repo,
        event(
            "state.ops_applied",
            [{"CreateNode": {"id": "node_o", "kind": "observation", "props": {}}}],
            body["id"],
        ),
    )
    reports = run_all(repo)
    assert failing(reports) == {5}


# --- check 6 ----------------------------------------------------------------------------


def test_a_missing_manifest_or_identity_fails_check_6_only(repo: Path) -> None:
    (repo / "AGENT.md").unlink()
    shutil.rmtree(repo / "identity")
    reports = run_all(repo)
    assert failing(reports) == {6}
    assert "AGENT.md manifest missing" in failures_of(reports, 6)
    assert "no identity/" in failures_of(reports, 6)


def test_an_identity_that_does_not_match_its_hash_fails_check_6(repo: Path) -> None:
    (repo / "identity" / "IDENTITY.md").write_text("# Identity\n\nSomeone else.\n")
    reports = run_all(repo)
    assert failing(reports) == {6}
    assert "AGENT.md declares" in failures_of(reports, 6)


FIXTURE = [
    (
        "goal.created",
        {"id": "goal_retry", "title": "Make retry reliable", "status": "Open"},
        None,
        [
            {
                "CreateNode": {
                    "id": "goal_retry",
                    "kind": "goal",
                    "props": {"title": "Make retry reliable", "status": "Open"},
                }
            }
        ],
    ),
    (
        "patch.proposed",
        {"id": "patch_9", "title": "persist retry counter", "status": "Proposed"},
        0,
        [
            {
                "CreateNode": {
                    "id": "patch_9",
                    "kind": "patch",
                    "props": {"status": "Proposed", "references_commit": "abc1234"},
                }
            },
            {
                "CreateRelation": {
                    "from": "patch_9",
                    "rel": "advances",
                    "to": "goal_retry",
                    "props": {},
                }
            },
        ],
    ),
    (
        "eval.finished",
        {"id": "eval_5", "command": "pytest", "status": "Passed"},
        2,
        [
            {"CreateNode": {"id": "eval_5", "kind": "eval", "props": {"status": "Passed"}}},
            {
                "CreateRelation": {
                    "from": "patch_9",
                    "rel": "validated_by",
                    "to": "eval_5",
                    "props": {},
                }
            },
        ],
    ),
    (
        "decision.created",
        {"id": "decision_3", "status": "Approved", "reason": "passed"},
        4,
        [
            {
                "CreateNode": {
                    "id": "decision_3",
                    "kind": "decision",
                    "props": {"status": "Approved"},
                }
            },
            {
                "CreateRelation": {
                    "from": "patch_9",
                    "rel": "approved_by",
                    "to": "decision_3",
                    "props": {},
                }
            },
            {"UpdateNode": {"id": "patch_9", "props": {"status": "Promoted"}}},
        ],
    ),
]


def _fixture_repo(root: Path, *, promote: bool = True) -> Path:
    root.mkdir()
    (root / "AGENT.md").write_text("# AGENT\n\n```yaml\nspec_version: 1\nagent_id: evolve\n```\n")
    (root / "identity").mkdir()
    (root / "identity" / "IDENTITY.md").write_text("# Identity\n")
    (root / "state").mkdir()
    written: list[dict[str, Any]] = []
    for kind, payload, cause_index, ops in FIXTURE:
        cause = None if cause_index is None else written[cause_index]["id"]
        domain = event(kind, payload, cause)
        if not promote:
            ops = [op for op in ops if "UpdateNode" not in op]
        written += [domain, event("state.ops_applied", ops, domain["id"])]
    (root / LOG).write_text("".join(json.dumps(e) + "\n" for e in written))
    git.Repo.init(root)
    commit_all(root, "fixture")
    return root


def test_the_fixture_facts_hold_and_a_missing_one_fails_check_6(tmp_path: Path) -> None:
    good = _fixture_repo(tmp_path / "good")
    assert failing(run_all(good, fixture=True)) == set()
    bad = _fixture_repo(tmp_path / "bad", promote=False)
    reports = run_all(bad, fixture=True)
    assert failing(reports) == {6}
    assert "patch_9.status != Promoted" in failures_of(reports, 6)
    assert any("identity_hash" in note for note in reports[5].notes)


# --- check 7 ----------------------------------------------------------------------------


def _failure(root: Path, node: str, **payload: Any) -> dict[str, Any]:
    return event("failure.observed", {"id": node, **payload}, run_start(root))


def _create(node: str, kind: str, cause: str, **props: Any) -> dict[str, Any]:
    ops = [{"CreateNode": {"id": node, "kind": kind, "props": props}}]
    return event("state.ops_applied", ops, cause, ts_ms=1_800_000_000_001 + len(props))


def test_an_entity_without_its_ops_event_fails_check_7_only(repo: Path) -> None:
    append(repo, _failure(repo, "node_f"))
    reports = run_all(repo)
    assert failing(reports) == {7}
    assert "has no paired state.ops_applied" in failures_of(reports, 7)


def test_a_status_contradiction_fails_even_with_a_decoy(repo: Path) -> None:
    domain = _failure(repo, "node_f", status="Open")
    wrong = _create("node_f", "failure", domain["id"], status="Closed")
    decoy = event(
        "state.ops_applied", [{"UpdateNode": {"id": "node_f", "props": {}}}], domain["id"]
    )
    append(repo, domain, wrong, decoy)
    reports = run_all(repo)
    assert failing(reports) == {7}
    assert "status contradicts" in failures_of(reports, 7)


def test_a_double_create_and_a_wrong_kind_fail_check_7_only(repo: Path) -> None:
    domain = _failure(repo, "node_f")
    append(
        repo,
        domain,
        _create("node_f", "failure", domain["id"]),
        _create("node_f", "failure", domain["id"], again=True),
    )
    reports = run_all(repo)
    assert failing(reports) == {7}
    assert "created by 2 ops events" in failures_of(reports, 7)


def test_a_wrong_kind_fails_check_7_only(repo: Path) -> None:
    domain = _failure(repo, "node_f")
    append(repo, domain, _create("node_f", "task", domain["id"]))
    reports = run_all(repo)
    assert failing(reports) == {7}
    assert "created as kind `task`, domain event implies `failure`" in failures_of(reports, 7)


def test_ops_chained_to_ops_fail_check_7_only(repo: Path) -> None:
    first_ops = next(e for e in events(repo) if e["kind"] == "state.ops_applied")
    append(
        repo,
        event(
            "state.ops_applied", [{"UpdateNode": {"id": "node_x", "props": {}}}], first_ops["id"]
        ),
    )
    reports = run_all(repo)
    assert failing(reports) == {7}
    assert "chained to another ops event" in failures_of(reports, 7)


# --- the whole log, and the command line ------------------------------------------------


def test_a_missing_log_fails_six_checks_and_check_4_still_runs(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git.Repo.init(root)
    reports = run_all(root)
    assert failing(reports) == {1, 2, 3, 5, 6, 7}
    assert reports[3].notes == ["no commits yet — nothing to violate"]


def test_a_torn_final_line_fails_check_1(repo: Path) -> None:
    with (repo / LOG).open("a") as handle:
        handle.write('{"id":"event_torn","schema_ver')
    reports = run_all(repo)
    assert 1 in failing(reports) and "not JSON" in failures_of(reports, 1)


def test_the_command_exits_0_1_and_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", str(repo)]) == 0
    assert capsys.readouterr().out.endswith("conformant: all checks passed\n")
    append(repo, _custom_node("vibe"))
    assert cli_main(["check", str(repo)]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] check 3 — vocabulary" in out and "conformant" not in out
    for argv in ([], ["check"], ["check", "a", "b"], ["check", str(repo), "--bogus"], ["nope"]):
        with pytest.raises(SystemExit) as exited:
            cli_main(argv)
        assert exited.value.code == 2
