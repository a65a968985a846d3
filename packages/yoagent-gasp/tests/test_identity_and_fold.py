"""The identity hash against the recipe GASP manifests state, the manifest, the fold's
semantics, and the summaries the recorder keeps."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yoagent.gasp import (
    Actor,
    Event,
    Graph,
    ManifestError,
    fold_events,
    identity_hash,
    new_id,
    read_manifest,
    summarize,
)
from yoagent.gasp.fold import read_log
from yoagent.gasp.identity import Manifest, parse_manifest
from yoagent.gasp.ops import (
    ArtifactRef,
    AttachArtifact,
    CreateNode,
    CreateRelation,
    DeleteRelation,
    MarkStale,
    OpsError,
    TombstoneNode,
    UpdateNode,
    ops_to_json,
    parse_ops,
)
from yoagent.gasp.summary import args_fingerprint, fnv1a_64

RECIPE = (
    "find identity -type f | LC_ALL=C sort | while IFS= read -r f; do printf '%s\\n' \"$f\"; "
    'cat "$f"; done | sha256sum'
)
PINNED = "d20f4a3aa534086581c67409f88689780e87e17ca9d1e5c3f62e9c7f8fafcd9b"


def _identity_folder(root: Path) -> Path:
    folder = root / "identity"
    (folder / "nested").mkdir(parents=True)
    (folder / "IDENTITY.md").write_text("# Who I Am\n\nA test agent — ünïcode included.\n")
    (folder / "PERSONALITY.md").write_bytes(b"Curious.\r\nNo final newline")
    (folder / "PRINCIPLES.md").write_text("")
    (folder / "nested" / "Zeta.md").write_text("sorted after PRINCIPLES? no: byte order\n")
    (folder / "_under.md").write_text("underscore sorts after capitals in C order\n")
    return folder


def test_the_identity_hash_is_the_manifest_recipe(tmp_path: Path) -> None:
    """The recipe AGENT.md states, run by the shell, gives the same digest (the same Python
    recipe reproduces yologdev/yoyo-gasp's declared 69d0cdee…4a44dba, checked by hand)."""
    if shutil.which("sha256sum") is None or shutil.which("find") is None:
        pytest.skip("needs find and sha256sum to run the manifest's recipe")
    _identity_folder(tmp_path)
    shell = subprocess.run(
        ["bash", "-c", RECIPE], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert identity_hash(tmp_path) == shell.stdout.split()[0]
    # pinned, so a change to either side of the comparison cannot pass unnoticed
    assert identity_hash(tmp_path) == PINNED


@pytest.mark.parametrize("link", ["identity", "identity/elsewhere", "identity/IDENTITY.md"])
def test_the_identity_hash_follows_no_symlink_as_the_recipe_does_not(
    tmp_path: Path, link: str
) -> None:
    """``find identity -type f`` follows no symlink, not even a symlinked ``identity``
    itself; a hash that did would vouch for files outside the repository."""
    if shutil.which("sha256sum") is None or shutil.which("find") is None:
        pytest.skip("needs find and sha256sum to run the manifest's recipe")
    root, outside = tmp_path / "repo", tmp_path / "outside"
    _identity_folder(outside)
    _identity_folder(root)
    target = root / link
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    target.symlink_to(outside / "identity" / ("IDENTITY.md" if link.endswith(".md") else ""))
    shell = subprocess.run(
        ["bash", "-c", RECIPE], cwd=root, capture_output=True, text=True, check=True
    )
    assert identity_hash(root) == shell.stdout.split()[0]


def test_the_identity_hash_changes_with_a_path_or_a_byte(tmp_path: Path) -> None:
    folder = _identity_folder(tmp_path)
    before = identity_hash(tmp_path)
    (folder / "PRINCIPLES.md").write_text(" ")
    changed_bytes = identity_hash(tmp_path)
    (folder / "PRINCIPLES.md").rename(folder / "PRINCIPLE.md")
    assert len({before, changed_bytes, identity_hash(tmp_path)}) == 3


def test_the_manifest_round_trips_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    manifest = Manifest(
        agent_id="yoyo: the agent", identity_hash="ab" * 32, executor=".agent/config.toml"
    )
    parsed = parse_manifest(manifest.render())
    assert (parsed.agent_id, parsed.spec_version, parsed.identity_hash, parsed.executor) == (
        "yoyo: the agent",
        1,
        "ab" * 32,
        ".agent/config.toml",
    )
    with pytest.raises(ManifestError, match="missing"):
        read_manifest(tmp_path)
    for text in ("# no block\n", "```yaml\n- a list\n```\n", "```yaml\nagent_id: x\n```\n"):
        with pytest.raises(ManifestError):
            parse_manifest(text)


ACTOR = Actor("agent", "a")


def _ops_event(*ops: object) -> Event:
    return Event.new(ACTOR, "state.ops_applied", ops_to_json(list(ops)))  # type: ignore[arg-type]


def test_the_fold_applies_ops_as_the_reference_runtime_does() -> None:
    events = [
        _ops_event(
            CreateNode("n1", "goal", {"status": "Open", "meta": {"a": 1, "b": {"c": 2}}}),
            CreateNode("n2", "task", {}),
            CreateRelation("n2", "serves", "n1", {}),
            CreateRelation("n2", "serves", "n1", {"again": True}),
        ),
        _ops_event(
            UpdateNode("n1", {"status": "Done", "meta": {"b": {"d": 3}, "a": None}}),
            UpdateNode("missing", {"x": 1}),
            TombstoneNode("n2", "obsolete"),
            MarkStale("n1", "old"),
            AttachArtifact("n1", ArtifactRef(kind="commit", uri="git:abc")),
            DeleteRelation("n2", "serves", "n1"),
        ),
    ]
    fold = fold_events(events)
    goal = fold.graph.node("n1")
    assert goal is not None
    assert goal.props == {
        "status": "Done",
        "meta": {"a": None, "b": {"c": 2, "d": 3}},
        "stale_reason": "old",
    }
    assert goal.stale and goal.artifacts[0].uri == "git:abc"
    task = fold.graph.node("n2")
    assert task is not None and task.tombstoned and task.props["tombstone_reason"] == "obsolete"
    assert fold.graph.relations == []
    assert fold.graph.version == 9  # 10 ops, the dangling UpdateNode not counted
    (skip,) = fold.skipped
    assert (skip.op, skip.node, skip.index) == ("UpdateNode", "missing", 1)
    # the graph owns its data: the events' payloads are untouched
    assert events[0].payload[0]["CreateNode"]["props"]["status"] == "Open"


def test_a_bad_line_and_a_malformed_ops_payload_are_left_out_and_reported() -> None:
    good = _ops_event(CreateNode("n1", "goal", {})).to_line()
    broken_ops = Event.new(ACTOR, "state.ops_applied", {"not": "ops"}).to_line()
    raw = (good + "not json\n" + broken_ops + good[:40]).encode()
    fold = read_log(raw)
    assert len(fold.events) == 2 and fold.graph.node("n1") is not None
    assert [p.line for p in fold.problems] == [2, 3, 4]
    assert fold.torn_tail and "torn final line" in fold.problems[-1].message


def test_a_snapshot_graph_round_trips_through_json() -> None:
    fold = fold_events(
        [_ops_event(CreateNode("n", "goal", {"x": 1.5}), CreateRelation("n", "r", "n", {}))]
    )
    assert Graph.from_json(fold.graph.to_json()).same_as(fold.graph)
    other = fold.graph.to_json()
    other["nodes"]["n"]["props"]["x"] = 1  # 1 is not 1.5, and 1 is not 1.0 either
    assert not Graph.from_json(other).same_as(fold.graph)


@pytest.mark.parametrize(
    "payload",
    [
        {"CreateNode": {"id": "n", "kind": "goal"}},  # props missing
        {"CreateNode": {"id": "n", "kind": "goal", "props": {}}, "extra": {}},
        {"Explode": {"id": "n"}},
        {"AttachArtifact": {"id": "n", "artifact": {"kind": "k", "uri": "u"}}},  # no metadata
        "CreateNode",
    ],
)
def test_ops_that_do_not_match_the_reference_shapes_are_refused(payload: object) -> None:
    with pytest.raises(OpsError):
        parse_ops([payload])


@given(st.text())
def test_a_summary_is_one_line_of_at_most_201_characters(value: str) -> None:
    """Whatever the text: no whitespace runs, ≤ 200 characters plus the ellipsis."""
    line = summarize(value)
    assert line == " ".join(line.split())
    assert len(line) <= 201
    assert len(line) <= 200 or line.endswith("…")


def test_summaries_count_characters_not_bytes() -> None:
    assert summarize("a\nb\t  c") == "a b c"
    assert summarize("x" * 200) == "x" * 200
    long = summarize("ö" * 300)
    assert len(long) == 201 and long.endswith("…")


def test_fnv1a_matches_its_published_vectors() -> None:
    assert fnv1a_64(b"") == 0xCBF29CE484222325
    assert fnv1a_64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64(b"foobar") == 0x85944171F73967E8


def test_fingerprints_key_on_what_identifies_a_call() -> None:
    whole = args_fingerprint("read_file", {"path": "src/big.py"})
    page = args_fingerprint("read_file", {"path": "src/big.py", "offset": 500, "limit": 100})
    assert whole == page and whole == f"read_file:{fnv1a_64(b'src/big.py'):016x}"
    assert args_fingerprint("edit_file", {"path": "src/big.py"}).startswith("edit_file:")
    assert args_fingerprint("bash", {"command": "make", "timeout": 5}) == args_fingerprint(
        "bash", {"command": "make"}
    )
    assert args_fingerprint("list_files", {"path": "src"}).endswith(f"{fnv1a_64(b'src'):016x}")
    whole_args = b'{"path":".","pattern":"x"}'  # compact, keys sorted, as serde_json writes
    other = args_fingerprint("search", {"pattern": "x", "path": "."})
    assert other == f"search:{fnv1a_64(whole_args):016x}"
    assert args_fingerprint("read_file", "not an object").startswith("read_file:")  # type: ignore[arg-type]


def test_ids_are_uuid4_hex_as_the_reference_writes_them() -> None:
    ids = {new_id("event") for _ in range(2000)}
    assert len(ids) == 2000
    for value in ids:
        prefix, _, digits = value.partition("_")
        parsed = uuid.UUID(hex=digits)
        assert prefix == "event" and parsed.hex == digits
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
