"""One operation of the document, ready to call: its tool name, schema and wire bindings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._model import ParameterLocation


@dataclass(frozen=True, slots=True)
class ParameterBinding:
    """Where one tool argument goes on the wire."""

    argument: str
    """The property name in the tool's schema."""
    name: str
    """The parameter's name in the document (on the wire)."""
    location: ParameterLocation
    style: str | None
    explode: bool | None
    media_type: str | None
    """Set when the document describes the parameter by ``content`` (sent as that type)."""


@dataclass(frozen=True, slots=True)
class BodyBinding:
    """The tool argument that carries the JSON request body."""

    argument: str
    media_type: str


@dataclass(frozen=True, slots=True)
class Operation:
    """An operation turned into a tool: what the model sees and how a call is sent."""

    tool_name: str
    method: str
    path: str
    operation_id: str | None
    tags: tuple[str, ...]
    description: str
    schema: dict[str, Any]
    base_url: str
    parameters: tuple[ParameterBinding, ...]
    body: BodyBinding | None


@dataclass(frozen=True, slots=True)
class SkippedOperation:
    """An operation the filter accepted but that could not become a tool, and why."""

    method: str
    path: str
    operation_id: str | None
    reason: str

    def __str__(self) -> str:
        named = f" ({self.operation_id})" if self.operation_id else ""
        return f"{self.method.upper()} {self.path}{named}: {self.reason}"
