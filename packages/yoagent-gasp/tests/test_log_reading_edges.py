"""How a repository is read back, at its edges: a vocabulary pack field by field, an
artifact op whole and each of its faults, an envelope's type errors, and the line numbers
of a fold of events in memory (pinned from a mutation run of yoagent-gasp,
docs/mutation.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from yoagent.gasp import (
    Actor,
    ArtifactRef,
    AttachArtifact,
    CreateNode,
    CreateRelation,
    EnvelopeError,
    Event,
    Graph,
    OpsError,
    fold_events,
    parse_ops,
)
from yoagent.gasp.envelope import event_from_json
from yoagent.gasp.ops import ops_to_json
from yoagent.gasp.vocabulary import PackError, parse_pack


def _pack(**changes: Any) -> dict[str, Any]:
    pack: dict[str, Any] = {
        "id": "pack_moods",
        "name": "moods",
        "version": "1.0.0",
        "object_types": {
            "vibe": {"kind": "vibe", "required_props": ["level"], "description": None}
        },
        "relation_types": {"feels": {"rel": "feels", "from_kinds": ["vibe"], "to_kinds": ["goal"]}},
        "policies": ["be kind"],
        "prompts": [],
        "settings": {},
    }
    pack.update(changes)
    return pack


def _entry(table: str, name: str, **changes: Any) -> dict[str, Any]:
    """The pack with one field of one ``table`` entry changed (``None`` removes it)."""
    pack = _pack()
    entry = dict(pack[table][name])
    for key, value in changes.items():
        if value is None:
            del entry[key]
        else:
            entry[key] = value
    pack[table] = {name: entry}
    return pack


def test_a_whole_pack_declares_its_node_and_relation_kinds() -> None:
    described = _entry("object_types", "vibe", description="how it feels")
    assert parse_pack(json.dumps(described)) == (["vibe"], ["feels"])
    assert parse_pack(json.dumps(_pack())) == (["vibe"], ["feels"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": NaN}', "not JSON: NaN is not JSON"),
        ('{"id": "a", "id": "b"}', "not JSON: duplicate field `id`"),
        ("[]", "a pack must be a JSON object"),
    ],
)
def test_a_pack_that_is_not_strict_json_of_an_object_is_refused(text: str, message: str) -> None:
    with pytest.raises(PackError) as refused:
        parse_pack(text)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("pack", "message"),
    [
        ({k: v for k, v in _pack().items() if k != "id"}, "missing field `id`"),
        (_pack(id=1), "`id` must be a string"),
        (_pack(name=None), "`name` must be a string"),
        (_pack(version=["1"]), "`version` must be a string"),
        (_pack(policies="be kind"), "`policies` must be an array"),
        (_pack(prompts=[1]), "`prompts` must be an array of strings"),
        ({k: v for k, v in _pack().items() if k != "settings"}, "missing field `settings`"),
        (_pack(object_types=[]), "`object_types` must be an object"),
        (_pack(relation_types="feels"), "`relation_types` must be an object"),
        (_pack(object_types={"vibe": []}), "`object_types.vibe` must be an object"),
        (_entry("object_types", "vibe", kind=None), "missing field `kind`"),
        (_entry("object_types", "vibe", kind=1), "`kind` must be a string"),
        (
            _entry("object_types", "vibe", required_props=None),
            "`object_types.vibe`: missing field `required_props`",
        ),
        (
            _entry("object_types", "vibe", required_props=[1]),
            "`object_types.vibe.required_props` must be an array of strings",
        ),
        (
            _entry("object_types", "vibe", description=1),
            "`object_types.vibe.description` must be a string or null",
        ),
        (_entry("relation_types", "feels", rel=None), "missing field `rel`"),
        (_entry("relation_types", "feels", rel=False), "`rel` must be a string"),
        (
            _entry("relation_types", "feels", from_kinds=None),
            "`relation_types.feels`: missing field `from_kinds`",
        ),
        (
            _entry("relation_types", "feels", to_kinds=None),
            "`relation_types.feels`: missing field `to_kinds`",
        ),
        (
            _entry("relation_types", "feels", to_kinds="goal"),
            "`relation_types.feels.to_kinds` must be an array of strings",
        ),
    ],
)
def test_each_fault_of_a_pack_is_named(pack: dict[str, Any], message: str) -> None:
    with pytest.raises(PackError) as refused:
        parse_pack(json.dumps(pack))
    assert str(refused.value) == message


# --- an artifact op --------------------------------------------------------------------

ARTIFACT = {
    "kind": "commit",
    "uri": "git:abc1234",
    "hash": "abc1234",
    "summary": "the fix",
    "metadata": {"files": ["a.py"]},
}


def test_an_artifact_op_reads_every_field_and_writes_them_back() -> None:
    payload = [
        {"CreateNode": {"id": "patch_1", "kind": "patch", "props": {}}},
        {"AttachArtifact": {"id": "patch_1", "artifact": ARTIFACT}},
    ]
    ops = parse_ops(payload)
    assert ops[1] == AttachArtifact(
        "patch_1",
        ArtifactRef(
            kind="commit",
            uri="git:abc1234",
            hash="abc1234",
            summary="the fix",
            metadata={"files": ["a.py"]},
        ),
    )
    assert ops_to_json(ops) == payload
    graph = Graph()
    assert graph.apply(ops) == []
    node = graph.node("patch_1")
    assert node is not None
    assert [artifact.to_json() for artifact in node.artifacts] == [ARTIFACT]
    written = node.artifacts[0].to_json()
    written["metadata"]["files"].append("b.py")  # a copy: the graph's artifact is unchanged
    assert node.artifacts[0].metadata == {"files": ["a.py"]}


def test_an_artifact_without_hash_or_summary_has_none() -> None:
    bare = {"kind": "url", "uri": "https://example.invalid/", "metadata": None}
    (op,) = parse_ops([{"AttachArtifact": {"id": "n", "artifact": bare}}])
    assert op == AttachArtifact("n", ArtifactRef(kind="url", uri=bare["uri"], metadata=None))
    assert ops_to_json([op])[0]["AttachArtifact"]["artifact"] == {
        **bare,
        "hash": None,
        "summary": None,
    }


@pytest.mark.parametrize(
    ("artifact", "message"),
    [
        ("git:abc", "op 0 (AttachArtifact): `artifact` must be an object"),
        ({**ARTIFACT, "hash": 1}, "op 0 (AttachArtifact): `hash` must be a string or null"),
        ({**ARTIFACT, "summary": []}, "op 0 (AttachArtifact): `summary` must be a string or null"),
        (
            {k: v for k, v in ARTIFACT.items() if k != "kind"},
            "op 0 (AttachArtifact): missing field `kind`",
        ),
        ({**ARTIFACT, "uri": 7}, "op 0 (AttachArtifact): `uri` must be a string"),
        (
            {k: v for k, v in ARTIFACT.items() if k != "metadata"},
            "op 0 (AttachArtifact): missing field `metadata`",
        ),
    ],
)
def test_each_fault_of_an_artifact_is_named(artifact: object, message: str) -> None:
    with pytest.raises(OpsError) as refused:
        parse_ops([{"AttachArtifact": {"id": "n", "artifact": artifact}}])
    assert str(refused.value) == message


# --- an envelope's types ------------------------------------------------------------------


def _envelope(**changes: object) -> dict[str, object]:
    envelope: dict[str, object] = {
        "id": "event_1",
        "schema_version": 1,
        "ts_ms": 1,
        "actor": {"kind": "agent", "id": "a"},
        "kind": "goal.created",
        "payload": {},
        "causation_id": None,
        "correlation_id": None,
    }
    envelope.update(changes)
    return envelope


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (_envelope(id=None), "`id` must be a string, not null"),
        (_envelope(id=1), "`id` must be a string, not an integer"),
        (_envelope(kind=1.5), "`kind` must be a string, not a float"),
        (_envelope(kind=True), "`kind` must be a string, not a boolean"),
        (_envelope(causation_id=[]), "`causation_id` must be a string, not an array"),
        (_envelope(correlation_id={}), "`correlation_id` must be a string, not an object"),
        (_envelope(ts_ms="1"), "`ts_ms` must be an integer, not a string"),
        (_envelope(ts_ms=b"1"), "`ts_ms` must be an integer, not bytes"),
        (_envelope(actor=None), "`actor` must be an object, not null"),
        ("event", "an event must be a JSON object, not a string"),
    ],
)
def test_an_envelope_of_the_wrong_types_names_what_it_found(value: object, message: str) -> None:
    with pytest.raises(EnvelopeError) as refused:
        event_from_json(value)
    assert str(refused.value) == message


# --- folding events in memory ------------------------------------------------------------


def test_a_fold_of_events_in_memory_numbers_them_from_one() -> None:
    actor = Actor("agent", "a")
    ops = [CreateNode("goal_1", "goal", {}), CreateRelation("goal_1", "serves", "goal_2")]
    events = [
        Event.new(actor, "goal.created", {"id": "goal_1"}),
        Event.new(actor, "state.ops_applied", ops_to_json(ops)),
        Event.new(actor, "state.ops_applied", "not ops"),
        Event.new(actor, "state.ops_applied", [{"MarkStale": {"id": "gone", "reason": "r"}}]),
    ]
    fold = fold_events(events)
    assert fold.lines == [1, 2, 3, 4]
    assert [problem.line for problem in fold.problems] == [3]
    assert str(fold.problems[0]) == (
        f"line 3: event {events[2].id}: a state.ops_applied payload must be an array of ops"
    )
    assert [(skip.line, skip.event_id, skip.node) for skip in fold.skipped] == [
        (4, events[3].id, "gone")
    ]
    assert [r.to for r in fold.graph.incoming("goal_2")] == ["goal_2"]
    assert fold.graph.incoming("goal_2", "blocks") == []
    assert fold.graph.incoming("goal_1") == []
    assert [r.from_ for r in fold.graph.incoming("goal_2", "serves")] == ["goal_1"]
