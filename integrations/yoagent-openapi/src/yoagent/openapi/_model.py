"""Pydantic models of the parts of an OpenAPI 3.0/3.1 document that become tools.

Only what the adapter reads is modelled (servers, path items, operations, parameters,
request bodies); everything else — responses, examples, links, callbacks — is neither
read nor judged, so a fault there never costs the operations. Schemas stay the
document's own JSON (never re-serialized through a model), and anything that may be a
``$ref`` stays raw until :mod:`._refs` has resolved it.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._errors import OpenApiError

HTTP_METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

ParameterLocation = Literal["path", "query", "header", "cookie"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class ServerVariable(_Model):
    default: str
    enum: list[str] | None = None


class Server(_Model):
    url: str
    variables: dict[str, ServerVariable] = Field(default_factory=dict[str, ServerVariable])


class MediaType(_Model):
    schema_: Any = Field(default=None, alias="schema")


class Parameter(_Model):
    name: str = Field(min_length=1)
    location: ParameterLocation = Field(alias="in")
    description: str | None = None
    required: bool = False
    deprecated: bool = False
    schema_: Any = Field(default=None, alias="schema")
    content: dict[str, MediaType] | None = None
    style: str | None = None
    explode: bool | None = None
    allow_reserved: bool = Field(default=False, alias="allowReserved")


class RequestBody(_Model):
    description: str | None = None
    required: bool = False
    content: dict[str, MediaType] = Field(default_factory=dict[str, MediaType])


class Operation(_Model):
    operation_id: str | None = Field(default=None, alias="operationId")
    tags: list[str] = Field(default_factory=list[str])
    summary: str | None = None
    description: str | None = None
    deprecated: bool = False
    parameters: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    request_body: dict[str, Any] | None = Field(default=None, alias="requestBody")
    servers: list[Server] | None = None


class PathItem(_Model):
    parameters: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    servers: list[Server] | None = None


class Document(_Model):
    openapi: str
    servers: list[Server] | None = None
    paths: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Path templates (``/...``) to path items; ``x-`` extensions are skipped."""


M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], data: Any, where: str) -> M:
    """``data`` as ``model``, or an :class:`OpenApiError` naming ``where`` and the fault."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'/'.join(str(p) for p in e['loc']) or '(value)'}: {e['msg']}"
            for e in error.errors()[:3]
        )
        raise OpenApiError(f"{where}: {problems}") from None
