"""Real documents in: the Petstore 3.0 (YAML) and 3.1 (JSON) examples, read every way."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_testing import PETSTORE_30, PETSTORE_31, PetstoreServer

from yoagent.openapi import (
    ApiKeyAuth,
    OpenApiConfig,
    OpenApiError,
    OpenApiToolAdapter,
    OperationFilter,
)

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
LOCAL = OpenApiConfig(base_url="http://127.0.0.1:9/api")

PETSTORE_30_TOOLS = [
    "updatePet", "addPet", "findPetsByStatus", "findPetsByTags", "getPetById",
    "updatePetWithForm", "deletePet", "uploadFile", "getInventory", "placeOrder",
    "getOrderById", "deleteOrder", "createUser", "createUsersWithListInput", "loginUser",
    "logoutUser", "getUserByName", "updateUser", "deleteUser",
]  # fmt: skip


def test_the_petstore_30_gives_one_tool_per_operation_in_document_order() -> None:
    adapter = OpenApiToolAdapter.from_file(PETSTORE_30, config=LOCAL)

    assert [tool.name for tool in adapter.tools] == PETSTORE_30_TOOLS
    assert adapter.skipped == []
    assert adapter.openapi_version == "3.0.4"
    assert all(PROVIDER_NAME.match(tool.name) for tool in adapter.tools)


def test_a_petstore_30_tool_has_the_operations_parameters_as_its_schema() -> None:
    adapter = OpenApiToolAdapter.from_file(PETSTORE_30, config=LOCAL)

    tool = adapter.tool("updatePetWithForm")

    assert (tool.method, tool.path) == ("POST", "/pet/{petId}")
    assert tool.description == (
        "Updates a pet in the store with form data.\n\n"
        "Updates a pet resource based on the form data.\n\nPOST /pet/{petId}"
    )
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "petId": {
                "type": "integer",
                "format": "int64",
                "description": "ID of pet that needs to be updated",
            },
            "name": {"type": "string", "description": "Name of pet that needs to be updated"},
            "status": {"type": "string", "description": "Status of pet that needs to be updated"},
        },
        "required": ["petId"],
        "additionalProperties": False,
    }


def test_a_petstore_30_body_is_the_pet_schema_inlined_without_openapi_keywords() -> None:
    adapter = OpenApiToolAdapter.from_file(PETSTORE_30, config=LOCAL)

    body = adapter.tool("addPet").parameters["properties"]["body"]

    assert adapter.tool("addPet").parameters["required"] == ["body"]
    assert body["description"] == "Create a new pet in the store"
    assert body["required"] == ["name", "photoUrls"]
    assert body["properties"]["category"] == {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "format": "int64", "examples": [1]},
            "name": {"type": "string", "examples": ["Dogs"]},
        },
    }
    assert body["properties"]["photoUrls"] == {"type": "array", "items": {"type": "string"}}
    assert "xml" not in json.dumps(body)
    assert "$ref" not in json.dumps(adapter.tool("addPet").parameters)


def test_an_operation_whose_only_body_is_binary_keeps_its_other_parameters() -> None:
    adapter = OpenApiToolAdapter.from_file(PETSTORE_30, config=LOCAL)

    assert list(adapter.tool("uploadFile").parameters["properties"]) == [
        "petId",
        "additionalMetadata",
    ]


def test_the_petstore_31_reads_its_31_features() -> None:
    adapter = OpenApiToolAdapter.from_file(PETSTORE_31, config=LOCAL)

    assert [tool.name for tool in adapter.tools] == [
        "updatePet",
        "addPet",
        "findPetsByStatus",
        "getPetById",
        "deletePet",
        "getInventory",
        "placeOrder",
        "getOrderById",
    ]  # fmt: skip  (the webhook is not an operation the client calls)
    pet = adapter.tool("addPet").parameters["properties"]["body"]
    assert pet["description"] == "Pet object that needs to be added to the store"
    assert pet["properties"]["status"]["type"] == ["string", "null"]
    assert pet["properties"]["category"]["description"] == "Pet category"  # $ref + sibling
    # a path-level parameter is every operation's, and comes first
    assert adapter.tool("deletePet").parameters["properties"] == {
        "petId": {"type": "integer", "format": "int64", "description": "ID of pet"},
        "api_key": {"type": "string"},
    }


def test_text_json_and_yaml_of_one_document_give_the_same_tools() -> None:
    data = yaml.safe_load(PETSTORE_30.read_text())
    from_json = OpenApiToolAdapter.from_str(json.dumps(data), config=LOCAL)
    from_yaml = OpenApiToolAdapter.from_str(PETSTORE_30.read_text(), config=LOCAL)
    from_dict = OpenApiToolAdapter.from_spec(data, config=LOCAL)

    def shape(adapter: OpenApiToolAdapter) -> list[Any]:
        return [(t.name, t.description, t.parameters) for t in adapter.tools]

    assert shape(from_json) == shape(from_yaml) == shape(from_dict)


async def test_a_document_from_a_url_resolves_its_relative_server_against_that_url(
    server: PetstoreServer,
) -> None:
    adapter = await OpenApiToolAdapter.from_url(
        server.origin + "/api/v31/openapi.json",
        config=OpenApiConfig(auth=ApiKeyAuth("api_key", server.api_key)),
    )

    result = await adapter.tool("getPetById").execute({"petId": 1}, _context("getPetById"))

    assert adapter.tool("getPetById").operation.base_url == server.origin + "/api/v31"
    assert server.requests[-1].path == "/api/v31/pet/1"
    assert result.details["status"] == 200


async def test_a_url_that_fails_is_an_error_naming_only_the_origin(server: PetstoreServer) -> None:
    with pytest.raises(OpenApiError) as caught:
        await OpenApiToolAdapter.from_url(server.origin + "/nothing-here?token=s3cr3t-value")

    assert str(caught.value) == f"cannot fetch the document from {server.origin}: HTTP 404"


async def test_a_url_httpx_refuses_is_an_error_naming_the_failure_not_the_url() -> None:
    with pytest.raises(OpenApiError) as caught:
        await OpenApiToolAdapter.from_url("http://api.example:80a/openapi.json?token=s3cr3t")

    # The origin as written (its bad port is the problem), never the query holding a key.
    assert str(caught.value) == "cannot fetch the document from http://api.example:80a: InvalidURL"
    assert caught.value.__suppress_context__


async def test_a_document_that_moved_is_followed_to_its_new_url(server: PetstoreServer) -> None:
    adapter = await OpenApiToolAdapter.from_url(server.origin + "/docs")

    assert adapter.openapi_version == "3.1.0"
    assert adapter.tool("getPetById").operation.base_url == server.origin + "/api/v31"


def test_extensions_under_paths_are_skipped_and_a_broken_path_item_is_an_error() -> None:
    spec: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "x-generated-by": "a tool",
            "/a": {"get": {"operationId": "getA", "responses": {}}},
        },
    }
    assert [t.name for t in OpenApiToolAdapter.from_spec(spec, config=LOCAL).tools] == ["getA"]

    spec["paths"]["/b"] = {"$ref": "#/components/pathItems/B"}
    with pytest.raises(OpenApiError, match=re.escape("paths['/b']: cannot resolve $ref")):
        OpenApiToolAdapter.from_spec(spec, config=LOCAL)


@pytest.mark.parametrize("prefix", ["", "my api", "x" * 33])
def test_a_prefix_that_would_break_tool_names_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        OpenApiConfig(prefix=prefix)


def test_a_relative_server_without_a_url_or_base_url_is_an_error_that_says_what_to_do() -> None:
    with pytest.raises(OpenApiError, match=r"pass OpenApiConfig\(base_url=...\)"):
        OpenApiToolAdapter.from_file(PETSTORE_30)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"swagger": "2.0", "paths": {}}', "this is a Swagger 2.0 document"),
        ('{"openapi": "3.2.0", "paths": {}}', "unsupported 'openapi' version '3.2.0'"),
        (
            "openapi: 3.0.0\npaths: [1, 2]",
            "the document: paths: Input should be a valid dictionary",
        ),
        ("- just\n- a list", "the document is a list, not a mapping"),
        ("openapi: [unclosed", "not valid JSON or YAML"),
        ('{"openapi": "3.1.0", "paths": {}', "not valid JSON or YAML"),
        ("[" * 50_000 + "]" * 50_000, "the document is nested too deeply to read"),
    ],
)
def test_a_document_that_cannot_be_read_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(OpenApiError, match=re.escape(message)):
        OpenApiToolAdapter.from_str(text, config=LOCAL)


def test_yaml_flow_style_is_read_though_it_starts_like_json() -> None:
    text = "{openapi: 3.0.3, info: {title: t, version: '1'}, paths: {/a: {get: {operationId: a}}}}"

    assert [t.name for t in OpenApiToolAdapter.from_str(text, config=LOCAL).tools] == ["a"]


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "absent.yaml"
    with pytest.raises(OpenApiError) as caught:
        OpenApiToolAdapter.from_file(missing)

    assert str(caught.value) == f"cannot read {missing}: No such file or directory"


def test_a_yaml_alias_bomb_costs_its_operation_not_the_process(tmp_path: Path) -> None:
    lines = ['openapi: "3.0.0"', "info: {title: t, version: '1'}", "x-bomb:", '  a0: &a0 ["lol"]']
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    lines += [
        "paths:",
        "  /bomb:",
        "    post:",
        "      operationId: bomb",
        "      requestBody:",
        "        content:",
        "          application/json:",
        "            schema: {type: object, properties: {v: {enum: *a9}}}",
        "      responses: {'200': {description: ok}}",
        "  /fine:",
        "    get:",
        "      operationId: fine",
        "      responses: {'200': {description: ok}}",
    ]
    file = tmp_path / "bomb.yaml"
    file.write_text("\n".join(lines))

    adapter = OpenApiToolAdapter.from_file(file, config=LOCAL)  # 9**9 items never built

    assert [tool.name for tool in adapter.tools] == ["fine"]
    (skipped,) = adapter.skipped
    assert str(skipped) == (
        "POST /bomb (bomb): the request body: the schema's values hold more than 100000 items"
    )


def test_operations_filtered_by_tag_method_path_and_id() -> None:
    def names(**criteria: Any) -> list[str]:
        chosen = OperationFilter(**criteria)
        return [
            t.name
            for t in OpenApiToolAdapter.from_file(PETSTORE_30, config=LOCAL, filter=chosen).tools
        ]

    assert names(tags=["store"]) == ["getInventory", "placeOrder", "getOrderById", "deleteOrder"]
    assert names(tags=["user"], methods=["DELETE"]) == ["deleteUser"]
    assert names(paths=["/pet/{petId}*"]) == [
        "getPetById",
        "updatePetWithForm",
        "deletePet",
        "uploadFile",
    ]
    assert names(operation_ids=["loginUser", "logoutUser"]) == ["loginUser", "logoutUser"]
    assert names(tags=["pet"], exclude_operation_ids=["deletePet", "uploadFile"]) == [
        "updatePet", "addPet", "findPetsByStatus", "findPetsByTags", "getPetById",
        "updatePetWithForm",
    ]  # fmt: skip
    assert names(exclude_tags=["pet", "user"]) == names(tags=["store"])


def test_a_filter_naming_an_operation_the_document_lacks_is_an_error() -> None:
    with pytest.raises(OpenApiError, match=r"operationIds the document lacks: \['getUnicorn'\]"):
        OpenApiToolAdapter.from_file(
            PETSTORE_30,
            config=LOCAL,
            filter=OperationFilter(operation_ids=["getPetById", "getUnicorn"]),
        )


@pytest.mark.parametrize(
    ("criteria", "error"),
    [
        ({"methods": ["FETCH"]}, ValueError),
        ({"tags": "pet"}, TypeError),
    ],
)
def test_a_filter_that_cannot_mean_anything_is_refused_at_once(
    criteria: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        OperationFilter(**criteria)


def test_a_prefix_starts_every_tool_name() -> None:
    config = OpenApiConfig(base_url="http://127.0.0.1:9", prefix="petstore")

    names = [t.name for t in OpenApiToolAdapter.from_file(PETSTORE_31, config=config).tools]

    assert names[:2] == ["petstore_updatePet", "petstore_addPet"]


def _context(name: str) -> Any:
    from yoagent.core import ToolContext

    return ToolContext(tool_call_id="c1", tool_name=name)
