"""Requests and names at their edges: no body means no ``content-length``, a path value
of letters and dots sent as it is, a JSON parameter type with several parameters, names
kept at the length limit and cut cleanly past it, a name made from the path, the
filter's refusals word for word, and the warning for an operation left out. From the
mutation triage: each test pins a behaviour a surviving mutant changed."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx
import pytest

from yoagent.core import ToolContext
from yoagent.openapi import OpenApiConfig, OpenApiToolAdapter, OperationFilter

ORIGIN = "http://api.example"


def _spec(paths: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A document with one GET operation per path."""
    return {
        "openapi": "3.0.3",
        "info": {"title": "E", "version": "1"},
        "servers": [{"url": ORIGIN}],
        "paths": {path: {"get": operation} for path, operation in paths.items()},
    }


async def _sent(spec: dict[str, Any], tool_name: str, **arguments: Any) -> httpx.Request:
    requests: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, text="ok", headers={"content-type": "text/plain"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
        tool = OpenApiToolAdapter.from_spec(spec, client=client).tool(tool_name)
        await tool.execute(arguments, ToolContext(tool_call_id="c1", tool_name=tool.name))
    [request] = requests
    return request


PATH_PARAMETER = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


THING = _spec({"/things/{id}": {"operationId": "thing", "parameters": [PATH_PARAMETER]}})


async def test_a_request_without_a_body_sends_no_content_length() -> None:
    request = await _sent(THING, "thing", id="7")
    assert "content-length" not in request.headers
    assert request.content == b""


@pytest.mark.parametrize(("value", "path"), [("X.", "/things/X."), ("..", "/things/%2E%2E")])
async def test_only_a_value_of_dots_alone_is_escaped_in_a_path(value: str, path: str) -> None:
    request = await _sent(THING, "thing", id=value)
    assert request.url.raw_path.decode() == path


async def test_a_json_parameter_type_with_several_parameters_is_sent_as_json() -> None:
    parameter = {
        "name": "filter",
        "in": "query",
        "content": {"application/json; charset=utf-8; profile=x": {"schema": {}}},
    }
    spec = _spec({"/things": {"operationId": "things", "parameters": [parameter]}})
    request = await _sent(spec, "things", filter={"a": [1, "é"]})
    assert request.url.params["filter"] == '{"a":[1,"é"]}'
    request = await _sent(spec, "things", filter="é")  # a JSON string keeps its quotes
    assert request.url.params["filter"] == '"é"'


def _names(operation: dict[str, Any], path: str = "/things") -> list[str]:
    return [tool.name for tool in OpenApiToolAdapter.from_spec(_spec({path: operation})).tools]


def test_a_name_as_long_as_the_limit_is_kept_and_a_longer_one_is_cut_at_an_underscore() -> None:
    at_limit = "a" * 64
    assert _names({"operationId": at_limit}) == [at_limit]
    # Cut to 55 characters, the cut ends in "_": one "_" before the hash, not two.
    longer = "b" * 54 + "_" + "c" * 20
    [cut] = _names({"operationId": longer})
    assert cut.startswith("b" * 54 + "_") and "__" not in cut
    assert len(cut) == 54 + 1 + 8
    [kept] = _names({"operationId": "e" * 54 + "X" + "f" * 20})  # only "_" is trimmed
    assert kept.startswith("e" * 54 + "X_")
    leading = "_" * 3 + "d" * 70  # a leading "_" is the cleaner's to drop, not the cut's
    assert _names({"operationId": leading})[0].startswith("d")


def test_a_name_from_the_path_keeps_every_letter_of_its_segments() -> None:
    assert _names({}, path="/Xbox/itemsX") == ["get_Xbox_itemsX"]


def test_the_filters_refusals_say_what_to_give() -> None:
    with pytest.raises(TypeError) as not_a_list:
        OperationFilter(tags="pets")
    assert str(not_a_list.value) == (
        "give a list of names, not one string (it would be read letter by letter)"
    )
    with pytest.raises(ValueError, match="unknown HTTP") as unknown:
        OperationFilter(methods=["GET", "FETCH"])
    assert str(unknown.value) == (
        "unknown HTTP method(s) ['fetch']; expected some of "
        "['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']"
    )


def test_an_operation_left_out_is_logged_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    parameter = {"name": "q", "in": "query", "schema": 5}
    spec = _spec({"/things": {"operationId": "things", "parameters": [parameter]}})
    with caplog.at_level(logging.WARNING, logger="yoagent.openapi"):
        adapter = OpenApiToolAdapter.from_spec(spec)
    [skipped] = adapter.skipped
    assert [record.getMessage() for record in caplog.records] == [
        f"OpenAPI operation left out: {skipped}"
    ]
    assert str(skipped).startswith("GET /things (things): ")


async def test_a_header_is_sent_once_whatever_the_case_of_its_names() -> None:
    parameters = [
        {"name": "Cookie", "in": "header", "schema": {"type": "string"}},
        {"name": "sid", "in": "cookie", "schema": {"type": "string"}},
    ]
    body = {"content": {"application/json": {"schema": {"type": "object"}}}}
    spec = _spec({"/things": {"operationId": "things", "parameters": parameters}})
    spec["paths"]["/things"] = {"post": {**spec["paths"]["/things"]["get"], "requestBody": body}}
    requests: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, text="ok", headers={"content-type": "text/plain"})

    config = OpenApiConfig(headers={"content-type": "application/json; charset=utf-8"})
    async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
        tool = OpenApiToolAdapter.from_spec(spec, config=config, client=client).tool("things")
        arguments = {"Cookie": "a=b", "sid": "1", "body": {}}
        await tool.execute(arguments, ToolContext(tool_call_id="c1", tool_name=tool.name))
    [request] = requests
    assert request.headers.get_list("cookie") == ["a=b; sid=1"]
    assert request.headers.get_list("content-type") == ["application/json; charset=utf-8"]


async def test_the_configs_timeout_governs_over_a_clients_own() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(0.5)
        return httpx.Response(200, text="late but in time", headers={"content-type": "text/plain"})

    spec = _spec({"/things": {"operationId": "things"}})
    async with httpx.AsyncClient(transport=httpx.MockTransport(slow), timeout=0.1) as client:
        tool = OpenApiToolAdapter.from_spec(spec, config=OpenApiConfig(timeout=5), client=client)
        result = await tool.tool("things").execute(
            {}, ToolContext(tool_call_id="c1", tool_name="things")
        )
    assert result.text.endswith("late but in time")
