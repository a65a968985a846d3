"""The JSON forms of what a cassette holds: requests, deltas, replies and errors."""

from __future__ import annotations

import math
from functools import cache
from typing import Annotated, Any, cast

from pydantic import Field, TypeAdapter
from pydantic_core import to_jsonable_python

from yoagent.core import (
    AgentMessage,
    AssistantMessage,
    ErrorKind,
    ImageContent,
    ProviderError,
    TextContent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    message_adapter,
)
from yoagent.core.provider import StreamConfig

from ._errors import TestingError
from ._secrets import endpoint_json

JsonObject = dict[str, Any]
Delta = TextDelta | ThinkingDelta | ToolCallDelta
Block = TextContent | ImageContent


class CassetteError(TestingError):
    """A cassette cannot be read, or does not hold what was asked of it."""


@cache
def _delta_adapter() -> TypeAdapter[Delta]:
    return TypeAdapter(Annotated[Delta, Field(discriminator="type")])


@cache
def _blocks_adapter() -> TypeAdapter[list[Block]]:
    return TypeAdapter(list[Annotated[Block, Field(discriminator="type")]])


def json_value(value: Any) -> Any:
    """``value`` as plain JSON data (what it cannot express becomes its ``repr``)."""
    return to_jsonable_python(value, fallback=repr)


def message_json(message: AgentMessage) -> JsonObject:
    """One message in its JSON form (the same as a session file holds)."""
    return cast(JsonObject, message_adapter.dump_python(message, mode="json"))


def message_from_json(data: Any) -> AgentMessage:
    """The message a :func:`message_json` form describes."""
    return message_adapter.validate_python(data)


def request_json(config: StreamConfig) -> JsonObject:
    """The request as yoagent built it, protocol-neutral: model, endpoint (credentials
    redacted; the key is never included), system prompt, messages, tools and settings."""
    model = config.model
    schema = config.output_schema
    return {
        "model": {
            "api": model.api.value,
            "provider": model.provider,
            "id": model.id,
            "max_tokens": model.max_tokens,
            "reasoning": model.reasoning,
        },
        "endpoint": endpoint_json(model),
        "system_prompt": config.system_prompt,
        "messages": [message_json(message) for message in config.messages],
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": json_value(tool.parameters),
            }
            for tool in config.tools
        ],
        "thinking_level": config.thinking_level.value,
        "max_tokens": config.max_tokens,
        "temperature": config.temperature,
        "output_schema": None
        if schema is None
        else {
            "name": schema.name,
            "schema": json_value(schema.schema),
            "description": schema.description,
            "strict": schema.strict,
        },
        "cache": {"enabled": config.cache.enabled, "session_key": config.cache.session_key},
        "turn_notes": list(config.turn_notes),
    }


def delta_json(delta: Delta) -> JsonObject:
    """One streamed delta in its JSON form."""
    return cast(JsonObject, _delta_adapter().dump_python(delta, mode="json"))


def delta_from_json(data: Any) -> Delta:
    """The delta a :func:`delta_json` form describes."""
    return _delta_adapter().validate_python(data)


def blocks_json(blocks: list[Block]) -> list[JsonObject]:
    """Tool output (text and image blocks) in its JSON form."""
    return cast(list[JsonObject], _blocks_adapter().dump_python(blocks, mode="json"))


def blocks_from_json(data: Any) -> list[Block]:
    """The blocks a :func:`blocks_json` form describes."""
    return _blocks_adapter().validate_python(data)


def reply_from_json(data: Any) -> AssistantMessage:
    """A recorded final message (a fresh object on every call)."""
    message = message_from_json(data)
    if not isinstance(message, AssistantMessage):
        raise CassetteError(f"a recorded reply is a {message.role} message, not an assistant one")
    return message


def error_json(error: ProviderError) -> JsonObject:
    """A provider failure as a cassette holds it: enough to raise the same error again."""
    retry_after = error.retry_after
    if retry_after is not None and not math.isfinite(retry_after):
        retry_after = None if math.isnan(retry_after) else "inf"
    return {
        "kind": error.kind.value,
        "message": error.message,
        "status": error.status,
        "retry_after": retry_after,
        "type": type(error).__name__,
    }


def error_from_json(data: JsonObject) -> ProviderError:
    """The :class:`ProviderError` an :func:`error_json` form describes (same kind, message,
    status and retry-after; the class is ``ProviderError`` whatever subclass raised it)."""
    retry_after = data.get("retry_after")
    return ProviderError(
        ErrorKind(data["kind"]),
        str(data["message"]),
        status=data.get("status"),
        retry_after=math.inf if retry_after == "inf" else retry_after,
    )
