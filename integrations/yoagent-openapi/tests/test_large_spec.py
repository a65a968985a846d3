"""A large real-world-shaped document (tests/large_spec.py): 240 operations, cycles, allOf/oneOf."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from large_spec import EXTRA_OPERATIONS, RECURSIVE_BODIES, RESOURCES, make_large_spec

from yoagent.openapi import OpenApiToolAdapter, OperationFilter

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture(scope="module")
def adapter() -> OpenApiToolAdapter:
    return OpenApiToolAdapter.from_spec(make_large_spec())


def test_every_operation_but_the_recursive_bodies_becomes_a_tool(
    adapter: OpenApiToolAdapter,
) -> None:
    operations = len(RESOURCES) * 5 + EXTRA_OPERATIONS

    assert operations == 240
    assert len(adapter.tools) == operations - 2 * len(RECURSIVE_BODIES)
    assert sorted(s.operation_id or "" for s in adapter.skipped) == sorted(
        f"{verb}{name}"
        for verb in ("create", "update")
        for name in ("Category", "Folder", "Item", "TreeNode")
    )
    assert all("recursive schema (" in s.reason for s in adapter.skipped)


def test_the_loops_are_named_in_the_reasons(adapter: OpenApiToolAdapter) -> None:
    reasons = {s.operation_id: s.reason for s in adapter.skipped}

    assert reasons["createFolder"] == (
        "the request body: recursive schema (#/components/schemas/Folder → "
        "#/components/schemas/Item → #/components/schemas/Folder)"
    )
    assert reasons["updateTreeNode"] == (
        "the request body: recursive schema (#/components/schemas/TreeNode → "
        "#/components/schemas/TreeNode)"
    )


def test_every_tool_name_is_a_valid_unique_provider_name(adapter: OpenApiToolAdapter) -> None:
    names = [tool.name for tool in adapter.tools]

    assert len(set(names)) == len(names)
    assert all(PROVIDER_NAME.match(name) for name in names)
    assert {"get_health", "get_metrics", "search", "search_2", "orders_list-v2_all"} <= set(names)
    (long_name,) = [name for name in names if name.startswith("exportAllHistorical")]
    assert len(long_name) == 64


def test_every_schema_is_self_contained_valid_json_schema(adapter: OpenApiToolAdapter) -> None:
    for tool in adapter.tools:
        Draft202012Validator.check_schema(tool.parameters)
        text = json.dumps(tool.parameters)
        assert "$ref" not in text, tool.name
        assert '"nullable"' not in text and '"discriminator"' not in text, tool.name
        assert len(tool.description) <= 1024


def test_a_response_only_cycle_costs_nothing(adapter: OpenApiToolAdapter) -> None:
    names = {tool.name for tool in adapter.tools}

    assert {"listComments", "getComment", "createComment", "updateComment"} <= names


def test_all_of_and_one_of_arrive_inlined_with_read_only_fields_gone(
    adapter: OpenApiToolAdapter,
) -> None:
    create = adapter.tool("createInvoice").parameters["properties"]["body"]
    update = adapter.tool("updateInvoice").parameters["properties"]["body"]

    assert create["required"] == ["name"]
    assert create["properties"]["price"]["properties"]["amount"] == {
        "type": "number",
        "exclusiveMinimum": 0,
    }
    assert create["properties"]["status"]["type"] == ["string", "null"]
    assert [option["properties"]["kind"]["enum"] for option in update["oneOf"]] == [
        ["rename"],
        ["archive"],
    ]


def test_shared_parameters_headers_and_servers_are_resolved(adapter: OpenApiToolAdapter) -> None:
    listing = adapter.tool("listAccounts")
    members = adapter.tool("listTeamMembers")

    assert list(listing.parameters["properties"]) == [
        "limit", "cursor", "filter_status", "X-Request-ID",
    ]  # fmt: skip
    assert listing.operation.base_url == "https://eu.api.example.com/v1"
    assert adapter.tool("moveTreeNode").operation.base_url == "https://moves.example.com/v1"
    assert list(members.parameters["properties"]) == ["id", "query_id", "session"]
    assert adapter.tool("deleteAccount").parameters["required"] == ["accountId", "If-Match"]


def test_filters_select_from_the_large_document() -> None:
    spec = make_large_spec()

    by_tag = OpenApiToolAdapter.from_spec(spec, filter=OperationFilter(tags=["search", "export"]))
    by_method = OpenApiToolAdapter.from_spec(spec, filter=OperationFilter(methods=["delete"]))
    no_deprecated = OpenApiToolAdapter.from_spec(
        spec, filter=OperationFilter(methods=["delete"], include_deprecated=False)
    )

    assert [t.name for t in by_tag.tools] == ["search", "search_2", by_tag.tools[2].name]
    assert by_tag.tools[2].name.startswith("exportAllHistorical")
    assert len(by_method.tools) == len(RESOURCES)
    assert {t.name for t in by_method.tools} - {t.name for t in no_deprecated.tools} == {
        "deleteLicense"
    }
    assert by_tag.skipped == []  # the recursive operations were not asked for


def test_the_same_document_as_a_yaml_file_gives_the_same_tools(
    adapter: OpenApiToolAdapter, tmp_path: Path
) -> None:
    file = tmp_path / "large.yaml"
    file.write_text(yaml.safe_dump(make_large_spec(), sort_keys=False))

    from_yaml = OpenApiToolAdapter.from_file(file)

    assert [(t.name, t.parameters) for t in from_yaml.tools] == [
        (t.name, t.parameters) for t in adapter.tools
    ]
