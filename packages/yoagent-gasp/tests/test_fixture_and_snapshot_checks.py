"""Checks 2 and 6 at their edges: each fixture fact failed on its own (the right relation,
the right status), a snapshot over a log whose last line has no newline, and each
snapshot fault named (pinned from a mutation run of yoagent-gasp, docs/mutation.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gasp_helpers import snapshot_record, write_snapshot

from yoagent.gasp import Actor, Event, NewGoal, Recorder, run_all
from yoagent.gasp.checks import check_restore

LOG = Path("state/events.jsonl")
ACTOR = Actor("system", "fixture")
ALL_MISSING = [
    "fixture: goal_retry missing",
    "fixture: patch_9 --advances--> goal_retry missing",
    "fixture: patch_9.status != Promoted",
    "fixture: patch_9.references_commit != abc1234",
    "fixture: patch_9 validated_by passed eval_5 missing",
    "fixture: patch_9 approved_by approved decision_3 missing",
]


@pytest.fixture
def repo(repo_dir: Path) -> Path:
    Recorder.init(repo_dir, "checked-agent", NewGoal("be checked"))
    return repo_dir


def _node(node: str, kind: str, **props: Any) -> dict[str, Any]:
    return {"CreateNode": {"id": node, "kind": kind, "props": props}}


def _edge(source: str, rel: str, target: str) -> dict[str, Any]:
    return {"CreateRelation": {"from": source, "rel": rel, "to": target, "props": {}}}


def _facts_failed(root: Path, *ops: dict[str, Any]) -> list[str]:
    events = [(1, Event.new(ACTOR, "state.ops_applied", list(ops)))]
    return check_restore(root, events, fixture=True).failures


def test_a_graph_without_the_fixture_fails_every_fact(repo: Path) -> None:
    (report,) = [r for r in run_all(repo, fixture=True) if r.number == 6]
    assert report.failures == ALL_MISSING


def _fixture_graph(
    *,
    advances: str = "advances",
    patch: tuple[str, str] = ("Promoted", "abc1234"),
    validated: tuple[str, str] = ("validated_by", "Passed"),
    approved: tuple[str, str] = ("approved_by", "Approved"),
) -> list[dict[str, Any]]:
    """The Part VI fixture graph, or a near miss of it: each relation and status given."""
    status, commit = patch
    return [
        _node("goal_retry", "goal"),
        _node("patch_9", "patch", status=status, references_commit=commit),
        _edge("patch_9", advances, "goal_retry"),
        _node("eval_5", "eval", status=validated[1]),
        _edge("patch_9", validated[0], "eval_5"),
        _node("decision_3", "decision", status=approved[1]),
        _edge("patch_9", approved[0], "decision_3"),
    ]


def test_the_whole_fixture_graph_fails_none(repo: Path) -> None:
    assert _facts_failed(repo, *_fixture_graph()) == []


def test_a_fact_needs_its_own_relation_not_another(repo: Path) -> None:
    graph = _fixture_graph(
        advances="blocks",
        validated=("references", "Passed"),
        approved=("references", "Approved"),
    )
    assert _facts_failed(repo, *graph) == [ALL_MISSING[1], ALL_MISSING[4], ALL_MISSING[5]]


def test_a_fact_needs_its_status_as_well_as_its_relation(repo: Path) -> None:
    graph = _fixture_graph(
        patch=("Proposed", "abc1235"),
        validated=("validated_by", "Failed"),
        approved=("approved_by", "Rejected"),
    )
    assert _facts_failed(repo, *graph) == ALL_MISSING[2:]


# --- snapshots ----------------------------------------------------------------------------


def _check_2(root: Path, snapshot: object) -> list[str]:
    write_snapshot(root, snapshot)
    (report,) = [r for r in run_all(root) if r.number == 2]
    return report.failures


def test_a_snapshot_may_cover_a_last_line_without_its_newline(repo: Path) -> None:
    raw = (repo / LOG).read_bytes()
    extra = Event.new(ACTOR, "state.ops_applied", [_node("obs_1", "observation")])
    raw += extra.to_line().removesuffix("\n").encode()
    (repo / LOG).write_bytes(raw)
    lines = raw.count(b"\n") + 1
    assert _check_2(repo, snapshot_record(repo, lines)) == []


def test_a_snapshot_past_the_log_names_how_many_lines_it_has(repo: Path) -> None:
    raw = (repo / LOG).read_bytes()
    lines = raw.count(b"\n")
    snapshot = snapshot_record(repo, lines)
    snapshot["integrity"]["line_count"] = lines + 1
    assert _check_2(repo, snapshot) == [
        f"snapshot snap: line_count {lines + 1} out of range (log has {lines} lines)"
    ]


@pytest.mark.parametrize("count", [True, -1, "3"])
def test_a_line_count_that_is_not_a_count_is_named(repo: Path, count: object) -> None:
    raw = (repo / LOG).read_bytes()
    snapshot = snapshot_record(repo, raw.count(b"\n"))
    snapshot["integrity"]["line_count"] = count
    assert _check_2(repo, snapshot) == [
        "snapshot snap: integrity record missing numeric `line_count`"
    ]


def test_a_snapshot_that_is_not_an_object_is_named(repo: Path) -> None:
    assert _check_2(repo, []) == ["snapshot snap: missing `graph` or `integrity` record"]
