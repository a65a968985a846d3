"""OpenAPI tools calling a real Petstore on loopback: auth, errors, limits, bad arguments."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx
import pytest
from openapi_testing import API_KEY, PETSTORE_30, PetstoreServer

from yoagent.core import ToolContext, ToolError, ToolResult
from yoagent.openapi import (
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
    OpenApiAuth,
    OpenApiConfig,
    OpenApiTool,
    OpenApiToolAdapter,
)


def adapter_for(
    server: PetstoreServer,
    auth: OpenApiAuth | None = None,
    *,
    client: httpx.AsyncClient | None = None,
    **options: Any,
) -> OpenApiToolAdapter:
    config = OpenApiConfig(
        base_url=server.origin + "/api/v3",
        auth=auth if auth is not None else ApiKeyAuth("api_key", API_KEY),
        **options,
    )
    return OpenApiToolAdapter.from_file(PETSTORE_30, config=config, client=client)


async def call(tool: OpenApiTool, **arguments: Any) -> ToolResult:
    return await tool.execute(arguments, ToolContext(tool_call_id="c1", tool_name=tool.name))


async def failure(tool: OpenApiTool, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await call(tool, **arguments)
    return caught.value


# --- round trips -----------------------------------------------------------------------------


async def test_a_call_round_trips_with_the_key_checked_by_the_server(
    server: PetstoreServer,
) -> None:
    adapter = adapter_for(server)
    result = await call(adapter.tool("getPetById"), petId=1)

    assert result.text.splitlines()[0] == "HTTP 200 OK"
    assert json.loads(result.text.split("\n\n", 1)[1]) == server.pets[1]
    assert result.details["status"] == 200
    (request,) = server.requests
    assert (request.method, request.path) == ("GET", "/api/v3/pet/1")
    assert request.headers["api_key"] == API_KEY


async def test_a_json_body_is_sent_as_json_and_the_created_pet_comes_back(
    server: PetstoreServer,
) -> None:
    adapter = adapter_for(server)
    pet = {"name": "Fido", "photoUrls": ["http://img/1"], "status": "pending"}

    result = await call(adapter.tool("addPet"), body=pet)

    request = server.requests[-1]
    assert request.headers["content-type"] == "application/json"
    assert request.json() == pet
    created = json.loads(result.text.split("\n\n", 1)[1])
    assert created == {**pet, "id": 3}
    assert server.pets[3]["name"] == "Fido"


async def test_query_parameters_reach_the_server(server: PetstoreServer) -> None:
    adapter = adapter_for(server)

    result = await call(adapter.tool("findPetsByStatus"), status="sold")

    assert server.requests[-1].query == [("status", "sold")]
    assert [pet["name"] for pet in json.loads(result.text.split("\n\n", 1)[1])] == ["Tom"]


@pytest.mark.parametrize(
    ("auth", "where"),
    [
        (ApiKeyAuth("api_key", API_KEY), "header"),
        (ApiKeyAuth("api_key", API_KEY, location="query"), "query"),
        (ApiKeyAuth("api_key", API_KEY, location="cookie"), "cookie"),
        (BearerAuth(API_KEY), "bearer"),
        (BasicAuth("pet-owner", API_KEY), "basic"),
    ],
)
async def test_every_kind_of_credential_is_accepted_by_the_server(
    server: PetstoreServer, auth: OpenApiAuth, where: str
) -> None:
    adapter = adapter_for(server, auth)

    result = await call(adapter.tool("getPetById"), petId=2)

    assert result.details["status"] == 200
    request = server.requests[-1]
    assert server.credential(request) is not None
    if where == "query":
        assert ("api_key", API_KEY) in request.query
    elif where == "bearer":
        assert request.headers["authorization"] == f"Bearer {API_KEY}"
    elif where == "basic":
        assert request.headers["authorization"].startswith("Basic ")


async def test_without_the_key_the_server_refuses_and_the_model_reads_a_401(
    server: PetstoreServer,
) -> None:
    adapter = OpenApiToolAdapter.from_file(
        PETSTORE_30, config=OpenApiConfig(base_url=server.origin + "/api/v3")
    )

    error = await failure(adapter.tool("getPetById"), petId=1)

    assert str(error).startswith("HTTP 401 Unauthorized from GET /pet/{petId}")
    assert "missing or wrong api_key" in str(error)
    assert error.details["status"] == 401


async def test_an_injected_client_is_used_and_left_open(server: PetstoreServer) -> None:
    seen: list[str] = []

    async def record(request: httpx.Request) -> None:
        seen.append(request.url.path)

    async with httpx.AsyncClient(event_hooks={"request": [record]}) as client:
        adapter = adapter_for(server, client=client)
        await call(adapter.tool("getPetById"), petId=1)
        await call(adapter.tool("getPetById"), petId=2)
        assert not client.is_closed
    assert seen == ["/api/v3/pet/1", "/api/v3/pet/2"]


# --- errors from the server --------------------------------------------------------------------


async def test_a_404_is_an_error_result_quoting_the_body(server: PetstoreServer) -> None:
    error = await failure(adapter_for(server).tool("getPetById"), petId=77)

    text = str(error)
    assert text.splitlines()[0] == "HTTP 404 Not Found from GET /pet/{petId}"
    assert "content-type: application/json" in text
    assert '{"message": "Pet not found"}' in text
    assert error.details == {
        "status": 404,
        "content_type": "application/json",
        "bytes": 28,
        "truncated": False,
    }


async def test_a_500_is_an_error_result_quoting_the_body(server: PetstoreServer) -> None:
    error = await failure(adapter_for(server).tool("getPetById"), petId=500)

    assert str(error).startswith("HTTP 500 Internal Server Error from GET /pet/{petId}")
    assert "the pet database is on fire" in str(error)


async def test_an_error_body_is_cut_to_the_excerpt_length(server: PetstoreServer) -> None:
    error = await failure(adapter_for(server, error_excerpt_chars=10).tool("getPetById"), petId=77)

    body = str(error).split("\n\n", 1)[1]
    assert body == '{"message"… [18 more characters]'


async def test_a_refused_connection_is_an_error_result_naming_the_request() -> None:
    with PetstoreServer() as gone:
        origin = gone.origin
    adapter = OpenApiToolAdapter.from_file(
        PETSTORE_30, config=OpenApiConfig(base_url=origin + "/api/v3")
    )

    error = await failure(adapter.tool("getPetById"), petId=1)

    assert str(error).startswith("GET /pet/{petId}: the request failed (ConnectError")


async def test_a_redirect_is_not_followed(server: PetstoreServer) -> None:
    def redirect(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "http://elsewhere.invalid/steal"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(redirect)) as client:
        adapter = adapter_for(server, client=client)
        error = await failure(adapter.tool("getPetById"), petId=1)

    assert str(error).startswith("HTTP 302 Found from GET /pet/{petId}")
    assert "location: http://elsewhere.invalid/steal" in str(error)


# --- limits ------------------------------------------------------------------------------------


async def test_a_call_that_outlives_its_timeout_ends_with_a_timeout_error(
    server: PetstoreServer,
) -> None:
    adapter = adapter_for(server, timeout=0.5)
    started = time.monotonic()

    error = await failure(adapter.tool("getOrderById"), orderId=999)

    assert time.monotonic() - started < 10  # the server would have taken 30 s
    assert str(error) == "GET /store/order/{orderId}: no complete response within 0.5 s (timed out)"


async def test_a_huge_response_is_cut_at_the_cap_and_says_so(server: PetstoreServer) -> None:
    adapter = adapter_for(server, max_response_bytes=100_000)
    started = time.monotonic()

    result = await call(adapter.tool("findPetsByTags"), tags=["a"])

    assert time.monotonic() - started < 20
    assert result.details["truncated"] is True
    assert result.details["bytes"] == 100_000
    assert result.text.endswith(
        "[response truncated: the body is larger than 100,000 bytes; only the first 100,000 "
        "are shown]"
    )
    assert len(result.text) < 101_000
    assert server.huge_done.wait(10)
    assert server.huge_sent < server.huge_bytes  # the client hung up, it did not read on


async def test_a_binary_body_is_described_not_shown(server: PetstoreServer) -> None:
    def png(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "image/png"}, content=b"\x89PNG\0" * 10)

    async with httpx.AsyncClient(transport=httpx.MockTransport(png)) as client:
        result = await call(adapter_for(server, client=client).tool("getPetById"), petId=1)

    assert result.text == (
        "HTTP 200 OK\ncontent-type: image/png\n\n"
        "[50 bytes of image/png: binary content is not shown]"
    )


async def test_an_empty_body_says_so(server: PetstoreServer) -> None:
    result = await call(adapter_for(server).tool("deletePet"), petId=2)

    assert result.text == "HTTP 200 OK\n\n(empty body)"
    assert 2 not in server.pets


# --- bad arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("getPetById", {}, "(arguments): 'petId' is a required property"),
        ("getPetById", {"petId": "one"}, "petId: 'one' is not of type 'integer'"),
        ("getPetById", {"petId": 1, "color": "red"}, "Additional properties are not allowed"),
        ("findPetsByStatus", {"status": "lost"}, "status: 'lost' is not one of"),
        ("addPet", {"body": {"name": "x"}}, "body: 'photoUrls' is a required property"),
    ],
)
async def test_bad_arguments_are_an_error_result_and_nothing_is_sent(
    server: PetstoreServer, tool: str, arguments: dict[str, Any], problem: str
) -> None:
    adapter = adapter_for(server)

    error = await failure(adapter.tool(tool), **arguments)

    assert str(error).startswith(f"invalid arguments for {tool}: ")
    assert problem in str(error)
    assert server.requests == []


async def test_a_path_argument_cannot_climb_out_of_its_segment(server: PetstoreServer) -> None:
    adapter = adapter_for(server)

    for hostile in ("..", "../../pet/1"):
        with pytest.raises(ToolError, match="HTTP 404"):  # the Petstore has no users
            await call(adapter.tool("getUserByName"), username=hostile)

    paths = [request.path for request in server.requests]
    assert paths == ["/api/v3/user/%2E%2E", "/api/v3/user/..%2F..%2Fpet%2F1"]


async def test_an_empty_path_argument_is_refused_unsent(server: PetstoreServer) -> None:
    error = await failure(adapter_for(server).tool("getUserByName"), username="")

    assert (
        str(error)
        == "invalid arguments for getUserByName: path parameter 'username' must not be empty"
    )
    assert server.requests == []


# --- secrets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "auth",
    [
        ApiKeyAuth("api_key", API_KEY),
        ApiKeyAuth("api_key", API_KEY, location="query"),
        BearerAuth(API_KEY),
        BasicAuth("pet-owner", API_KEY),
    ],
)
async def test_a_key_the_server_echoes_is_redacted_from_the_error(
    server: PetstoreServer, auth: OpenApiAuth
) -> None:
    error = await failure(adapter_for(server, auth).tool("getPetById"), petId=401)

    text = str(error)
    assert "may not see pet 401" in text
    assert "[redacted]" in text
    assert API_KEY not in text
    assert "cGV0LW93bmVy" not in text  # base64 of "pet-owner", the start of the basic token


async def test_the_key_is_in_no_schema_description_result_or_log(
    server: PetstoreServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    adapter = adapter_for(server, ApiKeyAuth("api_key", API_KEY, location="query"))
    shown = json.dumps([[t.name, t.description, t.parameters] for t in adapter.tools])

    ok = await call(adapter.tool("getPetById"), petId=1)
    refused = await failure(adapter.tool("getPetById"), petId=401)

    assert "HTTP Request: GET" in caplog.text  # httpx logged the URL (with the key in it)
    for text in (shown, ok.text, json.dumps(ok.details), str(refused), caplog.text, repr(adapter)):
        assert API_KEY not in text
    assert API_KEY not in repr(adapter.config)


async def test_a_key_with_url_special_characters_is_redacted_in_every_encoding(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = "pk/with+plus=and space?&more"
    caplog.set_level(logging.DEBUG)
    with PetstoreServer(api_key=key) as server:
        adapter = adapter_for(server, ApiKeyAuth("api_key", key, location="query"))
        ok = await call(adapter.tool("getPetById"), petId=1)
        refused = await failure(adapter.tool("getPetById"), petId=401)

    assert ok.details["status"] == 200
    assert "[redacted] may not see pet 401" in str(refused)
    assert "HTTP Request: GET" in caplog.text
    for form in ("with+plus", "with%2Bplus", "and space", "and%20space", "and+space"):
        assert form not in caplog.text + str(refused) + ok.text, form


async def test_a_parameter_the_credential_fills_is_not_offered_to_the_model() -> None:
    with_key = OpenApiToolAdapter.from_file(
        PETSTORE_30,
        config=OpenApiConfig(base_url="http://127.0.0.1:1", auth=ApiKeyAuth("api_key", API_KEY)),
    )
    without = OpenApiToolAdapter.from_file(
        PETSTORE_30, config=OpenApiConfig(base_url="http://127.0.0.1:1")
    )

    assert "api_key" in without.tool("deletePet").parameters["properties"]
    assert "api_key" not in with_key.tool("deletePet").parameters["properties"]


async def test_extra_headers_are_sent_and_redacted_like_credentials(
    server: PetstoreServer,
) -> None:
    headers = {"api_key": API_KEY, "x-trace": "trace-abc-123"}
    adapter = adapter_for(server, headers=headers)
    headers["api_key"] = "changed-after-the-fact"  # the config keeps its own copy

    error = await failure(adapter.tool("getPetById"), petId=401)

    assert server.requests[-1].headers["x-trace"] == "trace-abc-123"
    assert API_KEY not in str(error)
    assert API_KEY not in repr(adapter.config)
    assert "headers=['api_key', 'x-trace']" in repr(adapter.config)


async def test_a_key_in_the_reason_phrase_is_redacted(server: PetstoreServer) -> None:
    def rude(request: httpx.Request) -> httpx.Response:
        reason = f"Key {API_KEY} Refused".encode()
        return httpx.Response(403, extensions={"reason_phrase": reason}, text="no")

    async with httpx.AsyncClient(transport=httpx.MockTransport(rude)) as client:
        error = await failure(adapter_for(server, client=client).tool("getPetById"), petId=1)

    assert str(error).startswith("HTTP 403 Key [redacted] Refused from GET /pet/{petId}")
