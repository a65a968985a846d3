"""Schemas in, JSON Schema out: inlining, cycles, the 3.0 dialect, limits, argument names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from yoagent.openapi import OpenApiConfig, OpenApiToolAdapter

CONFIG = OpenApiConfig(base_url="http://127.0.0.1:9")


def document(
    version: str, body: Any, *, schemas: dict[str, Any] | None = None, **operation: Any
) -> dict[str, Any]:
    post: dict[str, Any] = {"operationId": "op", "responses": {"200": {"description": "ok"}}}
    if body is not None:
        post["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    post.update(operation)
    return {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": {"/things": {"post": post}},
        "components": {"schemas": schemas or {}},
    }


def body_schema(version: str, body: Any, **schemas: Any) -> Any:
    adapter = OpenApiToolAdapter.from_spec(document(version, body, schemas=schemas), config=CONFIG)
    assert adapter.skipped == [], adapter.skipped
    return adapter.tool("op").parameters["properties"]["body"]


def skipped_reason(version: str, body: Any, **schemas: Any) -> str:
    adapter = OpenApiToolAdapter.from_spec(document(version, body, schemas=schemas), config=CONFIG)
    assert adapter.tools == []
    (skipped,) = adapter.skipped
    return skipped.reason


# --- the 3.0 dialect -------------------------------------------------------------------------


def test_nullable_becomes_a_null_type_and_a_null_enum_member() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "nullable": True},
            "b": {"type": "string", "enum": ["x", "y"], "nullable": True},
            "c": {"allOf": [{"type": "string"}], "nullable": True},
            "d": {"type": "string", "nullable": False},
        },
    }

    converted = body_schema("3.0.3", schema)["properties"]

    assert converted["a"] == {"type": ["string", "null"]}
    assert converted["b"] == {"type": ["string", "null"], "enum": ["x", "y", None]}
    assert converted["c"] == {"anyOf": [{"allOf": [{"type": "string"}]}, {"type": "null"}]}
    assert converted["d"] == {"type": "string"}


def test_boolean_exclusive_bounds_become_numbers_and_example_becomes_examples() -> None:
    schema = {
        "type": "object",
        "properties": {
            "low": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "example": 1.5},
            "high": {"type": "number", "maximum": 9, "exclusiveMaximum": False},
        },
    }

    converted = body_schema("3.0.3", schema)["properties"]

    assert converted["low"] == {"type": "number", "exclusiveMinimum": 0, "examples": [1.5]}
    assert converted["high"] == {"type": "number", "maximum": 9}


def test_openapi_only_keywords_and_extensions_are_dropped() -> None:
    schema = {
        "type": "object",
        "discriminator": {"propertyName": "kind"},
        "xml": {"name": "thing"},
        "externalDocs": {"url": "http://docs"},
        "x-internal": True,
        "properties": {"kind": {"type": "string", "x-order": 1}},
    }

    assert body_schema("3.0.3", schema) == {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
    }


def test_read_only_properties_are_left_out_of_a_nullable_30_body_too() -> None:
    schema = {
        "nullable": True,
        "required": ["id"],
        "properties": {"id": {"type": "string", "readOnly": True}, "name": {"type": "string"}},
    }

    assert body_schema("3.0.3", schema) == {
        "anyOf": [{"required": [], "properties": {"name": {"type": "string"}}}, {"type": "null"}]
    }


def test_a_read_only_beside_a_ref_leaves_the_property_out_in_both_versions() -> None:
    body = {
        "type": "object",
        "properties": {
            "id": {"$ref": "#/components/schemas/Id", "readOnly": True},
            "name": {"type": "string"},
        },
    }

    for version in ("3.0.3", "3.1.0"):
        converted = body_schema(version, body, Id={"type": "string", "format": "uuid"})
        assert converted["properties"] == {"name": {"type": "string"}}, version


def test_read_only_properties_are_left_out_of_request_bodies() -> None:
    schema = {
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"$ref": "#/components/schemas/Id"},
            "name": {"type": "string"},
            "secret": {"type": "string", "writeOnly": True},
        },
    }

    converted = body_schema("3.0.3", schema, Id={"type": "string", "readOnly": True})

    assert converted == {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "secret": {"type": "string", "writeOnly": True},
        },
    }


# --- $ref ------------------------------------------------------------------------------------


def test_a_refs_description_sibling_overrides_the_targets_in_both_versions() -> None:
    body = {"$ref": "#/components/schemas/Name", "description": "the pet's name"}
    target = {"type": "string", "description": "a name"}

    for version in ("3.0.3", "3.1.0"):
        assert body_schema(version, body, Name=target) == {
            "type": "string",
            "description": "the pet's name",
        }


def test_a_refs_constraint_sibling_applies_in_31_and_is_ignored_in_30() -> None:
    body = {"$ref": "#/components/schemas/Name", "minLength": 3}

    assert body_schema("3.0.3", body, Name={"type": "string"}) == {"type": "string"}
    assert body_schema("3.1.0", body, Name={"type": "string"}) == {
        "allOf": [{"type": "string"}, {"minLength": 3}]
    }


def test_pointer_escapes_in_refs_are_followed() -> None:
    body = {
        "type": "object",
        "properties": {
            "slash": {"$ref": "#/components/schemas/a~1b"},
            "tilde": {"$ref": "#/components/schemas/c~0d"},
            "space": {"$ref": "#/components/schemas/with%20space"},
        },
    }
    schemas = {
        "a/b": {"type": "integer"},
        "c~d": {"type": "boolean"},
        "with space": {"type": "null"},
    }

    assert body_schema("3.0.3", body, **schemas)["properties"] == {
        "slash": {"type": "integer"},
        "tilde": {"type": "boolean"},
        "space": {"type": "null"},
    }


def test_a_31_schema_id_moves_the_base_of_the_refs_inside_it() -> None:
    body = {"$ref": "#/components/schemas/Tagged"}
    tagged = {
        "$id": "https://example.com/schemas/tagged",
        "type": "object",
        "properties": {"tag": {"$ref": "#/$defs/tag"}},
        "$defs": {"tag": {"type": "string", "maxLength": 8}},
    }

    assert body_schema("3.1.0", body, Tagged=tagged) == {
        "type": "object",
        "properties": {"tag": {"type": "string", "maxLength": 8}},
    }


def test_a_diamond_of_refs_is_inlined_at_each_use() -> None:
    body = {
        "type": "object",
        "properties": {
            "home": {"$ref": "#/components/schemas/Address"},
            "work": {"$ref": "#/components/schemas/Address"},
        },
    }

    converted = body_schema("3.0.3", body, Address={"type": "string", "maxLength": 80})

    assert converted["properties"]["home"] == converted["properties"]["work"]
    assert converted["properties"]["home"] == {"type": "string", "maxLength": 80}


@pytest.mark.parametrize(
    ("schemas", "chain"),
    [
        (
            {
                "Node": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/components/schemas/Node"}},
                }
            },
            "#/components/schemas/Node → #/components/schemas/Node",
        ),
        (
            {
                "Node": {"$ref": "#/components/schemas/A"},
                "A": {"type": "array", "items": {"$ref": "#/components/schemas/B"}},
                "B": {"allOf": [{"$ref": "#/components/schemas/A"}]},
            },
            "#/components/schemas/A → #/components/schemas/B → #/components/schemas/A",
        ),
    ],
)
def test_a_recursive_schema_leaves_its_operation_out_naming_the_loop(
    schemas: dict[str, Any], chain: str
) -> None:
    reason = skipped_reason("3.0.3", {"$ref": "#/components/schemas/Node"}, **schemas)

    assert reason == f"the request body: recursive schema ({chain})"


def test_a_ref_to_nowhere_and_a_ref_to_another_file_are_refused_with_their_text() -> None:
    assert skipped_reason("3.0.3", {"$ref": "#/components/schemas/Nope"}) == (
        "the request body: cannot resolve $ref '#/components/schemas/Nope': "
        "it points at nothing in the document"
    )
    assert skipped_reason("3.1.0", {"$ref": "common.yaml#/Pet"}) == (
        "the request body: cannot resolve $ref 'common.yaml#/Pet': "
        "only references inside the document are followed"
    )


def test_a_schema_that_expands_exponentially_is_refused() -> None:
    schemas = {
        f"L{i}": {
            "type": "object",
            "properties": {
                "left": {"$ref": f"#/components/schemas/L{i + 1}"},
                "right": {"$ref": f"#/components/schemas/L{i + 1}"},
            },
        }
        for i in range(30)
    }
    schemas["L30"] = {"type": "string"}

    reason = skipped_reason("3.0.3", {"$ref": "#/components/schemas/L0"}, **schemas)

    assert reason == "the request body: the schema expands to more than 5000 parts"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"type": "int"}, "its schema is not valid JSON Schema (at properties/body/type: "),
        ({"type": "string", "pattern": "[a-"}, "'[a-' is not a 'regex'"),
        ({"items": [{"type": "string"}]}, "the request body: 'items' must be a schema"),
        ({"$dynamicRef": "#meta"}, "the request body: $dynamicRef is not supported"),
        ("a string", "the request body: a schema must be an object, not str"),
    ],
)
def test_a_schema_that_is_not_json_schema_leaves_its_operation_out(body: Any, reason: str) -> None:
    assert reason in skipped_reason("3.1.0", body)


def test_boolean_schemas_of_31_pass_through() -> None:
    body = {"type": "object", "properties": {"anything": True}, "additionalProperties": False}

    assert body_schema("3.1.0", body) == body


def test_the_tool_schema_shares_nothing_with_the_document() -> None:
    spec = document("3.0.3", {"type": "string", "enum": ["a", "b"]})
    adapter = OpenApiToolAdapter.from_spec(spec, config=CONFIG)

    adapter.tool("op").parameters["properties"]["body"]["enum"].append("c")

    enum = spec["paths"]["/things"]["post"]["requestBody"]["content"]["application/json"]
    assert enum["schema"]["enum"] == ["a", "b"]


# --- operations that cannot be tools, argument names --------------------------------------------


def test_a_path_placeholder_without_a_parameter_leaves_the_operation_out() -> None:
    spec = document("3.0.3", None)
    spec["paths"] = {"/things/{id}": spec["paths"]["/things"]}

    adapter = OpenApiToolAdapter.from_spec(spec, config=CONFIG)

    assert [str(s) for s in adapter.skipped] == [
        "POST /things/{id} (op): the path names {id} but no path parameter describes it"
    ]


def test_a_parameter_ref_that_loops_leaves_the_operation_out() -> None:
    spec = document("3.0.3", None, parameters=[{"$ref": "#/components/parameters/P"}])
    spec["components"]["parameters"] = {"P": {"$ref": "#/components/parameters/P"}}

    (skipped,) = OpenApiToolAdapter.from_spec(spec, config=CONFIG).skipped

    assert skipped.reason == (
        "a parameter: a cycle of $refs: #/components/parameters/P → #/components/parameters/P"
    )


def test_a_required_body_that_is_not_json_leaves_the_operation_out_an_optional_one_is_dropped() -> (
    None
):
    form = {"multipart/form-data": {"schema": {"type": "object"}}}
    required = document("3.0.3", None, requestBody={"required": True, "content": form})
    optional = document("3.0.3", None, requestBody={"content": form})

    (skipped,) = OpenApiToolAdapter.from_spec(required, config=CONFIG).skipped
    tool = OpenApiToolAdapter.from_spec(optional, config=CONFIG).tool("op")

    assert (
        skipped.reason
        == "its request body is not JSON (multipart/form-data); only JSON bodies are sent"
    )
    assert tool.parameters["properties"] == {}


def test_argument_names_are_safe_and_unique_across_locations() -> None:
    parameters = [
        {"name": "id", "in": "query", "schema": {"type": "string"}},
        {"name": "id", "in": "header", "schema": {"type": "string"}},
        {"name": "filter[status]", "in": "query", "schema": {"type": "string"}},
        {"name": "body", "in": "query", "schema": {"type": "string"}},
        {"name": "Accept", "in": "header", "schema": {"type": "string"}},
    ]
    spec = document("3.0.3", {"type": "object"}, parameters=parameters)

    tool = OpenApiToolAdapter.from_spec(spec, config=CONFIG).tool("op")

    assert list(tool.parameters["properties"]) == [
        "id",
        "filter_status",
        "query_body",
        "header_id",
        "body",
    ]  # fmt: skip  (Accept is the client's, as the specification says)
    assert json.dumps(tool.parameters)  # plain JSON, ready to send
