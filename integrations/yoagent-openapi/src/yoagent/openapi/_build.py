"""A document's operations as :class:`Operation`\\ s: names, schemas, bindings, base URLs.

Operations are read in document order (paths, then methods in the specification's
order). One that the filter accepts but that cannot be described to the model (a
recursive or unresolvable schema, a path template with an undeclared parameter, a
required body that is not JSON) is left out and reported as a
:class:`SkippedOperation`; a fault in the document as a whole is an
:class:`OpenApiError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError, best_match  # pyright: ignore[reportUnknownVariableType]

from ._config import OpenApiConfig, OperationFilter
from ._errors import OpenApiError
from ._model import (
    HTTP_METHODS,
    Document,
    M,
    Parameter,
    PathItem,
    RequestBody,
    Server,
    validated,
)
from ._model import (
    Operation as OperationModel,
)
from ._names import NameSet, argument_name, operation_tool_name
from ._operation import BodyBinding, Operation, ParameterBinding, SkippedOperation
from ._refs import RefProblem, Refs
from ._schema import SchemaProblem, to_json_schema
from ._servers import base_url

if TYPE_CHECKING:
    from referencing._core import Resolver

MAX_DESCRIPTION: Final = 1024
"""Tool descriptions are cut to this many characters (OpenAI's limit)."""

# The specification: header parameters with these names are ignored.
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
_TEMPLATE: Final = re.compile(r"\{([^{}]+)\}")
_LOCATION_ORDER: Final = {"path": 0, "query": 1, "header": 2, "cookie": 3}
# Each tool schema is checked against a meta-schema (keyword values: "type": "int",
# a bad regex...). Draft 7's: it takes a third of 2020-12's time (0.20 s against 0.63 s
# for the 232 tools of tests/large_spec.py) because it has no $dynamicRef, and the
# keywords 2020-12 added or reshaped (prefixItems, dependentSchemas, unevaluated*,
# items) are already held to their 2020-12 shape by the converter in _schema.py.
_META_SCHEMA: Final = Draft7Validator(
    Draft7Validator.META_SCHEMA, format_checker=Draft7Validator.FORMAT_CHECKER
)


@dataclass(frozen=True, slots=True)
class Built:
    """The tools' operations, the operations left out, and the document's version."""

    operations: list[Operation]
    skipped: list[SkippedOperation]
    openapi: str


class _Skip(Exception):
    """This operation cannot become a tool (the message says why)."""


def build(
    data: dict[str, Any],
    *,
    base_uri: str,
    document_url: str | None,
    config: OpenApiConfig,
    operation_filter: OperationFilter,
) -> Built:
    """Every operation of ``data`` that ``operation_filter`` accepts, as an Operation."""
    if "swagger" in data and "openapi" not in data:
        raise OpenApiError(
            f"this is a Swagger {data['swagger']} document; only OpenAPI 3.0 and 3.1 are "
            "read (convert it first, e.g. with swagger2openapi)"
        )
    version = data.get("openapi")
    if not isinstance(version, str) or not re.fullmatch(r"3\.[01](\.\d+)?(-[\w.]+)?", version):
        raise OpenApiError(
            f"unsupported 'openapi' version {version!r}: OpenAPI 3.0 and 3.1 are read"
        )
    openapi31 = version.startswith("3.1")
    document = validated(Document, data, "the document")
    refs = Refs(data, base_uri=base_uri, json_schema_ids=openapi31)
    builder = _Builder(refs, document, config, openapi31, document_url)
    operations: list[Operation] = []
    skipped: list[SkippedOperation] = []
    seen_ids: set[str] = set()
    for path, method, raw, item in builder.raw_operations():
        name = builder.tool_names.claim(builder.wanted_name(raw, method, path))
        operation_id = raw.get("operationId") if isinstance(raw.get("operationId"), str) else None
        if operation_id is not None:
            seen_ids.add(operation_id)
        try:
            model = validated(OperationModel, raw, f"{method.upper()} {path}")
        except OpenApiError as error:
            if operation_filter.accepts(
                method=method, path=path, operation_id=operation_id, tags=(), deprecated=False
            ):
                skipped.append(SkippedOperation(method, path, operation_id, str(error)))
            continue
        if not operation_filter.accepts(
            method=method,
            path=path,
            operation_id=model.operation_id,
            tags=model.tags,
            deprecated=model.deprecated,
        ):
            continue
        try:
            operations.append(builder.operation(name, method, path, model, item))
        except _Skip as why:
            skipped.append(SkippedOperation(method, path, model.operation_id, str(why)))
    unknown = sorted(operation_filter.operation_ids - seen_ids)
    if unknown:
        raise OpenApiError(f"the operation filter names operationIds the document lacks: {unknown}")
    return Built(operations, skipped, version)


class _Builder:
    def __init__(
        self,
        refs: Refs,
        document: Document,
        config: OpenApiConfig,
        openapi31: bool,
        document_url: str | None,
    ) -> None:
        self.refs = refs
        self.document = document
        self.config = config
        self.openapi31 = openapi31
        self.document_url = document_url
        self.tool_names = NameSet()

    def raw_operations(self) -> list[tuple[str, str, dict[str, Any], PathItem]]:
        """``(path, method, raw operation, path item)`` in document order."""
        found: list[tuple[str, str, dict[str, Any], PathItem]] = []
        for path, raw_item in self.document.paths.items():
            if path.startswith("x-"):
                continue
            where = f"paths[{path!r}]"
            try:
                item_data, _ = self.refs.follow(raw_item, self.refs.root)
            except RefProblem as error:
                raise OpenApiError(f"{where}: {error}") from None
            if not isinstance(item_data, dict):
                raise OpenApiError(f"{where} must be an object")
            item_dict: dict[str, Any] = item_data  # pyright: ignore[reportUnknownVariableType]
            item = validated(PathItem, item_dict, where)
            for method in HTTP_METHODS:
                raw = item_dict.get(method)
                if raw is None:
                    continue
                if not isinstance(raw, dict):
                    raise OpenApiError(f"{where}.{method} must be an object")
                found.append((path, method, raw, item))  # pyright: ignore[reportUnknownArgumentType]
        return found

    def wanted_name(self, raw: dict[str, Any], method: str, path: str) -> str:
        operation_id = raw.get("operationId")
        base = operation_tool_name(
            operation_id if isinstance(operation_id, str) else None, method, path
        )
        return f"{self.config.prefix}_{base}" if self.config.prefix else base

    def operation(
        self, name: str, method: str, path: str, model: OperationModel, item: PathItem
    ) -> Operation:
        parameters = self._parameters(path, [*item.parameters], [*model.parameters])
        arguments = NameSet()
        properties: dict[str, Any] = {}
        required: list[str] = []
        bindings: list[ParameterBinding] = []
        for parameter, schema, media_type in parameters:
            argument = _claim_argument(arguments, parameter.name, parameter.location)
            properties[argument] = _described(schema, parameter.description, parameter.deprecated)
            if parameter.required or parameter.location == "path":
                required.append(argument)
            bindings.append(
                ParameterBinding(
                    argument=argument,
                    name=parameter.name,
                    location=parameter.location,
                    style=parameter.style,
                    explode=parameter.explode,
                    media_type=media_type,
                )
            )
        body = self._body(model.request_body)
        body_binding: BodyBinding | None = None
        if body is not None:
            body_schema, media_type, body_required, body_description = body
            argument = arguments.claim("body" if "body" not in arguments else "request_body")
            properties[argument] = _described(body_schema, body_description, False)
            if body_required:
                required.append(argument)
            body_binding = BodyBinding(argument=argument, media_type=media_type)
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        found: Iterable[ValidationError] = _META_SCHEMA.iter_errors(schema)  # pyright: ignore[reportUnknownMemberType]
        problem = cast(ValidationError | None, best_match(found))
        if problem is not None:
            where = "/".join(str(part) for part in problem.absolute_path)
            raise _Skip(f"its schema is not valid JSON Schema (at {where}: {problem.message})")
        servers = model.servers or item.servers or self.document.servers
        return Operation(
            tool_name=name,
            method=method,
            path=path,
            operation_id=model.operation_id,
            tags=tuple(model.tags),
            description=_description(model, method, path),
            schema=schema,
            base_url=self._base_url(servers, f"{method.upper()} {path}"),
            parameters=tuple(bindings),
            body=body_binding,
        )

    def _base_url(self, servers: Sequence[Server] | None, where: str) -> str:
        return base_url(
            self.config.base_url,
            servers,
            variables=self.config.server_variables,
            document_url=self.document_url,
            where=where,
        )

    def _parameters(
        self, path: str, path_level: list[dict[str, Any]], operation_level: list[dict[str, Any]]
    ) -> list[tuple[Parameter, Any, str | None]]:
        """The operation's parameters (its own override its path's), each with its schema."""
        chosen: dict[tuple[str, str], tuple[Parameter, Any, str | None]] = {}
        for raw in [*path_level, *operation_level]:
            parameter, resolver = self._resolve(raw, Parameter, "a parameter")
            schema, media_type = self._parameter_schema(parameter, resolver)
            key = (
                parameter.location,
                parameter.name.lower() if parameter.location == "header" else parameter.name,
            )
            chosen[key] = (parameter, schema, media_type)
        declared = {name for (location, name) in chosen if location == "path"}
        for placeholder in _TEMPLATE.findall(path):
            if placeholder not in declared:
                raise _Skip(f"the path names {{{placeholder}}} but no path parameter describes it")
        kept = [
            entry
            for entry in chosen.values()
            if not self._hidden(entry[0])
            and (entry[0].location != "path" or f"{{{entry[0].name}}}" in path)
        ]
        kept.sort(key=lambda entry: _LOCATION_ORDER[entry[0].location])
        return kept

    def _hidden(self, parameter: Parameter) -> bool:
        """True for a parameter the model must not fill: the caller's credential or header."""
        location, name = parameter.location, parameter.name
        if location == "header":
            lowered = name.lower()
            if lowered in _IGNORED_HEADERS:
                return True
            if any(lowered == header.lower() for header in self.config.headers):
                return True
        auth = self.config.auth
        return auth is not None and auth.supplies(location, name)

    def _parameter_schema(
        self, parameter: Parameter, resolver: Resolver[Any]
    ) -> tuple[Any, str | None]:
        if parameter.content:
            media_type, content = next(iter(parameter.content.items()))
            raw_schema, media = content.schema_, media_type
        elif parameter.schema_ is not None:
            raw_schema, media = parameter.schema_, None
        else:
            raise _Skip(f"parameter {parameter.name!r} has neither a schema nor content")
        where = f"parameter {parameter.name!r}"
        return self._schema(raw_schema, resolver, where, request=False), media

    def _body(self, raw: dict[str, Any] | None) -> tuple[Any, str, bool, str | None] | None:
        if raw is None:
            return None
        body, resolver = self._resolve(raw, RequestBody, "the request body")
        media_type = _json_media_type(list(body.content))
        if media_type is None:
            if body.required:
                kinds = ", ".join(body.content) or "no content type"
                raise _Skip(f"its request body is not JSON ({kinds}); only JSON bodies are sent")
            return None
        raw_schema = body.content[media_type].schema_
        schema: Any = {}  # no schema: any JSON
        if raw_schema is not None:
            schema = self._schema(raw_schema, resolver, "the request body", request=True)
        return schema, media_type, body.required, body.description

    def _schema(self, raw: Any, resolver: Resolver[Any], where: str, *, request: bool) -> Any:
        try:
            return to_json_schema(
                raw, self.refs, resolver, openapi31=self.openapi31, request=request
            )
        except SchemaProblem as error:
            raise _Skip(f"{where}: {error}") from None

    def _resolve(self, raw: Any, model: type[M], what: str) -> tuple[M, Resolver[Any]]:
        try:
            data, resolver = self.refs.follow(raw, self.refs.root)
        except RefProblem as error:
            raise _Skip(f"{what}: {error}") from None
        try:
            return validated(model, data, what), resolver
        except OpenApiError as error:
            raise _Skip(str(error)) from None


def _claim_argument(names: NameSet, raw: str, location: str) -> str:
    wanted = argument_name(raw)
    if wanted in names or wanted in ("body", "request_body"):
        wanted = f"{location}_{wanted}"
    return names.claim(wanted)


def _described(schema: Any, description: str | None, deprecated: bool) -> Any:
    text = description or ""
    if deprecated:
        text = f"(deprecated) {text}".strip()
    if not text:
        return schema
    if isinstance(schema, bool):
        return {"description": text} if schema else {"not": {}, "description": text}
    if isinstance(schema, dict):
        return {**schema, "description": text}  # pyright: ignore[reportUnknownVariableType]
    return schema


def _json_media_type(media_types: list[str]) -> str | None:
    for media_type in media_types:
        essence = media_type.split(";", 1)[0].strip().lower()
        if essence == "application/json":
            return media_type
    for media_type in media_types:
        essence = media_type.split(";", 1)[0].strip().lower()
        if essence.endswith("+json") or essence in ("*/*", "application/*"):
            return media_type
    return None


def _description(model: OperationModel, method: str, path: str) -> str:
    parts = [part.strip() for part in (model.summary, model.description) if part and part.strip()]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]
    if model.deprecated:
        parts.insert(0, "(Deprecated.)")
    footer = f"{method.upper()} {path}"
    text = "\n\n".join(parts)
    room = MAX_DESCRIPTION - len(footer) - 2
    if len(text) > room:
        text = text[: room - 1].rstrip() + "…"
    return f"{text}\n\n{footer}" if text else footer
