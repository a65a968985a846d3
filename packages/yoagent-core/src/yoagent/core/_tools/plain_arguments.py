"""Arguments of plain JSON types, validated by pydantic-core without building a model.

A ``@tool`` function's arguments are a pydantic model (:class:`ToolArguments`). Building
the first model of a process loads pydantic's schema generator and JSON-schema writer:
≈ 4–6 MB of resident memory and ≈ 80–160 ms, half of a small agent's start (see
``benchmarks/RESULTS.md``). For the parameter types most tools take (``str``, ``int``,
``float``, ``bool``, ``X | None`` and ``list[X]`` of those) this module writes the two
things pydantic would derive from that model itself: its core schema, which
pydantic-core validates exactly as the model does (same coercions, same errors), and
its JSON schema, as :func:`~yoagent.core._tools.model_tool.arguments_schema` would
show it. ``tests/test_plain_arguments.py`` compares both with the model's, type by type
and value by value. Any other signature (a model, a ``Literal``, an ``Annotated`` type,
a default of another kind, a name pydantic treats specially) returns ``None`` here and
gets its model at once, as before.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Union, get_args, get_origin

if TYPE_CHECKING:
    from pydantic_core import CoreSchema, SchemaValidator

_SCALARS: Final[dict[type, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}
"""The scalar parameter types, with their JSON schema ``type``."""

_DEFAULT_TYPES: Final = (type(None), str, int, float, bool)
"""Defaults written into the schema as they are (anything else: the model path)."""

BASE_MODEL_NAMES: Final = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "from_orm",
        "json",
        "model_computed_fields",
        "model_config",
        "model_construct",
        "model_copy",
        "model_dump",
        "model_dump_json",
        "model_extra",
        "model_fields",
        "model_fields_set",
        "model_json_schema",
        "model_parametrized_name",
        "model_post_init",
        "model_rebuild",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "update_forward_refs",
        "validate",
    }
)
"""``BaseModel``'s public attributes: a field of one of these names makes pydantic warn
(a test keeps the set equal to ``dir(BaseModel)``'s public names)."""


class PlainArguments:
    """A ``@tool`` signature's validator and JSON schema, both from its parameter types."""

    __slots__ = ("_absent_when_null", "_validator", "schema")

    def __init__(
        self, validator: SchemaValidator, schema: dict[str, Any], absent_when_null: frozenset[str]
    ) -> None:
        self._validator = validator
        self._absent_when_null = absent_when_null
        self.schema = schema
        """The JSON schema the model reads (what ``arguments_schema`` shows for the model)."""

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The validated arguments by parameter name, defaults filled in.

        A ``null`` for a parameter whose type does not admit ``None`` counts as left out,
        as :class:`ToolArguments` has it. Raises pydantic's ``ValidationError``.
        """
        absent = self._absent_when_null  # a null under an unknown key is kept, and refused
        data = {k: v for k, v in arguments.items() if v is not None or k not in absent}
        fields, _extra, _set = self._validator.validate_python(data)
        return fields


def plain_arguments(
    model_name: str,
    types_by_name: Mapping[str, Any],
    defaults: Mapping[str, Any],
    descriptions: Mapping[str, str],
) -> PlainArguments | None:
    """The validator for these parameters, or ``None`` when one is not a plain JSON type.

    ``defaults`` holds only the parameters that have one; ``descriptions`` the documented
    ones (already stripped, none empty).
    """
    for name, annotation in types_by_name.items():
        if not _plain_name(name) or _json_type(annotation) is None:
            return None
        if name in defaults and not _plain_default(defaults[name]):
            return None
    from pydantic_core import CoreConfig, SchemaValidator, core_schema

    fields: dict[str, core_schema.ModelField] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    absent_when_null: set[str] = set()
    for name, annotation in types_by_name.items():
        schema = _core_schema(annotation)
        shown = dict(_json_type(annotation) or {})
        if name in defaults:
            schema = core_schema.with_default_schema(schema, default=defaults[name])
            shown["default"] = defaults[name]
        else:
            required.append(name)
        if name in descriptions:
            shown["description"] = descriptions[name]
        if not _is_optional(annotation):
            absent_when_null.add(name)
        fields[name] = core_schema.model_field(schema)
        properties[name] = dict(sorted(shown.items()))  # pydantic sorts a schema's keys
    validator = SchemaValidator(
        core_schema.model_fields_schema(fields, model_name=model_name, extra_behavior="forbid"),
        CoreConfig(title=model_name, extra_fields_behavior="forbid"),
    )
    shown_model: dict[str, Any] = {"additionalProperties": False, "properties": properties}
    if required:
        shown_model["required"] = required
    shown_model["type"] = "object"
    return PlainArguments(validator, shown_model, frozenset(absent_when_null))


def _plain_name(name: str) -> bool:
    # pydantic refuses a leading underscore and warns about its protected ``model_``
    # namespace and about names that shadow BaseModel's: those keep the model path.
    return not name.startswith(("_", "model_")) and name not in BASE_MODEL_NAMES


def _plain_default(value: Any) -> bool:
    if type(value) not in _DEFAULT_TYPES:
        return False
    return not (isinstance(value, float) and not math.isfinite(value))


def _is_optional(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _optional_of(annotation: Any) -> Any:
    """``X`` for ``X | None`` (or ``None | X``, ``Optional[X]``); ``None`` otherwise."""
    if not _is_optional(annotation):
        return None
    members = [member for member in get_args(annotation) if member is not type(None)]
    if len(members) != 1 or len(get_args(annotation)) != 2:
        return None
    return members[0]


def _json_type(annotation: Any) -> dict[str, Any] | None:
    """The JSON schema of a plain parameter type (keys sorted), ``None`` for any other."""
    if isinstance(annotation, type) and annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    inner = _optional_of(annotation)
    if inner is not None:
        shown = _json_type(inner)
        return None if shown is None else {"anyOf": [shown, {"type": "null"}]}
    if get_origin(annotation) is list:
        items = get_args(annotation)
        shown = _json_type(items[0]) if len(items) == 1 else None  # list[int, str]: the model's
        return None if shown is None else {"items": shown, "type": "array"}
    return None


def _core_schema(annotation: Any) -> CoreSchema:
    """pydantic-core's schema for a type :func:`_json_type` accepted."""
    from pydantic_core import core_schema

    if annotation is str:
        return core_schema.str_schema()
    if annotation is int:
        return core_schema.int_schema()
    if annotation is float:
        return core_schema.float_schema()
    if annotation is bool:
        return core_schema.bool_schema()
    inner = _optional_of(annotation)
    if inner is not None:
        return core_schema.nullable_schema(_core_schema(inner))
    return core_schema.list_schema(_core_schema(get_args(annotation)[0]))
