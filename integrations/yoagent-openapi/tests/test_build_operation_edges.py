"""What a document's operations become at their edges: Swagger 2.0 told from OpenAPI, an
operation too wrong to read reported (or not, by the filter) without stopping the rest,
each structural refusal word for word, path parameters always required and dropped when
the path does not name them, header parameters overridden whatever their case, the body's
argument name beside a ``body`` parameter (which gives way), servers by level, the
operation's id and tags, non-JSON and schema-less bodies, and the description's parts and
cut. From the mutation triage: each test pins a behaviour a surviving mutant changed."""

from __future__ import annotations

from typing import Any

import pytest

from yoagent.openapi import OpenApiError, OpenApiToolAdapter, OperationFilter, SkippedOperation

ORIGIN = "https://api.example"


def _document(paths: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "B", "version": "1"},
        "servers": [{"url": ORIGIN}],
        "paths": paths,
        **top,
    }


def _refusal(document: dict[str, Any]) -> str:
    with pytest.raises(OpenApiError) as caught:
        OpenApiToolAdapter.from_spec(document)
    return str(caught.value)


def test_swagger_20_is_refused_and_a_document_saying_both_is_read_as_openapi() -> None:
    swagger = {"swagger": "2.0", "info": {"title": "B", "version": "1"}, "paths": {}}
    assert _refusal(swagger) == (
        "this is a Swagger 2.0 document; only OpenAPI 3.0 and 3.1 are read (convert it "
        "first, e.g. with swagger2openapi)"
    )
    both = _document({"/a": {"get": {"operationId": "a"}}}, swagger="2.0")
    assert [tool.name for tool in OpenApiToolAdapter.from_spec(both).tools] == ["a"]
    neither = {"info": {"title": "B", "version": "1"}, "paths": {}}
    assert "Swagger" not in _refusal(neither)


BAD = {"operationId": "bad", "tags": "not-a-list"}
GOOD = {"operationId": "good"}


def test_an_operation_too_wrong_to_read_is_skipped_by_name_and_the_rest_are_built() -> None:
    adapter = OpenApiToolAdapter.from_spec(_document({"/a": {"get": BAD}, "/b": {"get": GOOD}}))
    assert adapter.skipped == [
        SkippedOperation("get", "/a", "bad", "GET /a: tags: Input should be a valid list")
    ]
    assert [tool.name for tool in adapter.tools] == ["good"]


def test_an_operation_id_that_is_not_a_string_is_no_id() -> None:
    adapter = OpenApiToolAdapter.from_spec(
        _document({"/a": {"get": {"operationId": 5}}, "/b": {"get": GOOD}})
    )
    assert adapter.skipped == [
        SkippedOperation("get", "/a", None, "GET /a: operationId: Input should be a valid string")
    ]


@pytest.mark.parametrize(
    "operation_filter",
    [
        OperationFilter(operation_ids=["good"]),
        OperationFilter(methods=["post"]),
        OperationFilter(paths=["/b"]),
        OperationFilter(tags=["pets"]),  # an unreadable operation has no tags
    ],
)
def test_an_operation_too_wrong_to_read_is_not_reported_when_the_filter_leaves_it_out(
    operation_filter: OperationFilter,
) -> None:
    document = _document(
        {
            "/a": {"get": BAD},
            "/b": {"get": GOOD, "post": {**GOOD, "operationId": "p", "tags": ["pets"]}},
        }
    )
    assert OpenApiToolAdapter.from_spec(document, filter=operation_filter).skipped == []


@pytest.mark.parametrize(
    "operation_filter",
    [
        OperationFilter(operation_ids=["bad"]),
        OperationFilter(methods=["get"]),
        OperationFilter(paths=["/a"]),
    ],
)
def test_an_operation_too_wrong_to_read_is_reported_when_the_filter_takes_it(
    operation_filter: OperationFilter,
) -> None:
    document = _document({"/a": {"get": BAD}, "/b": {"get": GOOD}})
    adapter = OpenApiToolAdapter.from_spec(document, filter=operation_filter)
    assert [skipped.operation_id for skipped in adapter.skipped] == ["bad"]


def test_an_unreadable_operation_counts_as_not_deprecated() -> None:
    document = _document({"/a": {"get": BAD}})
    adapter = OpenApiToolAdapter.from_spec(
        document, filter=OperationFilter(include_deprecated=False)
    )
    assert [skipped.operation_id for skipped in adapter.skipped] == ["bad"]


def test_each_structural_refusal_names_its_place() -> None:
    assert _refusal(_document({"/a": 5})) == "paths['/a'] must be an object"
    assert _refusal(_document({"/a": {"get": 5}})) == "paths['/a'].get must be an object"
    assert _refusal(_document({"/a": {"parameters": 5}})) == (
        "paths['/a']: parameters: Input should be a valid list"
    )


def _tool(operation: dict[str, Any], path: str = "/a", **item: Any) -> Any:
    adapter = OpenApiToolAdapter.from_spec(_document({path: {"get": operation, **item}}))
    assert adapter.skipped == []
    [tool] = adapter.tools
    return tool


def test_a_path_parameter_is_required_even_unmarked_and_a_path_level_one_the_path_lacks_goes() -> (
    None
):
    unmarked = {"name": "id", "in": "path", "schema": {"type": "string"}}
    elsewhere = {"name": "other", "in": "path", "required": True, "schema": {"type": "string"}}
    tool = _tool({"operationId": "a", "parameters": [unmarked]}, "/a/{id}", parameters=[elsewhere])
    assert list(tool.parameters["properties"]) == ["id"]
    assert tool.parameters["required"] == ["id"]


def test_an_operations_header_parameter_overrides_its_paths_whatever_the_case() -> None:
    path_level = {
        "name": "X-Trace",
        "in": "header",
        "schema": {"type": "string"},
        "description": "path",
    }
    own = {"name": "x-trace", "in": "header", "schema": {"type": "integer"}, "description": "own"}
    tool = _tool({"operationId": "a", "parameters": [own]}, parameters=[path_level])
    assert tool.parameters["properties"] == {"x-trace": {"type": "integer", "description": "own"}}


def test_the_body_keeps_its_name_beside_a_parameter_named_body() -> None:
    parameter = {"name": "body", "in": "query", "schema": {"type": "string"}}
    body = {"content": {"application/json": {"schema": {"type": "object"}}}}
    tool = _tool({"operationId": "a", "parameters": [parameter], "requestBody": body})
    assert list(tool.parameters["properties"]) == ["query_body", "body"]
    alone = _tool({"operationId": "a", "requestBody": body})
    assert list(alone.parameters["properties"]) == ["body"]


def test_servers_come_from_the_operation_then_the_path_then_the_document() -> None:
    own = [{"url": "https://own.example"}]
    assert _tool({"operationId": "a", "servers": own}).operation.base_url == "https://own.example"
    path = [{"url": "https://path.example"}]
    assert _tool({"operationId": "a"}, servers=path).operation.base_url == "https://path.example"
    assert _tool({"operationId": "a"}).operation.base_url == ORIGIN


def test_the_operation_keeps_its_id_and_tags() -> None:
    operation = _tool({"operationId": "a", "tags": ["pets", "store"]}).operation
    assert (operation.operation_id, operation.tags) == ("a", ("pets", "store"))


def _skipped_reason(operation: dict[str, Any], **top: Any) -> str:
    adapter = OpenApiToolAdapter.from_spec(_document({"/a": {"post": operation}}, **top))
    [skipped] = adapter.skipped
    return skipped.reason


def test_a_required_body_that_is_not_json_is_skipped_naming_its_types() -> None:
    content = {"text/plain": {}, "application/xml": {}}
    body = {"required": True, "content": content}
    assert _skipped_reason({"operationId": "a", "requestBody": body}) == (
        "its request body is not JSON (text/plain, application/xml); only JSON bodies are sent"
    )
    empty = {"required": True, "content": {}}
    assert _skipped_reason({"operationId": "a", "requestBody": empty}) == (
        "its request body is not JSON (no content type); only JSON bodies are sent"
    )


def test_a_body_that_cannot_be_read_is_skipped_naming_the_body() -> None:
    ref = {"$ref": "#/components/requestBodies/B"}
    reason = _skipped_reason(
        {"operationId": "a", "requestBody": ref}, components={"requestBodies": {"B": 5}}
    )
    assert reason == (
        "the request body: (value): Input should be a valid dictionary or instance of RequestBody"
    )


@pytest.mark.parametrize("media_type", ["application/json", "application/*", "*/*"])
def test_a_json_body_without_a_schema_takes_any_json(media_type: str) -> None:
    body = {"content": {media_type: {}}}
    tool = _tool({"operationId": "a", "requestBody": body})
    assert tool.parameters["properties"]["body"] == {}


def _description(operation: dict[str, Any]) -> str:
    return _tool({"operationId": "a", **operation}).description


def test_the_description_joins_summary_and_description_unless_one_repeats_the_other() -> None:
    assert (
        _description({"summary": "Lists.", "description": "Pets."}) == "Lists.\n\nPets.\n\nGET /a"
    )
    assert (
        _description({"summary": "Lists", "description": "Lists pets."}) == "Lists pets.\n\nGET /a"
    )
    assert _description({"summary": "Lists"}) == "Lists\n\nGET /a"
    assert _description({}) == "GET /a"


def test_a_deprecated_operation_says_so_first() -> None:
    assert (
        _description({"summary": "Old.", "deprecated": True}) == "(Deprecated.)\n\nOld.\n\nGET /a"
    )


def test_a_long_description_is_cut_to_the_limit_with_an_ellipsis() -> None:
    footer = "\n\nGET /a"
    room = 1024 - len(footer)
    fits = "x" * room
    assert _description({"description": fits}) == fits + footer
    long = "y" * (room - 3) + "   " + "z" * 50
    cut = _description({"description": long})
    assert cut == "y" * (room - 3) + "…" + footer  # the cut's trailing spaces go
    unbroken = _description({"description": "w" * (room + 10)})
    assert unbroken == "w" * (room - 1) + "…" + footer
    assert len(unbroken) == 1024
