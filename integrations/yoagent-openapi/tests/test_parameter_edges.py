"""Parameters on the wire at their edges: header objects and characters, cookies that
cannot end early, parameters described by ``content``, and the words of the refusals
around them (from the mutation triage: each test pins a behaviour a surviving mutant
changed)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from yoagent.core import ToolContext, ToolError
from yoagent.openapi import OpenApiConfig, OpenApiError, OpenApiToolAdapter

ORIGIN = "http://api.example"


def _spec(*parameters: dict[str, Any], servers: Any = None) -> dict[str, Any]:
    operation = {"operationId": "go", "parameters": list(parameters), "responses": {}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Go", "version": "1"},
        "servers": servers or [{"url": ORIGIN}],
        "paths": {"/go": {"get": operation}},
    }


def _param(name: str, where: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("schema", {})
    return {"name": name, "in": where, **fields}


async def _sent(parameter: dict[str, Any], value: Any) -> httpx.Request:
    sent: list[httpx.Request] = []

    def keep(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="ok")

    async with httpx.AsyncClient(transport=httpx.MockTransport(keep)) as client:
        adapter = OpenApiToolAdapter.from_spec(_spec(parameter), client=client)
        tool = adapter.tool("go")
        await tool.execute({tool_argument(tool.parameters): value}, _ctx())
    return sent[0]


def tool_argument(schema: dict[str, Any]) -> str:
    [name] = schema["properties"]
    return name


def _ctx() -> ToolContext:
    return ToolContext(tool_call_id="c1", tool_name="go")


@pytest.mark.parametrize(
    ("explode", "header"), [(True, "a=1,b=x y"), (False, "a,1,b,x y"), (None, "a,1,b,x y")]
)
async def test_an_object_header_is_written_by_its_explode(explode: Any, header: str) -> None:
    parameter = _param("X-Filter", "header", explode=explode)
    if explode is None:
        del parameter["explode"]
    request = await _sent(parameter, {"a": 1, "b": "x y"})
    assert request.headers["x-filter"] == header


async def test_a_header_value_with_a_control_character_is_refused_unsent() -> None:
    with pytest.raises(ToolError) as raised:
        await _sent(_param("X-Note", "header"), "bell\x7f")
    assert str(raised.value) == (
        "invalid arguments for go: header parameter 'X-Note': the value must be printable "
        "ASCII (no line breaks or control characters)"
    )


@pytest.mark.parametrize(
    ("explode", "value", "cookie"),
    [
        (True, {"x/y": "1/2"}, "x%2Fy=1%2F2"),
        (False, ["a", "b"], "pref=a%2Cb"),
        (None, ["a/b", "c"], "pref=a%2Fb; pref=c"),
    ],
)
async def test_cookie_names_and_values_are_encoded_whole(
    explode: Any, value: Any, cookie: str
) -> None:
    parameter = _param("pref", "cookie", explode=explode)
    if explode is None:
        del parameter["explode"]
    request = await _sent(parameter, value)
    assert request.headers["cookie"] == cookie


@pytest.mark.parametrize(
    ("media_type", "value", "sent"),
    [
        ("application/json", {"q": "é", "n": [1, 2]}, '{"q":"é","n":[1,2]}'),
        ("application/json", "x", '"x"'),
        ("Application/JSON; charset=utf-8", "x", '"x"'),
        ("application/problem+json", "x", '"x"'),
        ("text/plain", "plain words", "plain words"),
        ("text/plain", 7, "7"),
    ],
)
async def test_a_content_parameter_is_sent_as_its_media_type_says(
    media_type: str, value: Any, sent: str
) -> None:
    parameter = {"name": "filter", "in": "query", "content": {media_type: {"schema": {}}}}
    request = await _sent(parameter, value)
    assert request.url.params["filter"] == sent


async def test_a_query_style_that_is_not_one_is_refused_in_words() -> None:
    with pytest.raises(ToolError) as raised:
        await _sent(_param("q", "query", style="matrix"), "x")
    assert str(raised.value) == (
        "invalid arguments for go: query parameter 'q': style 'matrix' is not a query style"
    )


def test_a_server_variable_nobody_declares_is_named() -> None:
    spec = _spec(servers=[{"url": "https://{region}.api.example"}])
    with pytest.raises(OpenApiError) as raised:
        OpenApiToolAdapter.from_spec(spec)
    assert str(raised.value) == (
        "GET /go: the server URL 'https://{region}.api.example' uses {region}, which it does "
        "not declare; pass it in OpenApiConfig(server_variables=...)"
    )


def test_the_config_repr_names_its_settings_and_only_the_header_names() -> None:
    config = OpenApiConfig(base_url="https://api.example", headers={"X-Secret-Key": "v-1"})
    assert repr(config) == (
        "OpenApiConfig(base_url='https://api.example', auth=None, timeout=30.0, "
        "max_response_bytes=65536, prefix=None, headers=['X-Secret-Key'])"
    )


def test_a_schema_list_keyword_that_is_not_a_list_skips_the_operation_in_words() -> None:
    adapter = OpenApiToolAdapter.from_spec(_spec(_param("q", "query", schema={"allOf": {}})))
    assert [str(skipped) for skipped in adapter.skipped] == [
        "GET /go (go): parameter 'q': 'allOf' must be a list of schemas"
    ]


async def _sent_all(
    parameters: list[dict[str, Any]], arguments: dict[str, Any], path: str = "/go"
) -> httpx.Request:
    sent: list[httpx.Request] = []

    def keep(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="ok")

    spec = _spec(*parameters)
    spec["paths"] = {path: spec["paths"]["/go"]}
    async with httpx.AsyncClient(transport=httpx.MockTransport(keep)) as client:
        tool = OpenApiToolAdapter.from_spec(spec, client=client).tool("go")
        await tool.execute(arguments, _ctx())
    return sent[0]


async def test_an_argument_left_out_does_not_stop_the_ones_after_it() -> None:
    request = await _sent_all([_param("a", "query"), _param("b", "query")], {"b": "2"})
    assert list(request.url.params.multi_items()) == [("b", "2")]


@pytest.mark.parametrize(
    ("explode", "value", "pairs"),
    [
        (False, ["a", "b"], [("q", "a,b")]),
        (True, [{"é": [1, 2]}], [("q", '{"é":[1,2]}')]),
    ],
)
async def test_query_arrays_follow_their_explode(
    explode: bool, value: Any, pairs: list[tuple[str, str]]
) -> None:
    request = await _sent_all([_param("q", "query", explode=explode)], {"q": value})
    assert list(request.url.params.multi_items()) == pairs


async def test_a_path_object_follows_its_explode() -> None:
    parameter = _param("id", "path", required=True, explode=True)
    request = await _sent_all([parameter], {"id": {"a": 1, "b": 2}}, "/go/{id}")
    assert request.url.path == "/go/a=1,b=2"


async def test_a_path_style_that_is_not_one_is_refused_in_words() -> None:
    parameter = _param("id", "path", required=True, style="form")
    with pytest.raises(ToolError) as raised:
        await _sent_all([parameter], {"id": "x"}, "/go/{id}")
    assert str(raised.value) == (
        "invalid arguments for go: path parameter 'id': style 'form' is not a path style"
    )
