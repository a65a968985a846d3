"""The GASP event envelope: exactly eight keys per log line, typed as the reference runtime
types them (an integer ``ts_ms``, an actor of exactly ``kind`` and ``id``)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from ._errors import GaspError
from ._json import as_object, dumps

SCHEMA_VERSION = 1
ENVELOPE_KEYS = (
    "id",
    "schema_version",
    "ts_ms",
    "actor",
    "kind",
    "payload",
    "causation_id",
    "correlation_id",
)
STATE_OPS_APPLIED = "state.ops_applied"

_U32 = 2**32
_I64 = 2**63


_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def new_id(prefix: str) -> str:
    """A fresh id in the reference runtime's form: ``<prefix>_<uuid4 hex>``.

    The bits of ``uuid.uuid4().hex`` (122 random, version 4, RFC 4122 variant) without
    building a ``UUID``: a recorded 50-turn run makes ~800 ids on the writer thread, and
    ``uuid4`` was a third of its mapping time.
    """
    value = int.from_bytes(os.urandom(16), "big") & _UUID4_CLEAR | _UUID4_SET
    return f"{prefix}_{value:032x}"


def now_ms() -> int:
    """Unix time in whole milliseconds."""
    return time.time_ns() // 1_000_000


class EnvelopeError(GaspError, ValueError):
    """A log line is not a valid event envelope."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who caused an event: ``kind`` is ``agent``, ``user``, ``system`` or ``tool``."""

    kind: str
    id: str

    def to_json(self) -> dict[str, str]:
        """The actor as it appears in the log."""
        return {"kind": self.kind, "id": self.id}


@dataclass(slots=True, kw_only=True)
class Event:
    """One line of ``state/events.jsonl``."""

    id: str
    ts_ms: int
    actor: Actor
    kind: str
    payload: Any
    causation_id: str | None = None
    correlation_id: str | None = None
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def new(
        cls,
        actor: Actor,
        kind: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        correlation_id: str | None = None,
        ts_ms: int | None = None,
    ) -> Event:
        """A new event with a fresh id, stamped now (or at ``ts_ms``)."""
        return cls(
            id=new_id("event"),
            ts_ms=now_ms() if ts_ms is None else ts_ms,
            actor=actor,
            kind=kind,
            payload=payload,
            causation_id=causation_id,
            correlation_id=correlation_id,
        )

    def to_json(self) -> dict[str, Any]:
        """The envelope as a JSON object, keys in the reference runtime's order."""
        return {
            "id": self.id,
            "schema_version": self.schema_version,
            "ts_ms": self.ts_ms,
            "actor": self.actor.to_json(),
            "kind": self.kind,
            "payload": self.payload,
            "causation_id": self.causation_id,
            "correlation_id": self.correlation_id,
        }

    def to_line(self) -> str:
        """The envelope as one log line, newline included."""
        return dumps(self.to_json()) + "\n"


def _string(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise EnvelopeError(f"`{field}` must be a string, not {_kind_of(value)}")
    return value


def _optional_string(value: object, field: str) -> str | None:
    return None if value is None else _string(value, field)


def _integer(value: object, field: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise EnvelopeError(f"`{field}` must be an integer, not {_kind_of(value)}")
    if not low <= value < high:
        raise EnvelopeError(f"`{field}` {value} is out of range")
    return value


_KIND_NAMES: dict[type, str] = {
    bool: "a boolean",
    int: "an integer",
    float: "a float",
    str: "a string",
    list: "an array",
    dict: "an object",
}


def _kind_of(value: object) -> str:
    if value is None:
        return "null"
    return _KIND_NAMES.get(type(value), type(value).__name__)


def event_from_json(value: object) -> Event:
    """Read an envelope the way the reference runtime deserializes one: every field present
    and typed; unknown keys are ignored here (check 1 reports them)."""
    fields = as_object(value)
    if fields is None:
        raise EnvelopeError(f"an event must be a JSON object, not {_kind_of(value)}")
    for key in ENVELOPE_KEYS:
        if key not in fields:
            raise EnvelopeError(f"missing field `{key}`")
    actor_fields = as_object(fields["actor"])
    if actor_fields is None:
        raise EnvelopeError(f"`actor` must be an object, not {_kind_of(fields['actor'])}")
    for key in ("kind", "id"):
        if key not in actor_fields:
            raise EnvelopeError(f"missing field `actor.{key}`")
    return Event(
        id=_string(fields["id"], "id"),
        schema_version=_integer(fields["schema_version"], "schema_version", 0, _U32),
        ts_ms=_integer(fields["ts_ms"], "ts_ms", -_I64, _I64),
        actor=Actor(
            kind=_string(actor_fields["kind"], "actor.kind"),
            id=_string(actor_fields["id"], "actor.id"),
        ),
        kind=_string(fields["kind"], "kind"),
        payload=fields["payload"],
        causation_id=_optional_string(fields["causation_id"], "causation_id"),
        correlation_id=_optional_string(fields["correlation_id"], "correlation_id"),
    )
