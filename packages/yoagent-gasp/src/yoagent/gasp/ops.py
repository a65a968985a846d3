"""State ops: the graph mutations a ``state.ops_applied`` event carries, serialized
externally tagged (``{"CreateNode": {...}}``) with every field present."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._errors import GaspError
from ._json import as_array, as_object, clone


class OpsError(GaspError, ValueError):
    """A ``state.ops_applied`` payload that does not parse as ops."""


@dataclass(slots=True, kw_only=True)
class ArtifactRef:
    """Something outside the log a node points at (a commit, a file, a URL)."""

    kind: str
    uri: str
    hash: str | None = None
    summary: str | None = None
    metadata: Any = field(default_factory=dict[str, Any])

    def to_json(self) -> dict[str, Any]:
        """The artifact as the log and the graph write it."""
        return {
            "kind": self.kind,
            "uri": self.uri,
            "hash": self.hash,
            "summary": self.summary,
            "metadata": clone(self.metadata),
        }


@dataclass(slots=True)
class CreateNode:
    """Insert a node (replacing one with the same id)."""

    id: str
    kind: str
    props: Any = field(default_factory=dict[str, Any])


@dataclass(slots=True)
class UpdateNode:
    """Deep-merge ``props`` into an existing node's props."""

    id: str
    props: Any


@dataclass(slots=True)
class TombstoneNode:
    """Mark a node tombstoned (it stays in the graph), recording why."""

    id: str
    reason: str


@dataclass(slots=True)
class CreateRelation:
    """Add an edge ``from_ --rel--> to``."""

    from_: str
    rel: str
    to: str
    props: Any = field(default_factory=dict[str, Any])


@dataclass(slots=True)
class DeleteRelation:
    """Remove every edge ``from_ --rel--> to``."""

    from_: str
    rel: str
    to: str


@dataclass(slots=True)
class MarkStale:
    """Mark a node stale, recording why."""

    id: str
    reason: str


@dataclass(slots=True)
class AttachArtifact:
    """Attach an artifact to an existing node."""

    id: str
    artifact: ArtifactRef


Op = (
    CreateNode
    | UpdateNode
    | TombstoneNode
    | CreateRelation
    | DeleteRelation
    | MarkStale
    | AttachArtifact
)
"""Any state op."""
OP_NAMES = (
    "CreateNode",
    "UpdateNode",
    "TombstoneNode",
    "CreateRelation",
    "DeleteRelation",
    "MarkStale",
    "AttachArtifact",
)


def op_to_json(op: Op) -> dict[str, Any]:
    """One op, externally tagged."""
    match op:
        case CreateNode(id=node, kind=kind, props=props):
            return {"CreateNode": {"id": node, "kind": kind, "props": props}}
        case UpdateNode(id=node, props=props):
            return {"UpdateNode": {"id": node, "props": props}}
        case TombstoneNode(id=node, reason=reason):
            return {"TombstoneNode": {"id": node, "reason": reason}}
        case CreateRelation(from_=source, rel=rel, to=target, props=props):
            return {"CreateRelation": {"from": source, "rel": rel, "to": target, "props": props}}
        case DeleteRelation(from_=source, rel=rel, to=target):
            return {"DeleteRelation": {"from": source, "rel": rel, "to": target}}
        case MarkStale(id=node, reason=reason):
            return {"MarkStale": {"id": node, "reason": reason}}
        case AttachArtifact(id=node, artifact=artifact):
            return {"AttachArtifact": {"id": node, "artifact": artifact.to_json()}}


def ops_to_json(ops: list[Op]) -> list[dict[str, Any]]:
    """A ``state.ops_applied`` payload."""
    return [op_to_json(op) for op in ops]


def _text(body: dict[str, Any], key: str, where: str) -> str:
    if key not in body:
        raise OpsError(f"{where}: missing field `{key}`")
    value = body[key]
    if not isinstance(value, str):
        raise OpsError(f"{where}: `{key}` must be a string")
    return value


def _json(body: dict[str, Any], key: str, where: str) -> Any:
    if key not in body:
        raise OpsError(f"{where}: missing field `{key}`")
    return body[key]


def _optional_text(body: dict[str, Any], key: str, where: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise OpsError(f"{where}: `{key}` must be a string or null")
    return value


def _artifact(value: object, where: str) -> ArtifactRef:
    body = as_object(value)
    if body is None:
        raise OpsError(f"{where}: `artifact` must be an object")
    return ArtifactRef(
        kind=_text(body, "kind", where),
        uri=_text(body, "uri", where),
        hash=_optional_text(body, "hash", where),
        summary=_optional_text(body, "summary", where),
        metadata=_json(body, "metadata", where),
    )


def parse_op(value: object, index: int = 0) -> Op:
    """One externally tagged op (unknown fields inside it are ignored, as serde does)."""
    where = f"op {index}"
    tagged = as_object(value)
    if tagged is None or len(tagged) != 1:
        raise OpsError(f"{where}: an op is an object with exactly one key (its variant)")
    ((name, body),) = tagged.items()
    if name not in OP_NAMES:
        raise OpsError(f"{where}: unknown op `{name}`")
    fields = as_object(body)
    if fields is None:
        raise OpsError(f"{where}: `{name}` must hold an object")
    where = f"{where} ({name})"
    if name == "CreateNode":
        return CreateNode(
            _text(fields, "id", where), _text(fields, "kind", where), _json(fields, "props", where)
        )
    if name == "UpdateNode":
        return UpdateNode(_text(fields, "id", where), _json(fields, "props", where))
    if name == "TombstoneNode":
        return TombstoneNode(_text(fields, "id", where), _text(fields, "reason", where))
    if name == "MarkStale":
        return MarkStale(_text(fields, "id", where), _text(fields, "reason", where))
    if name == "AttachArtifact":
        if "artifact" not in fields:
            raise OpsError(f"{where}: missing field `artifact`")
        return AttachArtifact(_text(fields, "id", where), _artifact(fields["artifact"], where))
    source, rel, target = (_text(fields, key, where) for key in ("from", "rel", "to"))
    if name == "DeleteRelation":
        return DeleteRelation(source, rel, target)
    return CreateRelation(source, rel, target, _json(fields, "props", where))


def parse_ops(payload: object) -> list[Op]:
    """A ``state.ops_applied`` payload: a JSON array of ops."""
    items = as_array(payload)
    if items is None:
        raise OpsError("a state.ops_applied payload must be an array of ops")
    return [parse_op(item, index) for index, item in enumerate(items)]
