"""The seven GASP conformance checks (the protocol's Part VI), fail-closed.

Each check reports failures (the repository is not conformant) and notes (worth a look,
not a failure). An internal error never turns a failure into a pass: anything
unexpected while checking is a failure of that check. Line numbers are physical lines
of ``state/events.jsonl``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import git

from ._json import as_object, json_equal, loads, loads_event
from .envelope import ENVELOPE_KEYS, STATE_OPS_APPLIED, Event, event_from_json
from .fold import LOG_PATH, Fold, apply_event
from .graph import Graph
from .identity import MANIFEST, ManifestError, identity_hash, read_manifest
from .ops import CreateNode, CreateRelation, Op, OpsError, parse_ops
from .vocabulary import ENTITY_CREATING, load_vocabulary

NAMES = {
    1: "envelope round-trip",
    2: "replay",
    3: "vocabulary",
    4: "append-only in git",
    5: "causation integrity",
    6: "restore",
    7: "domain↔ops consistency",
}
APPEND_ONLY_PATHS = ("state/events.jsonl", "journal/JOURNAL.md", "JOURNAL.md")


@dataclass(slots=True)
class CheckReport:
    """One check's verdict."""

    number: int
    failures: list[str] = field(default_factory=list[str])
    notes: list[str] = field(default_factory=list[str])

    @property
    def name(self) -> str:
        return NAMES[self.number]

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(slots=True)
class _Line:
    number: int
    text: str


def _physical_lines(raw: bytes) -> list[bytes]:
    """The log's physical lines, each with its newline (the last may lack one)."""
    pieces = raw.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _event_lines(text: str) -> list[_Line]:
    """Non-blank lines, numbered physically (a trailing ``\\r`` is part of the newline)."""
    found: list[_Line] = []
    for index, line in enumerate(text.split("\n")):
        line = line.removesuffix("\r")
        if line.strip():
            found.append(_Line(index + 1, line))
    return found


def _parse_events(lines: list[_Line]) -> list[tuple[int, Event]] | None:
    """Every line as an event, or ``None`` when one of them is not."""
    events: list[tuple[int, Event]] = []
    for line in lines:
        try:
            events.append((line.number, event_from_json(loads_event(line.text))))
        except ValueError:
            return None
    return events


def _fold(events: list[tuple[int, Event]]) -> Fold:
    fold = Fold()
    for number, event in events:
        apply_event(fold, event, number)
    return fold


# --- check 1 ----------------------------------------------------------------------------


def check_envelope(lines: list[_Line]) -> CheckReport:
    """Exactly the eight keys, a valid envelope, and a structurally equal re-serialization."""
    report = CheckReport(1)
    for line in lines:
        n = line.number
        try:
            value = loads(line.text)
        except ValueError as error:
            report.failures.append(f"line {n}: not JSON: {error}")
            continue
        fields = as_object(value)
        if fields is None:
            report.failures.append(f"line {n}: not a JSON object")
            continue
        report.failures += [
            f"line {n}: missing envelope field `{key}`"
            for key in ENVELOPE_KEYS
            if key not in fields
        ]
        report.failures += [
            f"line {n}: unknown top-level field `{key}`"
            for key in fields
            if key not in ENVELOPE_KEYS
        ]
        try:
            event = event_from_json(loads_event(line.text))
        except ValueError as error:
            report.failures.append(f"line {n}: not a valid envelope: {error}")
            continue
        if not json_equal(event.to_json(), value):
            report.failures.append(f"line {n}: does not round-trip structurally")
    return report


# --- check 2 ----------------------------------------------------------------------------


def check_replay(root: Path, events: list[tuple[int, Event]], raw: bytes) -> CheckReport:
    """The log folds; every snapshot matches the fold of the log prefix it names."""
    report = CheckReport(2)
    fold = _fold(events)
    if fold.problems:
        report.failures += [f"fold failed: {problem}" for problem in fold.problems]
        return report
    report.notes += [
        f"{skip}. The log is readable but malformed; a conformant runtime folds past this, "
        "and so does this check"
        for skip in fold.skipped
    ]
    snapshots = root / "snapshots"
    if not snapshots.is_dir():
        report.notes.append("no snapshots/ — skipped seed check")
        return report
    try:
        entries = sorted(snapshots.iterdir())
    except OSError as error:
        report.failures.append(f"cannot read snapshots/: {error.strerror}")
        return report
    physical = _physical_lines(raw)
    for entry in entries:
        problem = _check_snapshot(entry, physical)
        if problem is None:
            continue
        if problem.startswith("note: "):
            report.notes.append(problem.removeprefix("note: "))
        else:
            report.failures.append(problem)
    return report


def _check_snapshot(entry: Path, physical: list[bytes]) -> str | None:
    """What is wrong with one snapshot (``note: ...`` for a note), or ``None``."""
    name = entry.name
    path = entry / "graph.json"
    if not path.is_file():
        return f"note: snapshot {name}: no graph.json — not verified"
    try:
        value = loads(path.read_bytes())
    except OSError as error:
        return f"snapshot {name}: unreadable: {error.strerror}"
    except ValueError as error:
        return f"snapshot {name}: not JSON: {error}"
    snapshot = as_object(value)
    record = as_object(snapshot.get("integrity")) if snapshot is not None else None
    if snapshot is None or record is None or "graph" not in snapshot:
        return f"snapshot {name}: missing `graph` or `integrity` record"
    count = record.get("line_count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return f"snapshot {name}: integrity record missing numeric `line_count`"
    expected = record.get("sha256")
    if not isinstance(expected, str):
        return f"snapshot {name}: integrity record missing `sha256`"
    if count == 0 or count > len(physical):
        return f"snapshot {name}: line_count {count} out of range (log has {len(physical)} lines)"
    prefix = b"".join(physical[:count])
    if hashlib.sha256(prefix).hexdigest() != expected:
        return f"snapshot {name}: integrity hash mismatch (log prefix changed?)"
    try:
        text = prefix.decode("utf-8")
    except UnicodeDecodeError:
        return f"snapshot {name}: prefix does not parse: not UTF-8"
    events = _parse_events(_event_lines(text))
    if events is None:
        return f"snapshot {name}: prefix does not parse"
    event_id = record.get("event_id")
    if not isinstance(event_id, str):
        # Stricter than the reference at 4b543fa, which skips this test when the id is
        # absent or not a string: the integrity record names the prefix's last event.
        return f"snapshot {name}: integrity record missing string `event_id`"
    if not events or events[-1][1].id != event_id:
        return (
            f"snapshot {name}: integrity event_id `{event_id}` is not the last event of the prefix"
        )
    try:
        graph = Graph.from_json(snapshot["graph"])
    except OpsError as error:
        return f"snapshot {name}: graph does not parse: {error}"
    fold = _fold(events)
    if fold.problems:
        return f"snapshot {name}: prefix fold failed: {fold.problems[0]}"
    if not graph.same_as(fold.graph):
        return f"snapshot {name}: snapshot differs from folding its log prefix"
    return None


# --- check 3 ----------------------------------------------------------------------------


def _ops_events(events: list[tuple[int, Event]]) -> Iterator[tuple[int, Event, list[Op] | str]]:
    for number, event in events:
        if event.kind != STATE_OPS_APPLIED:
            continue
        try:
            yield number, event, parse_ops(event.payload)
        except OpsError as error:
            yield number, event, str(error)


def check_vocabulary(root: Path, events: list[tuple[int, Event]]) -> CheckReport:
    """Every created node kind and relation kind is baseline or declared by a pack."""
    report = CheckReport(3)
    vocabulary = load_vocabulary(root)
    report.failures += vocabulary.problems
    for number, _event, ops in _ops_events(events):
        if isinstance(ops, str):
            report.failures.append(
                f"line {number}: state.ops_applied payload does not parse as ops: {ops}"
            )
            continue
        for op in ops:
            if isinstance(op, CreateNode) and op.kind not in vocabulary.node_kinds:
                report.failures.append(
                    f"line {number}: CreateNode {op.id} uses undeclared kind `{op.kind}`"
                )
            elif isinstance(op, CreateRelation) and op.rel not in vocabulary.relation_kinds:
                report.failures.append(
                    f"line {number}: CreateRelation from {op.from_} uses undeclared rel `{op.rel}`"
                )
    return report


# --- check 4 ----------------------------------------------------------------------------


def check_append_only(root: Path) -> CheckReport:
    """Each committed version of the log, the journal and every ``facts.jsonl`` extends the
    one before it byte for byte, and the work tree extends the last."""
    report = CheckReport(4)
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        report.failures.append(
            "not a git repository (conformance rule 1: state lives in a git repo)"
        )
        return report
    try:
        with repo:
            _walk_append_only(repo, root, report)
    except (git.GitCommandError, OSError, ValueError) as error:
        report.failures.append(f"cannot walk the history: {error}")
    return report


def _walk_append_only(repo: git.Repo, root: Path, report: CheckReport) -> None:
    if repo.working_tree_dir is None:
        report.failures.append("a bare repository has no work tree to check")
        return
    if not repo.head.is_valid():
        report.notes.append("no commits yet — nothing to violate")
        return
    top = Path(repo.working_tree_dir).resolve()
    prefix = root.resolve().relative_to(top).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    listed = repo.git.ls_files("--", f"{prefix}facts.jsonl", f"{prefix}*/facts.jsonl")
    facts = (line.removeprefix(prefix) for line in listed.splitlines() if line)
    paths = sorted({*APPEND_ONLY_PATHS, *facts})
    for path in paths:
        in_repo = prefix + path
        shas = repo.git.rev_list("--reverse", "--full-history", "HEAD", "--", in_repo).split()
        previous: bytes | None = None
        for sha in shas:
            try:
                blob = repo.commit(sha).tree / in_repo
                content = cast(bytes, blob.data_stream.read())
            except KeyError:
                if previous is not None:
                    report.failures.append(f"{path}: deleted in commit {sha[:7]}")
                previous = None
                continue
            if previous is not None and not content.startswith(previous):
                report.failures.append(
                    f"{path}: commit {sha[:7]} edits existing lines (not append-only)"
                )
            previous = content
        if previous is None:
            continue
        try:
            on_disk = (root / path).read_bytes()
        except FileNotFoundError:
            report.failures.append(f"{path}: committed file missing from working tree")
            continue
        except OSError as error:
            report.failures.append(f"{path}: working tree unreadable: {error.strerror}")
            continue
        if not on_disk.startswith(previous):
            report.failures.append(f"{path}: working tree edits committed lines")


# --- check 5 ----------------------------------------------------------------------------


def check_causation(events: list[tuple[int, Event]]) -> CheckReport:
    """Unique ids; every cause an earlier event; roots only ``*.created``, ``*.started`` or
    ``state.ops_applied``."""
    report = CheckReport(5)
    seen: set[str] = set()
    for n, event in events:
        cause = event.causation_id
        if cause is not None:
            if cause not in seen:
                report.failures.append(
                    f"line {n}: causation_id {cause} does not reference an earlier event"
                )
        elif not (event.kind.endswith((".created", ".started")) or event.kind == STATE_OPS_APPLIED):
            report.failures.append(
                f"line {n}: root event (null causation) has kind `{event.kind}`, expected "
                "*.created / *.started / state.ops_applied"
            )
        if event.id in seen:
            report.failures.append(
                f"line {n}: duplicate event id {event.id} (ids must be unique for the causal "
                "order to be well-defined)"
            )
        seen.add(event.id)
    return report


# --- check 6 ----------------------------------------------------------------------------


def check_restore(root: Path, events: list[tuple[int, Event]], fixture: bool) -> CheckReport:
    """The manifest and identity are where restore reads them, the identity matches its
    declared hash, and the log folds (with ``fixture``: to the Part VI fixture graph)."""
    report = CheckReport(6)
    if not (root / MANIFEST).is_file():
        report.failures.append("AGENT.md manifest missing")
    else:
        _check_identity_hash(root, report)
    if not ((root / "identity").is_dir() or (root / "IDENTITY.md").is_file()):
        report.failures.append("no identity/ directory or IDENTITY.md")
    fold = _fold(events)
    if fold.problems:
        report.failures += [f"fold failed: {problem}" for problem in fold.problems]
        return report
    if fixture:
        report.failures += _fixture_failures(fold.graph)
    return report


def _check_identity_hash(root: Path, report: CheckReport) -> None:
    try:
        manifest = read_manifest(root)
    except (ManifestError, OSError, UnicodeDecodeError) as error:
        report.failures.append(f"AGENT.md unreadable: {error}")
        return
    if not (root / "identity").is_dir():
        return
    if manifest.identity_hash is None:
        report.notes.append("AGENT.md declares no identity_hash (the latest spec requires one)")
        return
    actual = identity_hash(root)
    if manifest.identity_hash != actual:
        report.failures.append(
            f"identity/ hashes to {actual}, AGENT.md declares {manifest.identity_hash}"
        )


def _fixture_failures(graph: Graph) -> list[str]:
    def prop(node_id: str, key: str) -> Any:
        node = graph.node(node_id)
        props = as_object(node.props) if node is not None else None
        return props.get(key) if props is not None else None

    def edge(source: str, rel: str, target: str) -> bool:
        return any(r.to == target for r in graph.outgoing(source, rel))

    failures: list[str] = []
    if graph.node("goal_retry") is None:
        failures.append("fixture: goal_retry missing")
    if not edge("patch_9", "advances", "goal_retry"):
        failures.append("fixture: patch_9 --advances--> goal_retry missing")
    if prop("patch_9", "status") != "Promoted":
        failures.append("fixture: patch_9.status != Promoted")
    if prop("patch_9", "references_commit") != "abc1234":
        failures.append("fixture: patch_9.references_commit != abc1234")
    if not edge("patch_9", "validated_by", "eval_5") or prop("eval_5", "status") != "Passed":
        failures.append("fixture: patch_9 validated_by passed eval_5 missing")
    if (
        not edge("patch_9", "approved_by", "decision_3")
        or prop("decision_3", "status") != "Approved"
    ):
        failures.append("fixture: patch_9 approved_by approved decision_3 missing")
    return failures


# --- check 7 ----------------------------------------------------------------------------


def check_pairing(events: list[tuple[int, Event]]) -> CheckReport:
    """Each entity-creating event is created by exactly one ``CreateNode`` among the ops
    events it caused, of the implied kind and an agreeing status; ops never chain to ops."""
    report = CheckReport(7)
    by_id = {event.id: event for _, event in events}
    claimants: dict[str, list[tuple[Event, list[Op] | str]]] = {}
    for _, event, ops in _ops_events(events):
        if event.causation_id is not None:
            claimants.setdefault(event.causation_id, []).append((event, ops))
    for n, event in events:
        expected = ENTITY_CREATING.get(event.kind)
        if expected is None:
            continue
        payload = as_object(event.payload) or {}
        entity = payload.get("id")
        if not isinstance(entity, str):
            report.failures.append(f"line {n}: {event.kind} payload has no `id`")
            continue
        claims = claimants.get(event.id, [])
        if not claims:
            report.failures.append(
                f"line {n}: {event.kind} `{entity}` has no paired state.ops_applied"
            )
            continue
        creators = 0
        for ops_event, ops in claims:
            if isinstance(ops, str):
                report.failures.append(
                    f"line {n}: paired ops event {ops_event.id} has malformed payload: {ops}"
                )
                continue
            for op in ops:
                if not isinstance(op, CreateNode) or op.id != entity:
                    continue
                creators += 1
                if op.kind != expected:
                    report.failures.append(
                        f"line {n}: `{entity}` created as kind `{op.kind}`, domain event implies "
                        f"`{expected}`"
                    )
                report.failures += _status_conflict(n, entity, payload, op.props)
        if creators == 0:
            report.failures.append(
                f"line {n}: paired ops for {event.kind} do not create node `{entity}`"
            )
        elif creators > 1:
            report.failures.append(
                f"line {n}: `{entity}` created by {creators} ops events "
                "(pairing must be exactly one)"
            )
    for _, event in events:
        cause = by_id.get(event.causation_id) if event.causation_id is not None else None
        if (
            event.kind == STATE_OPS_APPLIED
            and cause is not None
            and cause.kind == STATE_OPS_APPLIED
        ):
            report.failures.append(
                f"ops event {event.id} chained to another ops event, not a domain event"
            )
    return report


def _status_conflict(n: int, entity: str, payload: dict[str, Any], props: Any) -> list[str]:
    node = as_object(props)
    if "status" not in payload or node is None or "status" not in node:
        return []
    node_status = node["status"]
    if json_equal(payload["status"], node_status):
        return []
    return [
        f"line {n}: `{entity}` status contradicts domain event "
        f"({payload['status']!r} vs {node_status!r})"
    ]


# --- all seven --------------------------------------------------------------------------


def run_all(root: str | Path, *, fixture: bool = False) -> list[CheckReport]:
    """The seven checks in order. A missing or unreadable log fails every check that needs
    it (check 4, which needs only git, still runs)."""
    base = Path(root)
    log = base / LOG_PATH
    try:
        raw = log.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else f"not UTF-8: {error.reason}"
        first = CheckReport(1, [f"{LOG_PATH}: cannot read: {reason}"])
        return _with_unavailable(first, base, "log unavailable (see check 1)")
    lines = _event_lines(text)
    envelope = check_envelope(lines)
    events = _parse_events(lines)
    if events is None:
        return _with_unavailable(envelope, base, "log does not fully parse; see check 1")
    return [
        envelope,
        check_replay(base, events, raw),
        check_vocabulary(base, events),
        check_append_only(base),
        check_causation(events),
        check_restore(base, events, fixture),
        check_pairing(events),
    ]


def _with_unavailable(first: CheckReport, root: Path, reason: str) -> list[CheckReport]:
    reports = [first]
    for number in range(2, 8):
        reports.append(check_append_only(root) if number == 4 else CheckReport(number, [reason]))
    return reports
