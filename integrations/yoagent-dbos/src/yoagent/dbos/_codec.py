"""What a checkpoint holds: replies, tool outcomes and histories as plain JSON data.

A step's value is always what its checkpoint holds: the fresh path decodes the same JSON
a replay reads back, so an uninterrupted run and a recovered one see identical values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    AgentEvent,
    AgentMessage,
    AssistantMessage,
    SessionStats,
    ToolResult,
    event_adapter,
    message_adapter,
    messages_adapter,
)
from yoagent.core.support import LazyTypeAdapter

from ._errors import CheckpointError

_tool_result_adapter: LazyTypeAdapter[ToolResult] = LazyTypeAdapter(ToolResult)


def dump_messages(messages: Sequence[AgentMessage]) -> list[Any]:
    """``messages`` as JSON data."""
    return cast("list[Any]", messages_adapter.dump_python(list(messages), mode="json"))


def load_messages(data: Any) -> list[AgentMessage]:
    """Messages written by :func:`dump_messages`."""
    return messages_adapter.validate_python(data)


def dump_reply(reply: AssistantMessage) -> Any:
    """One model reply as JSON data (:class:`CheckpointError` when it cannot be)."""
    try:
        return message_adapter.dump_python(reply, mode="json")
    except Exception as error:  # pydantic's PydanticSerializationError, or a type it rejects
        raise CheckpointError(f"the model's reply cannot be checkpointed: {error}") from None


def load_reply(data: Any) -> AssistantMessage:
    """A reply written by :func:`dump_reply`."""
    message = message_adapter.validate_python(data)
    assert isinstance(message, AssistantMessage)
    return message


def dump_tool_result(tool_name: str, call_id: str, result: object) -> Any:
    """A tool's result as JSON data; :class:`CheckpointError` naming the tool, the call and
    what was wrong when it is not a ``ToolResult`` of JSON-ready parts."""
    if not isinstance(result, ToolResult):
        raise CheckpointError(
            f"tool {tool_name!r} (call {call_id}) returned {type(result).__name__}, "
            "not a ToolResult: its result cannot be checkpointed"
        )
    try:
        return _tool_result_adapter.dump_python(result, mode="json")
    except Exception as error:  # pydantic's PydanticSerializationError
        raise CheckpointError(
            f"the result of tool {tool_name!r} (call {call_id}) cannot be checkpointed: "
            f"{_first_line(error)}. Return JSON-ready content and details (str, numbers, "
            "lists, dicts, dataclasses of those)"
        ) from None


def load_tool_result(data: Any) -> ToolResult:
    """A result written by :func:`dump_tool_result`."""
    return _tool_result_adapter.validate_python(data)


def dump_details(details: object) -> Any:
    """A ``ToolError``'s details as JSON data, or their ``repr`` when they are not JSON-ready
    (the text the model reads is kept either way)."""
    try:
        return _any_adapter.dump_python(details, mode="json")
    except Exception:
        return repr(details)


_any_adapter: LazyTypeAdapter[Any] = LazyTypeAdapter(Any)


_stats_adapter: LazyTypeAdapter[SessionStats] = LazyTypeAdapter(SessionStats)


def dump_stats(stats: SessionStats) -> Any:
    """What a run spent, as JSON data."""
    return _stats_adapter.dump_python(stats, mode="json")


def load_stats(data: Any) -> SessionStats:
    """Spend written by :func:`dump_stats`."""
    return _stats_adapter.validate_python(data)


def dump_event(event: AgentEvent) -> Any:
    """An event as JSON data."""
    return event_adapter.dump_python(event, mode="json")


def load_event(data: Any) -> AgentEvent:
    """An event written by :func:`dump_event`."""
    return event_adapter.validate_python(data)


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
