"""What a document becomes at its edges: parameters the caller's headers fill, deprecated
and boolean schemas described, argument names beside the body, the config's and the
file reader's refusals, and how argument problems are listed (from the mutation triage:
each test pins a behaviour a surviving mutant changed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from yoagent.core import ToolContext, ToolError
from yoagent.openapi import OpenApiConfig, OpenApiError, OpenApiToolAdapter, _load

ORIGIN = "http://api.example"


def _spec(*parameters: dict[str, Any], body: Any = None) -> dict[str, Any]:
    operation: dict[str, Any] = {"operationId": "go", "parameters": list(parameters)}
    if body is not None:
        operation["requestBody"] = body
    return {
        "openapi": "3.0.3",
        "info": {"title": "Go", "version": "1"},
        "servers": [{"url": ORIGIN}],
        "paths": {"/go": {"post": operation}},
    }


def _header(name: str) -> dict[str, Any]:
    return {"name": name, "in": "header", "schema": {"type": "string"}}


def _properties(spec: dict[str, Any], **config: Any) -> dict[str, Any]:
    adapter = OpenApiToolAdapter.from_spec(spec, config=OpenApiConfig(**config))
    return adapter.tool("go").parameters["properties"]


def test_a_header_the_config_sends_is_not_offered_to_the_model() -> None:
    spec = _spec(_header("x-tenant"), _header("X-Other"))
    assert list(_properties(spec, headers={"X-Tenant": "t-1"})) == ["X-Other"]


def test_deprecated_and_boolean_schemas_are_described() -> None:
    spec = _spec(
        {"name": "a", "in": "query", "schema": True, "deprecated": True},
        {"name": "b", "in": "query", "schema": False, "description": "Never."},
    )
    spec["openapi"] = "3.1.0"
    assert _properties(spec) == {
        "a": {"description": "(deprecated)"},
        "b": {"not": {}, "description": "Never."},
    }


def test_a_parameter_named_like_the_body_gets_its_place_in_front() -> None:
    body = {"content": {"application/json": {"schema": {"type": "object"}}}}
    spec = _spec({"name": "request_body", "in": "query", "schema": {}}, body=body)
    assert list(_properties(spec)) == ["query_request_body", "body"]


def test_a_parameter_without_schema_or_content_is_skipped_in_words() -> None:
    adapter = OpenApiToolAdapter.from_spec(_spec({"name": "q", "in": "query"}))
    assert [str(skipped) for skipped in adapter.skipped] == [
        "POST /go (go): parameter 'q' has neither a schema nor content"
    ]


def test_a_read_only_property_is_kept_in_a_parameter() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer", "readOnly": True}}}
    spec = _spec({"name": "q", "in": "query", "schema": schema})
    assert _properties(spec)["q"]["properties"] == {"id": {"type": "integer", "readOnly": True}}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 0}, "timeout must be a positive number of seconds, not 0"),
        ({"max_response_bytes": 0}, "max_response_bytes must be at least 1"),
        ({"error_excerpt_chars": -1}, "error_excerpt_chars cannot be negative"),
        ({"prefix": "a b"}, "prefix 'a b' must be 1 to 32 of a-z, A-Z, 0-9, '_' and '-' "),
        ({"headers": {"X Y": "v"}}, "invalid header name 'X Y'"),
        ({"headers": {"Xé": "v"}}, "invalid header name 'Xé'"),
        ({"headers": {"X": "é"}}, "the value of header 'X' must be printable ASCII"),
        ({"headers": {"X": "a\x7f"}}, "the value of header 'X' must be printable ASCII"),
        ({"headers": {"X": "a\nb"}}, "the value of header 'X' must be printable ASCII"),
    ],
)
def test_each_config_refusal_says_what_is_wrong(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}") as raised:
        OpenApiConfig(**options)
    if "prefix" in options:
        assert str(raised.value) == message + "(it starts every tool name)"


def test_the_smallest_limits_are_accepted() -> None:
    config = OpenApiConfig(
        timeout=0.001, max_response_bytes=1, error_excerpt_chars=0, headers={"X": "a b"}
    )
    assert (config.max_response_bytes, config.error_excerpt_chars) == (1, 0)


def test_a_file_is_named_in_errors_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = tmp_path / "listed.json"
    listed.write_text("[1]")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b"\xff\xfe")
    for path, message in [
        (listed, "listed.json: the document is a list, not a mapping"),
        (latin, "latin.json: the document is not UTF-8 text"),
    ]:
        with pytest.raises(OpenApiError) as raised:
            OpenApiToolAdapter.from_file(path)
        assert str(raised.value) == message
    exact = tmp_path / "exact.json"
    exact.write_text(json.dumps(_spec()))
    monkeypatch.setattr(_load, "MAX_DOCUMENT_BYTES", exact.stat().st_size)
    assert OpenApiToolAdapter.from_file(exact).tool("go").name == "go"
    monkeypatch.setattr(_load, "MAX_DOCUMENT_BYTES", exact.stat().st_size - 1)
    with pytest.raises(OpenApiError) as raised:
        OpenApiToolAdapter.from_file(exact)
    assert str(raised.value) == (
        f"exact.json: the document is larger than {exact.stat().st_size - 1} bytes"
    )


def test_an_unknown_tool_is_a_key_error_naming_the_tools() -> None:
    with pytest.raises(KeyError) as raised:
        OpenApiToolAdapter.from_spec(_spec()).tool("nope")
    assert raised.value.args == ("no tool 'nope'; the tools are ['go']",)


def _strict_tool() -> Any:
    properties = {name: {"type": "integer"} for name in "fedcba"}  # reported sorted
    schema = {"type": "object", "properties": {"k": {"type": "integer"}}}
    body = {"content": {"application/json": {"schema": schema}}}
    spec = _spec(*({"name": n, "in": "query", "schema": s} for n, s in properties.items()))
    spec["paths"]["/go"]["post"]["requestBody"] = body
    return OpenApiToolAdapter.from_spec(spec).tool("go")


async def _invalid(arguments: dict[str, Any]) -> str:
    tool = _strict_tool()
    with pytest.raises(ToolError) as raised:
        await tool.execute(arguments, ToolContext(tool_call_id="c1", tool_name="go"))
    return str(raised.value)


async def test_argument_problems_are_listed_in_order_five_at_most() -> None:
    six = dict.fromkeys("fedcba", "x")
    assert await _invalid(six) == (
        "invalid arguments for go: a: 'x' is not of type 'integer'; b: 'x' is not of type "
        "'integer'; c: 'x' is not of type 'integer'; d: 'x' is not of type 'integer'; e: 'x' "
        "is not of type 'integer'; and 1 more"
    )
    five = dict.fromkeys("abcde", "x")
    assert (await _invalid(five)).endswith("e: 'x' is not of type 'integer'")


async def test_a_long_problem_is_cut_at_300_characters() -> None:
    text = await _invalid({"a": "y" * 400})
    problem = text.removeprefix("invalid arguments for go: a: ")
    assert len(problem) == 300 and problem.endswith("…")
    nested = await _invalid({"body": {"k": "x"}})
    assert nested == "invalid arguments for go: body/k: 'x' is not of type 'integer'"


@pytest.mark.parametrize(
    ("media_type", "sent_type"),
    [("*/*", "application/json"), ("application/vnd.go+json", "application/vnd.go+json")],
)
async def test_a_body_is_sent_as_utf8_json_with_its_media_type(
    media_type: str, sent_type: str
) -> None:
    sent: list[httpx.Request] = []

    def keep(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="ok")

    body = {"content": {media_type: {"schema": {"type": "object"}}}}
    async with httpx.AsyncClient(transport=httpx.MockTransport(keep)) as client:
        tool = OpenApiToolAdapter.from_spec(_spec(body=body), client=client).tool("go")
        await tool.execute(
            {"body": {"name": "café"}}, ToolContext(tool_call_id="c", tool_name="go")
        )
    assert sent[0].content == '{"name": "café"}'.encode()
    assert sent[0].headers["content-type"] == sent_type
