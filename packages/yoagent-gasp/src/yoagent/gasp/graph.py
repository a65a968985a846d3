"""The typed graph a GASP log folds into: nodes, relations, and the count of ops applied.

Ops apply as in the reference runtime (yoagent-state 0.5): ``UpdateNode`` deep-merges,
``CreateNode`` replaces, relation ops never fail, and an op on a missing node is skipped
(reported, not counted in ``version``) instead of aborting the fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._json import as_array, as_object, clone, json_equal
from .ops import (
    ArtifactRef,
    AttachArtifact,
    CreateNode,
    CreateRelation,
    DeleteRelation,
    MarkStale,
    Op,
    OpsError,
    TombstoneNode,
    UpdateNode,
    parse_op,
)


@dataclass(slots=True, kw_only=True)
class Node:
    """One node of the graph (a goal, a run, a tool call, ...)."""

    id: str
    kind: str
    props: Any = field(default_factory=dict[str, Any])
    stale: bool = False
    tombstoned: bool = False
    artifacts: list[ArtifactRef] = field(default_factory=list[ArtifactRef])

    def to_json(self) -> dict[str, Any]:
        """The node as a snapshot writes it (a copy: changing it leaves the node alone)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "props": clone(self.props),
            "stale": self.stale,
            "tombstoned": self.tombstoned,
            "artifacts": [artifact.to_json() for artifact in self.artifacts],
        }


@dataclass(slots=True, kw_only=True)
class Relation:
    """An edge ``from_ --rel--> to``."""

    from_: str
    rel: str
    to: str
    props: Any = field(default_factory=dict[str, Any])

    def to_json(self) -> dict[str, Any]:
        """The relation as a snapshot writes it (a copy)."""
        return {"from": self.from_, "rel": self.rel, "to": self.to, "props": clone(self.props)}


@dataclass(frozen=True, slots=True)
class Skipped:
    """An op that named a node the graph does not hold, so it changed nothing."""

    index: int
    """Its position in its ops batch."""
    op: str
    node: str
    reason: str


def _merge(target: Any, patch: Any) -> Any:
    """The reference runtime's deep merge: objects merge key by key, anything else replaces."""
    into, update = as_object(target), as_object(patch)
    if into is not None and update is not None:
        for key, value in update.items():
            into[key] = _merge(into[key], value) if key in into else clone(value)
        return into
    return clone(patch)


@dataclass(slots=True)
class Graph:
    """The folded state: nodes by id, relations in the order they were made, ops applied."""

    nodes: dict[str, Node] = field(default_factory=dict[str, Node])
    relations: list[Relation] = field(default_factory=list[Relation])
    version: int = 0

    def node(self, node_id: str) -> Node | None:
        """The node with this id, if any."""
        return self.nodes.get(node_id)

    def outgoing(self, node_id: str, rel: str | None = None) -> list[Relation]:
        """Edges leaving ``node_id`` (of kind ``rel`` when given)."""
        return [r for r in self.relations if r.from_ == node_id and rel in (None, r.rel)]

    def incoming(self, node_id: str, rel: str | None = None) -> list[Relation]:
        """Edges arriving at ``node_id`` (of kind ``rel`` when given)."""
        return [r for r in self.relations if r.to == node_id and rel in (None, r.rel)]

    def of_kind(self, kind: str) -> list[Node]:
        """Every node of one kind, in insertion order."""
        return [node for node in self.nodes.values() if node.kind == kind]

    def apply(self, ops: list[Op]) -> list[Skipped]:
        """Apply a batch of ops; returns the ones skipped for naming a missing node."""
        skipped: list[Skipped] = []
        for index, op in enumerate(ops):
            missing = self._apply(op)
            if missing is None:
                self.version += 1
            else:
                name = type(op).__name__
                skipped.append(Skipped(index, name, missing, f"node not found: {missing}"))
        return skipped

    def _apply(self, op: Op) -> str | None:
        """Apply one op; returns the missing node's id when it could not."""
        match op:
            case CreateNode(id=node_id, kind=kind, props=props):
                self.nodes[node_id] = Node(id=node_id, kind=kind, props=clone(props))
            case CreateRelation(from_=source, rel=rel, to=target, props=props):
                self.relations.append(
                    Relation(from_=source, rel=rel, to=target, props=clone(props))
                )
            case DeleteRelation(from_=source, rel=rel, to=target):
                self.relations = [
                    r for r in self.relations if (r.from_, r.rel, r.to) != (source, rel, target)
                ]
            case UpdateNode(id=node_id, props=props):
                node = self.nodes.get(node_id)
                if node is None:
                    return node_id
                node.props = _merge(node.props, props)
            case TombstoneNode(id=node_id, reason=reason):
                node = self.nodes.get(node_id)
                if node is None:
                    return node_id
                node.tombstoned = True
                node.props = _merge(node.props, {"tombstone_reason": reason})
            case MarkStale(id=node_id, reason=reason):
                node = self.nodes.get(node_id)
                if node is None:
                    return node_id
                node.stale = True
                node.props = _merge(node.props, {"stale_reason": reason})
            case AttachArtifact(id=node_id, artifact=artifact):
                node = self.nodes.get(node_id)
                if node is None:
                    return node_id
                node.artifacts.append(
                    ArtifactRef(
                        kind=artifact.kind,
                        uri=artifact.uri,
                        hash=artifact.hash,
                        summary=artifact.summary,
                        metadata=clone(artifact.metadata),
                    )
                )
        return None

    def to_json(self) -> dict[str, Any]:
        """The graph as a snapshot's ``graph`` object."""
        return {
            "nodes": {node_id: node.to_json() for node_id, node in self.nodes.items()},
            "relations": [relation.to_json() for relation in self.relations],
            "version": self.version,
        }

    def same_as(self, other: Graph) -> bool:
        """Equal as the reference compares graphs: node order is free, relation order is not,
        and JSON values compare strictly (``1`` is not ``1.0``)."""
        return json_equal(self.to_json(), other.to_json())

    @classmethod
    def from_json(cls, value: object) -> Graph:
        """Read a snapshot's ``graph`` object; :class:`OpsError` names what is wrong."""
        body = as_object(value)
        if body is None:
            raise OpsError("the graph must be an object")
        nodes, relations = as_object(body.get("nodes")), as_array(body.get("relations"))
        if nodes is None or relations is None:
            raise OpsError("the graph needs a `nodes` object and a `relations` array")
        version = body.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise OpsError("the graph's `version` must be a non-negative integer")
        graph = cls(version=version)
        for key, entry in nodes.items():
            graph.nodes[key] = _node_from_json(entry, key)
        for index, entry in enumerate(relations):
            created = parse_op({"CreateRelation": entry}, index)
            assert isinstance(created, CreateRelation)
            graph.relations.append(
                Relation(from_=created.from_, rel=created.rel, to=created.to, props=created.props)
            )
        return graph


def _node_from_json(value: object, key: str) -> Node:
    body = as_object(value)
    if body is None:
        raise OpsError(f"node {key}: must be an object")
    created = parse_op({"CreateNode": body})
    assert isinstance(created, CreateNode)
    stale, tombstoned = body.get("stale"), body.get("tombstoned")
    if not isinstance(stale, bool) or not isinstance(tombstoned, bool):
        raise OpsError(f"node {key}: `stale` and `tombstoned` must be booleans")
    artifacts = as_array(body.get("artifacts"))
    if artifacts is None:
        raise OpsError(f"node {key}: `artifacts` must be an array")
    attached: list[ArtifactRef] = []
    for entry in artifacts:
        op = parse_op({"AttachArtifact": {"id": created.id, "artifact": entry}})
        assert isinstance(op, AttachArtifact)
        attached.append(op.artifact)
    return Node(
        id=created.id,
        kind=created.kind,
        props=created.props,
        stale=stale,
        tombstoned=tombstoned,
        artifacts=attached,
    )
