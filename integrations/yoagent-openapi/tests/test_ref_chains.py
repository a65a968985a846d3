"""Following ``$ref``\\ s: a chain as long as the limit and one past it, identifiers only
in OpenAPI 3.1, and a component's identifier read in its own JSON Schema dialect. From the
mutation triage: each test pins a behaviour a surviving mutant changed."""

from __future__ import annotations

from typing import Any

import pytest

from yoagent.openapi._refs import RefProblem, Refs

BASE = "file:///api/openapi.yaml"


def _chain(length: int) -> tuple[Refs, dict[str, Any]]:
    """A document whose parameter ``P0`` is reached through ``length`` ``$ref``\\ s."""
    parameters: dict[str, Any] = {
        f"P{i}": {"$ref": f"#/components/parameters/P{i + 1}"} for i in range(length - 1)
    }
    parameters[f"P{length - 1}"] = {"name": "limit", "in": "query"}
    document = {"openapi": "3.0.3", "components": {"parameters": parameters}}
    return Refs(document, base_uri=BASE, json_schema_ids=False), {
        "$ref": "#/components/parameters/P0"
    }


def test_a_chain_as_long_as_the_limit_is_followed_and_one_longer_is_refused() -> None:
    refs, start = _chain(32)
    found, _ = refs.follow(start, refs.root)
    assert found == {"name": "limit", "in": "query"}

    refs, start = _chain(33)
    with pytest.raises(RefProblem) as caught:
        refs.follow(start, refs.root)
    hops = " → ".join(f"#/components/parameters/P{i}" for i in range(33))
    assert str(caught.value) == f"a chain of more than 32 $refs: {hops}"


def _with_ids(openapi: str) -> dict[str, Any]:
    return {
        "openapi": openapi,
        "components": {
            "schemas": {
                "New": {"$id": "urn:new", "type": "string"},
                "Old": {
                    "$schema": "http://json-schema.org/draft-04/schema#",
                    "id": "urn:old",
                    "type": "integer",
                },
            }
        },
    }


def test_identifiers_inside_schemas_are_known_in_31_in_each_schemas_dialect() -> None:
    refs = Refs(_with_ids("3.1.0"), base_uri=BASE, json_schema_ids=True)
    assert refs.lookup("urn:new", refs.root)[0] == {"$id": "urn:new", "type": "string"}
    assert refs.lookup("urn:old", refs.root)[0]["type"] == "integer"


def test_identifiers_inside_schemas_mean_nothing_in_30() -> None:
    refs = Refs(_with_ids("3.0.3"), base_uri=BASE, json_schema_ids=False)
    with pytest.raises(RefProblem):
        refs.lookup("urn:new", refs.root)
    assert refs.lookup("#/components/schemas/New", refs.root)[0]["type"] == "string"
