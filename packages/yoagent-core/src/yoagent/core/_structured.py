"""Structured output: a reply that must match a schema, parsed and validated."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ._provider.protocol import OutputSchema
from ._types.adapters import is_validation_error
from ._types.errors import YoagentError
from ._types.messages import AgentMessage, StopReason, last_assistant

if TYPE_CHECKING:  # pydantic is imported where a model is used, not with yoagent.core
    from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound="BaseModel")


class StructuredOutputError(YoagentError):
    """``prompt_structured`` got no valid value."""


class StructuredProviderError(StructuredOutputError):
    """The model call failed, refused, or was filtered; the message says why."""


class StructuredParseError(StructuredOutputError):
    """The reply was not valid JSON for the schema. ``raw`` is the reply's text."""

    def __init__(self, message: str, *, raw: str, source: Exception) -> None:
        super().__init__(message)
        self.raw = raw
        self.source = source


class NoStructuredOutputError(StructuredOutputError):
    """The run ended without a reply holding output."""


def output_schema_for(
    schema: type[BaseModel] | dict[str, Any], name: str | None = None
) -> OutputSchema:
    """The :class:`OutputSchema` for a pydantic model class or a JSON-schema dict."""
    if isinstance(schema, dict):
        title = schema.get("title")
        return OutputSchema(
            name=name or (title if isinstance(title, str) and title else "output"),
            schema=schema,
            description=str(schema.get("description", "")),
        )
    return OutputSchema(
        name=name or schema.__name__,
        schema=schema.model_json_schema(),
        description=(schema.__doc__ or "").strip(),
    )


@overload
def parse_structured(new_messages: Sequence[AgentMessage], schema: type[ModelT]) -> ModelT: ...
@overload
def parse_structured(new_messages: Sequence[AgentMessage], schema: dict[str, Any]) -> Any: ...
def parse_structured(
    new_messages: Sequence[AgentMessage], schema: type[BaseModel] | dict[str, Any]
) -> Any:
    """The value held by the final reply among ``new_messages`` (only this call's messages)."""
    reply = last_assistant(new_messages)
    if reply is None:
        raise NoStructuredOutputError("the run produced no reply")
    if reply.stop_reason is StopReason.ERROR:
        raise StructuredProviderError(reply.error_message or "the model call failed")
    if reply.stop_reason is StopReason.ABORTED:
        raise StructuredProviderError("the run was cancelled")
    if reply.stop_reason is StopReason.REFUSAL:
        raise StructuredProviderError(
            f"the model refused: {reply.text or reply.error_message or ''}".strip()
        )
    raw = reply.text.strip()
    if not raw:
        raise NoStructuredOutputError(
            f"the final reply holds no text (stop reason {reply.stop_reason.value})"
        )
    if isinstance(schema, dict):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as error:
            raise StructuredParseError(
                f"the reply is not valid JSON: {error}", raw=raw, source=error
            ) from error
    try:
        return schema.model_validate_json(raw)
    except ValueError as error:  # pydantic's ValidationError is one
        if not is_validation_error(error):
            raise
        raise StructuredParseError(
            f"the reply does not match {schema.__name__}: {error}", raw=raw, source=error
        ) from error
