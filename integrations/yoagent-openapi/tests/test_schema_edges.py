"""Schemas and documents at their edges: ``$ref`` siblings in 3.0 and 3.1, a ``$ref`` to a
boolean schema, exclusive bounds, keywords of the wrong shape, a malformed ``$id``, the
JSON media type a body is sent as, and YAML keys that are not strings (from the mutation
triage: each test pins a behaviour a surviving mutant changed)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from yoagent.openapi import OpenApiError, OpenApiToolAdapter, _load


def _spec(schema: Any, version: str = "3.0.3", **schemas: Any) -> dict[str, Any]:
    parameter = {"name": "q", "in": "query", "schema": schema}
    return {
        "openapi": version,
        "info": {"title": "S", "version": "1"},
        "servers": [{"url": "https://api.example"}],
        "paths": {"/s": {"get": {"operationId": "s", "parameters": [parameter]}}},
        "components": {"schemas": schemas},
    }


def _converted(schema: Any, version: str = "3.0.3", **schemas: Any) -> Any:
    adapter = OpenApiToolAdapter.from_spec(_spec(schema, version, **schemas))
    assert adapter.skipped == []
    return adapter.tool("s").parameters["properties"]["q"]


def _skipped(schema: Any, version: str = "3.0.3", **schemas: Any) -> list[str]:
    adapter = OpenApiToolAdapter.from_spec(_spec(schema, version, **schemas))
    return [str(skipped) for skipped in adapter.skipped]


def test_an_example_beside_a_ref_becomes_examples() -> None:
    ref = {"$ref": "#/components/schemas/N", "example": 5}
    assert _converted(ref, N={"type": "integer"}) == {"type": "integer", "examples": [5]}


def test_a_ref_to_a_boolean_schema_keeps_its_description() -> None:
    ref = {"$ref": "#/components/schemas/Any", "description": "Anything."}
    assert _converted(ref, "3.1.0", Any=True) == {"allOf": [True], "description": "Anything."}
    assert _converted({"$ref": "#/components/schemas/Any"}, "3.1.0", Any=True) is True


def test_a_31_ref_with_other_keywords_resolves_refs_inside_them() -> None:
    ref = {
        "$ref": "#/components/schemas/Pet",
        "properties": {"tag": {"$ref": "#/components/schemas/Tag"}},
    }
    converted = _converted(ref, "3.1.0", Pet={"type": "object"}, Tag={"type": "string"})
    assert converted == {"allOf": [{"type": "object"}, {"properties": {"tag": {"type": "string"}}}]}


def test_boolean_exclusive_bounds_become_numbers() -> None:
    schema = {"type": "number", "maximum": 10, "exclusiveMaximum": True, "minimum": 1}
    assert _converted(schema) == {"type": "number", "exclusiveMaximum": 10, "minimum": 1}


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"properties": []}, "'properties' must map names to schemas"),
        ({"$ref": 5}, "a $ref must be a string, not int"),
    ],
)
def test_a_keyword_of_the_wrong_shape_skips_the_operation_in_words(schema: Any, why: str) -> None:
    assert _skipped(schema) == [f"GET /s (s): parameter 'q': {why}"]


@pytest.mark.parametrize(
    "media_type",
    ["Application/JSON; charset=utf-8; v=1", "application/merge-patch+json; charset=utf-8; v=1"],
)
def test_the_json_media_type_of_a_body_is_found_with_its_parameters(media_type: str) -> None:
    spec = _spec({"type": "string"})
    content = {"text/plain": {"schema": {}}, media_type: {"schema": {"type": "object"}}}
    spec["paths"]["/s"]["get"]["requestBody"] = {"required": True, "content": content}
    adapter = OpenApiToolAdapter.from_spec(spec)
    assert adapter.skipped == []
    assert adapter.tool("s").operation.body is not None
    assert adapter.tool("s").operation.body.media_type == media_type


def test_yaml_keys_that_are_not_text_become_text() -> None:
    assert _load.parse_text("true: 1\nfalse: 2\n200: 3\nname: 4\n", origin="d") == {
        "true": 1,
        "false": 2,
        "200": 3,
        "name": 4,
    }


def test_a_document_at_the_size_bound_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    text = '{"a": 1}'
    monkeypatch.setattr(_load, "MAX_DOCUMENT_BYTES", len(text))
    assert _load.parse_text(text, origin="d") == {"a": 1}
    with pytest.raises(OpenApiError) as raised:
        _load.parse_text(text + " ", origin="d")
    assert str(raised.value) == f"d: the document is larger than {len(text)} bytes"


MALFORMED = "OpenAPI document: a $id in components/schemas is malformed; ids ignored"


def _id_spec(schemas: Any) -> dict[str, Any]:
    return _spec({"$ref": "#/components/schemas/Pet"}, "3.1.0", **schemas)


def test_a_malformed_id_is_warned_about_and_refs_resolve_without_ids(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.openapi")
    adapter = OpenApiToolAdapter.from_spec(_id_spec({"Pet": {"$id": 5, "type": "string"}}))
    assert [record.getMessage() for record in caplog.records] == [MALFORMED]
    assert adapter.tool("s").parameters["properties"]["q"] == {"type": "string"}


def test_schemas_that_are_not_a_mapping_hold_no_ids_to_warn_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.openapi")
    spec = _spec({"type": "string"}, "3.1.0")
    OpenApiToolAdapter.from_spec({**spec, "components": {"schemas": ["not", "a", "map"]}})
    assert MALFORMED not in caplog.text
