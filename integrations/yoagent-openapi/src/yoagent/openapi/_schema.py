"""An OpenAPI schema object as a self-contained JSON Schema (2020-12) for the model.

Every ``$ref`` is inlined (providers do not all follow references in tool schemas), so
a recursive schema cannot be expressed: it is refused with the chain of references that
loops (:class:`SchemaProblem`), and the operation that needs it is left out. OpenAPI 3.0
dialect is rewritten to JSON Schema: ``nullable`` becomes a ``"null"`` type, boolean
``exclusiveMinimum``/``exclusiveMaximum`` become numbers, ``example`` becomes
``examples``; OpenAPI-only keywords (``discriminator``, ``xml``, ``externalDocs``,
``x-*``) are dropped. In a request, ``readOnly`` properties are left out.

The result is bounded: more than ``MAX_SCHEMA_NODES`` schema objects, more than
``MAX_VALUE_ITEMS`` items in keyword values (``enum``, ``default``...), or nesting deeper
than ``MAX_SCHEMA_DEPTH``, is refused the same way (a diamond of references can expand
exponentially; YAML aliases can make a short document hold a value of billions of items,
or one that nests forever). The result shares nothing with the document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ._refs import RefProblem, Refs

if TYPE_CHECKING:
    from referencing._core import Resolver

MAX_SCHEMA_NODES: Final = 5_000
MAX_SCHEMA_DEPTH: Final = 64
MAX_VALUE_ITEMS: Final = 100_000

_SCHEMA_MAPS: Final = ("properties", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES: Final = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_DROPPED: Final = frozenset(
    {
        "discriminator",
        "xml",
        "externalDocs",
        "nullable",
        "example",
        "$id",
        "$schema",
        "$anchor",
        "$dynamicAnchor",
        "$comment",
        "$defs",
        "definitions",
    }
)
_UNSUPPORTED: Final = ("$dynamicRef", "$recursiveRef")
# Keywords beside a ``$ref`` that only describe: they override the target's own.
_ANNOTATIONS: Final = frozenset(
    {
        "description",
        "title",
        "summary",
        "deprecated",
        "default",
        "examples",
        "example",
        "readOnly",
        "writeOnly",
    }
)


class SchemaProblem(Exception):
    """A schema that cannot be given to the model; the message says why and where."""


def to_json_schema(
    schema: Any, refs: Refs, resolver: Resolver[Any], *, openapi31: bool, request: bool
) -> dict[str, Any] | bool:
    """``schema`` (an OpenAPI schema object, maybe a ``$ref``) as inlined JSON Schema."""
    return _Converter(refs, openapi31=openapi31, request=request).convert(schema, resolver, 0)


class _Converter:
    def __init__(self, refs: Refs, *, openapi31: bool, request: bool) -> None:
        self._refs = refs
        self._openapi31 = openapi31
        self._request = request
        self._nodes = 0
        self._values = 0
        self._expanding: list[tuple[int, str]] = []  # (id of target, $ref text) being inlined

    def convert(self, node: Any, resolver: Resolver[Any], depth: int) -> dict[str, Any] | bool:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise SchemaProblem(f"a schema must be an object, not {type(node).__name__}")
        self._nodes += 1
        if self._nodes > MAX_SCHEMA_NODES:
            raise SchemaProblem(f"the schema expands to more than {MAX_SCHEMA_NODES} parts")
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaProblem(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        schema: dict[str, Any] = node  # pyright: ignore[reportUnknownVariableType]
        for keyword in _UNSUPPORTED:
            if keyword in schema:
                raise SchemaProblem(f"{keyword} is not supported")
        if "$ref" in schema:
            return self._inline(schema, resolver, depth)
        resolver = self._refs.entered(schema, resolver)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key in _SCHEMA_MAPS:
                out[key] = self._convert_map(value, resolver, depth, key)
            elif key in _SCHEMA_LISTS:
                out[key] = self._convert_list(value, resolver, depth, key)
            elif key in _SCHEMA_VALUES and (isinstance(value, dict) or key != "items"):
                out[key] = self.convert(value, resolver, depth + 1)
            elif key == "items":  # OpenAPI 3.0 never had array-form items; 2019 did
                raise SchemaProblem("'items' must be a schema")
            else:
                out[key] = self._copy_value(value, depth)
        if self._request:  # before the 3.0 rewrite, which may wrap ``out`` in an anyOf
            _drop_read_only(out)
        if "example" in schema and "examples" not in out:
            out["examples"] = [self._copy_value(schema["example"], depth)]
        if not self._openapi31:
            out = _from_openapi30(schema, out)
        return out

    def _inline(
        self, schema: dict[str, Any], resolver: Resolver[Any], depth: int
    ) -> dict[str, Any] | bool:
        ref = schema["$ref"]
        try:
            target, inner = self._refs.lookup(ref, resolver)
        except RefProblem as error:
            raise SchemaProblem(str(error)) from None
        for index, (seen, _) in enumerate(self._expanding):
            if seen == id(target):
                chain = " → ".join([text for _, text in self._expanding[index:]] + [str(ref)])
                raise SchemaProblem(f"recursive schema ({chain})")
        self._expanding.append((id(target), str(ref)))
        try:
            resolved = self.convert(target, inner, depth + 1)
        finally:
            self._expanding.pop()
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        if not siblings:
            return resolved
        described = {
            k: self._copy_value(v, depth) for k, v in siblings.items() if k in _ANNOTATIONS
        }
        if "example" in described:
            described.setdefault("examples", [described.pop("example")])
        if self._openapi31 and len(described) < len(siblings):
            # 3.1: a $ref's other keywords apply too; 3.0 ignores them.
            rest = self.convert(
                {k: v for k, v in siblings.items() if k not in _ANNOTATIONS}, resolver, depth + 1
            )
            return {"allOf": [resolved, rest], **described}
        if isinstance(resolved, bool):
            return {"allOf": [resolved], **described} if described else resolved
        return {**resolved, **described}

    def _copy_value(self, value: Any, depth: int) -> Any:
        """A copy of a keyword's JSON value (``enum``, ``default``...), counted against the
        budget: YAML aliases can make a short document hold a value too big to send."""
        self._values += 1
        if self._values > MAX_VALUE_ITEMS:
            raise SchemaProblem(f"the schema's values hold more than {MAX_VALUE_ITEMS} items")
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaProblem(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        if isinstance(value, dict):
            mapping: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {k: self._copy_value(v, depth + 1) for k, v in mapping.items()}
        if isinstance(value, list):
            items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
            return [self._copy_value(item, depth + 1) for item in items]
        return value

    def _convert_map(
        self, value: Any, resolver: Resolver[Any], depth: int, key: str
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise SchemaProblem(f"'{key}' must map names to schemas")
        mapping: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {name: self.convert(sub, resolver, depth + 1) for name, sub in mapping.items()}

    def _convert_list(
        self, value: Any, resolver: Resolver[Any], depth: int, key: str
    ) -> list[dict[str, Any] | bool]:
        if not isinstance(value, list):
            raise SchemaProblem(f"'{key}' must be a list of schemas")
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [self.convert(sub, resolver, depth + 1) for sub in items]


def _from_openapi30(original: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(bound)
        if isinstance(flag, bool):
            del out[bound]
            if flag and limit in out:
                out[bound] = out.pop(limit)
    if original.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
            if isinstance(out.get("enum"), list) and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        elif kind is None:
            return {"anyOf": [out, {"type": "null"}]}
    return out


def _drop_read_only(schema: dict[str, Any]) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    props: dict[str, Any] = properties  # pyright: ignore[reportUnknownVariableType]
    gone = [
        name
        for name, sub in props.items()
        if isinstance(sub, dict) and sub.get("readOnly") is True  # pyright: ignore[reportUnknownMemberType]
    ]
    for name in gone:
        del props[name]
    required = schema.get("required")
    if gone and isinstance(required, list):
        schema["required"] = [name for name in required if name not in gone]  # pyright: ignore[reportUnknownVariableType]
