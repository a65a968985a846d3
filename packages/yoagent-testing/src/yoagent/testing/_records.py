"""The records of a cassette: one model call, one tool execution."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from yoagent.core import AgentMessage, AssistantMessage, ProviderError

from ._codec import (
    CassetteError,
    Delta,
    JsonObject,
    delta_from_json,
    error_from_json,
    message_from_json,
    reply_from_json,
)
from ._line_types import ToolFields, check_fields


@dataclass(slots=True, kw_only=True)
class RecordedCall:
    """One model call: the request as yoagent built it, the deltas it streamed, its end.

    ``request`` is the JSON form (see :func:`~yoagent.testing.request_json`); exactly one
    of ``reply`` (the final message's JSON form), ``error`` and ``cancelled`` says how it
    ended. ``times`` (seconds since the call began, one per delta) and ``elapsed`` are
    ``None`` unless timing was recorded.
    """

    n: int
    request: JsonObject
    deltas: list[JsonObject] = field(default_factory=list[JsonObject])
    times: list[float] | None = None
    elapsed: float | None = None
    reply: JsonObject | None = None
    error: JsonObject | None = None
    cancelled: bool = False

    def delta_objects(self) -> list[Delta]:
        """The streamed deltas, as fresh objects."""
        return [delta_from_json(delta) for delta in self.deltas]

    def reply_message(self) -> AssistantMessage | None:
        """The final message, as a fresh object (``None`` for a failed or cancelled call)."""
        return None if self.reply is None else reply_from_json(self.reply)

    def provider_error(self) -> ProviderError | None:
        """The error the call raised, as a fresh object (``None`` unless it failed)."""
        return None if self.error is None else error_from_json(self.error)

    def messages(self) -> list[AgentMessage]:
        """The request's messages, as fresh objects."""
        return [message_from_json(message) for message in self.request["messages"]]

    @property
    def succeeded(self) -> bool:
        """True when the call returned a final message (it is a turn of its run)."""
        return self.reply is not None

    def to_json(self) -> JsonObject:
        """The record as a line holds it, its request written out in full."""
        record: JsonObject = {"kind": "call", "n": self.n, "request": self.request}
        record["deltas"] = self.deltas
        if self.times is not None:
            record["times"] = self.times
        if self.elapsed is not None:
            record["elapsed"] = self.elapsed
        if self.reply is not None:
            record["reply"] = self.reply
        elif self.error is not None:
            record["error"] = self.error
        else:
            record["cancelled"] = True
        return record


@dataclass(slots=True, kw_only=True)
class RecordedTool:
    """One tool execution: the call, the result the tool gave, and its progress reports.

    ``content``/``details`` are the tool's output in JSON form; ``is_error`` means the tool
    failed (raised) with ``content`` as its message. ``updates`` are its partial outputs
    (``{"kind": "update", "content", "details"}``) and progress notes (``{"kind":
    "progress", "text"}``), in order.
    """

    tool_call_id: str
    tool_name: str
    arguments: JsonObject
    content: list[JsonObject]
    details: Any = None
    is_error: bool = False
    updates: list[JsonObject] = field(default_factory=list[JsonObject])

    def to_json(self) -> JsonObject:
        """The record as a line holds it."""
        return {
            "kind": "tool",
            "tool_call_id": self.tool_call_id,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "content": self.content,
            "details": self.details,
            "is_error": self.is_error,
            "updates": self.updates,
        }


def tool_from_json(fields: JsonObject) -> RecordedTool:
    """The tool record a ``{"kind": "tool", ...}`` line describes (:class:`CassetteError`
    naming the wrong field when it is malformed)."""
    call_id, name = fields.get("tool_call_id"), fields.get("tool_name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise CassetteError("a tool record needs a tool_call_id and a tool_name (text)")
    checked = check_fields(ToolFields, fields, f"tool record {call_id!r}")
    return RecordedTool(
        tool_call_id=checked.tool_call_id,
        tool_name=checked.tool_name,
        arguments=checked.arguments,
        content=fields.get("content", []),  # as written (checked: text and image blocks)
        details=checked.details,
        is_error=checked.is_error,
        updates=fields.get("updates", []),  # as written (checked: update and progress)
    )
