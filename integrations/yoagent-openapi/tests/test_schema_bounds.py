"""A schema's bounds at their edges (depth, parts, value items: each accepted at the bound
and refused one past it, by name), keyword values copied whole, and ``example`` beside
``examples``. From the mutation triage: each test pins a behaviour a surviving mutant
changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_schema_edges import _converted, _skipped

from yoagent.openapi import _schema

REFUSED = "GET /s (s): parameter 'q': "


def _nested_properties(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _nested_any_of(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"anyOf": [schema]}
    return schema


def _nested_not(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"not": schema}
    return schema


def _nested_default(levels: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return {"type": "object", "default": value}


def _nested_list_default(levels: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return {"type": "array", "default": value}


@pytest.mark.parametrize(
    "build",
    [_nested_properties, _nested_any_of, _nested_not, _nested_default, _nested_list_default],
)
def test_nesting_as_deep_as_the_bound_is_read_and_one_level_more_is_refused(
    build: Callable[[int], dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_schema, "MAX_SCHEMA_DEPTH", 3)
    assert _skipped(build(3)) == []
    assert _skipped(build(4)) == [f"{REFUSED}the schema nests deeper than 3 levels"]


def _ref_chain(hops: int) -> tuple[dict[str, Any], dict[str, Any]]:
    schemas: dict[str, Any] = {"S0": {"type": "string"}}
    for index in range(1, hops + 1):
        schemas[f"S{index}"] = {"$ref": f"#/components/schemas/S{index - 1}"}
    return {"$ref": f"#/components/schemas/S{hops}"}, schemas


def test_each_ref_followed_counts_as_a_level(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_schema, "MAX_SCHEMA_DEPTH", 3)
    ref, schemas = _ref_chain(2)
    assert _converted(ref, **schemas) == {"type": "string"}
    ref, schemas = _ref_chain(3)
    assert _skipped(ref, **schemas) == [f"{REFUSED}the schema nests deeper than 3 levels"]


def test_a_31_refs_other_keywords_count_a_level_below_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_schema, "MAX_SCHEMA_DEPTH", 3)
    b = {"type": "string"}
    deepest = {"$ref": "#/components/schemas/B", "not": _nested_not(1)}  # the string at 3
    assert _skipped(deepest, "3.1.0", B=b) == []
    deeper = {"$ref": "#/components/schemas/B", "not": _nested_not(2)}
    assert _skipped(deeper, "3.1.0", B=b) == [f"{REFUSED}the schema nests deeper than 3 levels"]


def test_a_schema_of_as_many_parts_as_the_bound_is_read_and_one_more_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_schema, "MAX_SCHEMA_NODES", 3)
    assert _skipped(_nested_properties(2)) == []  # three schema objects
    assert _skipped(_nested_properties(3)) == [f"{REFUSED}the schema expands to more than 3 parts"]


def test_values_of_as_many_items_as_the_bound_are_read_and_one_more_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_schema, "MAX_VALUE_ITEMS", 3)
    assert _converted({"enum": ["a", "b"]})["enum"] == ["a", "b"]  # the list and two items
    assert _skipped({"enum": ["a", "b", "c"]}) == [
        f"{REFUSED}the schema's values hold more than 3 items"
    ]


def test_a_keyword_value_is_copied_whole() -> None:
    value = {"a": [1, {"b": None, "c": "x"}], "d": {}}
    converted = _converted({"type": "object", "default": value, "example": value})
    assert converted["default"] == value
    assert converted["examples"] == [value]
    assert converted["default"] is not value  # a copy: the request never edits the document


def test_examples_beside_example_are_kept() -> None:
    schema = {"type": "string", "example": "one", "examples": ["two", "three"]}
    assert _converted(schema, "3.1.0") == {"type": "string", "examples": ["two", "three"]}


def test_a_30_ref_to_a_boolean_schema_with_only_ignored_keywords_stays_a_boolean() -> None:
    # 3.0 ignores a $ref's other keywords; none of these is an annotation kept beside it.
    assert _converted({"$ref": "#/components/schemas/Any", "minLength": 3}, Any=True) is True
