"""GASP's shared vocabulary: baseline node and relation kinds, the entity-creating events
the pairing rule covers, and the packs (``.agent/packs/*.json``) that extend it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import GaspError
from ._json import as_array, as_object, loads_strict

NODE_KINDS = frozenset(
    {
        "goal",
        "task",
        "run",
        "observation",
        "failure",
        "hypothesis",
        "patch",
        "eval",
        "decision",
        "model_call",
        "tool_call",
        "frame",
        "project_snapshot",
        "policy",
        "behavior",
    }
)
RELATION_KINDS = frozenset(
    {
        "serves",
        "blocks",
        "advances",
        "observes",
        "explains",
        "addresses",
        "modifies",
        "validated_by",
        "approved_by",
        "rejected_by",
        "produced_by",
        "derived_from",
        "depends_on",
        "supersedes",
        "contained_in_frame",
        "forked_from",
        "references",
    }
)
ENTITY_CREATING: dict[str, str] = {
    "goal.created": "goal",
    "task.created": "task",
    "observation.created": "observation",
    "failure.observed": "failure",
    "hypothesis.created": "hypothesis",
    "patch.proposed": "patch",
    "eval.finished": "eval",
    "decision.created": "decision",
    "frame.created": "frame",
}
"""Each entity-creating domain event and the node kind its paired ops must create."""

PACKS_DIR = ".agent/packs"


@dataclass(slots=True)
class Vocabulary:
    """The kinds a repository may use: the baseline plus its packs' declarations."""

    node_kinds: set[str] = field(default_factory=lambda: set(NODE_KINDS))
    relation_kinds: set[str] = field(default_factory=lambda: set(RELATION_KINDS))
    problems: list[str] = field(default_factory=list[str])
    """Packs that could not be read or do not parse (a defect of the repository)."""


class PackError(GaspError, ValueError):
    """A pack file that does not parse as a yoagent-state ``Pack``."""


def _require(body: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if key not in body:
        raise PackError(f"missing field `{key}`")
    value = body[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise PackError(f"`{key}` must be {what}")
    return value


def _strings(value: object, where: str) -> None:
    items = as_array(value)
    if items is None or not all(isinstance(v, str) for v in items):
        raise PackError(f"`{where}` must be an array of strings")


def _type_entries(
    body: dict[str, Any], key: str, name_key: str, lists: tuple[str, ...]
) -> list[str]:
    entries: dict[str, Any] = _require(body, key, dict, "an object")
    for name, entry in entries.items():
        where = f"{key}.{name}"
        fields = as_object(entry)
        if fields is None:
            raise PackError(f"`{where}` must be an object")
        _require(fields, name_key, str, "a string")
        for list_key in lists:
            if list_key not in fields:
                raise PackError(f"`{where}`: missing field `{list_key}`")
            _strings(fields[list_key], f"{where}.{list_key}")
        description = fields.get("description")
        if description is not None and not isinstance(description, str):
            raise PackError(f"`{where}.description` must be a string or null")
    return list(entries)


def parse_pack(text: str) -> tuple[list[str], list[str]]:
    """The node kinds and relation kinds a pack declares (the keys of ``object_types`` and
    ``relation_types``), after checking it has every field of the reference ``Pack``."""
    try:
        value = loads_strict(text)
    except ValueError as error:
        raise PackError(f"not JSON: {error}") from None
    body = as_object(value)
    if body is None:
        raise PackError("a pack must be a JSON object")
    for key in ("id", "name", "version"):
        _require(body, key, str, "a string")
    for key in ("policies", "prompts"):
        _strings(_require(body, key, list, "an array"), key)
    if "settings" not in body:
        raise PackError("missing field `settings`")
    kinds = _type_entries(body, "object_types", "kind", ("required_props",))
    rels = _type_entries(body, "relation_types", "rel", ("from_kinds", "to_kinds"))
    return kinds, rels


def load_vocabulary(root: str | Path) -> Vocabulary:
    """The baseline extended by every ``.agent/packs/*.json`` of the repository at ``root``."""
    vocabulary = Vocabulary()
    directory = Path(root) / PACKS_DIR
    if not directory.exists():
        return vocabulary
    try:
        entries = sorted(directory.iterdir())
    except OSError as error:
        vocabulary.problems.append(f"cannot read {PACKS_DIR}/: {error.strerror}")
        return vocabulary
    for path in entries:
        if path.suffix != ".json":
            continue
        try:
            kinds, rels = parse_pack(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            vocabulary.problems.append(f"pack {path.name} unreadable: {error}")
            continue
        except PackError as error:
            vocabulary.problems.append(f"pack {path.name} does not parse as a Pack: {error}")
            continue
        vocabulary.node_kinds.update(kinds)
        vocabulary.relation_kinds.update(rels)
    return vocabulary
