"""Credentials at their edges: each refusal's words, which parameters a credential fills,
an API-key cookie beside the operation's own cookies, short and basic-auth credentials
scrubbed from what a server echoes, a transport failure's detail, and the agent helpers
passing their options on (from the mutation triage: each test pins a behaviour a
surviving mutant changed)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from yoagent.core import Agent, MockProvider, ModelConfig, ToolContext, ToolError, ToolResult
from yoagent.openapi import (
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
    OpenApiAuth,
    OpenApiConfig,
    OpenApiToolAdapter,
    OperationFilter,
    SkippedOperation,
    with_openapi_file,
    with_openapi_spec,
    with_openapi_url,
)

ORIGIN = "http://api.example"


def _spec(*parameters: dict[str, Any]) -> dict[str, Any]:
    """Two operations: ``echo`` (GET /echo, with ``parameters``) and ``other`` (GET /other)."""
    ok = {"200": {"description": "ok"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Echo", "version": "1"},
        "servers": [{"url": ORIGIN}],
        "paths": {
            "/echo": {
                "get": {"operationId": "echo", "parameters": list(parameters), "responses": ok}
            },
            "/other": {"get": {"operationId": "other", "responses": ok}},
        },
    }


def _cookie(name: str) -> dict[str, Any]:
    return {"name": name, "in": "cookie", "schema": {"type": "string"}}


Handler = Callable[[httpx.Request], httpx.Response]


def _echo(sent: list[httpx.Request]) -> Handler:
    """A server that keeps each request and answers with its credential as it came."""

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        authorization = request.headers.get("authorization", "")
        token = authorization.partition(" ")[2]
        return httpx.Response(200, text=f"you sent {authorization!r}; token={token}")

    return handle


async def _result(adapter: OpenApiToolAdapter, name: str = "echo", **arguments: Any) -> str:
    tool = adapter.tool(name)
    result: ToolResult = await tool.execute(
        arguments, ToolContext(tool_call_id="c1", tool_name=tool.name)
    )
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _with(auth: OpenApiAuth | None, handler: Handler, *parameters: dict[str, Any]) -> Any:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    adapter = OpenApiToolAdapter.from_spec(
        _spec(*parameters), config=OpenApiConfig(auth=auth), client=client
    )
    return adapter, client


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: BearerAuth(""), "the bearer token is empty"),
        (lambda: BearerAuth("tök"), "the bearer token must be printable ASCII"),
        (lambda: BearerAuth("a\nb"), "the bearer token must be printable ASCII"),
        (lambda: BearerAuth("a\x7fb"), "the bearer token must be printable ASCII"),
        (lambda: ApiKeyAuth("", "v"), "the API key's name is empty"),
        (lambda: ApiKeyAuth("n", ""), "the API key is empty"),
        (lambda: ApiKeyAuth("n", "v", "body"), "an API key goes in a header, query or cookie"),
        (lambda: BasicAuth("", "p"), "the username is empty"),
        (lambda: BasicAuth("u", ""), "the password is empty"),
        (lambda: BasicAuth("a:b", "p"), "a basic-auth username cannot contain ':'"),
    ],
)
def test_each_credential_refusal_says_what_is_wrong(
    make: Callable[[], OpenApiAuth], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}") as raised:
        make()
    text = str(raised.value)
    if "printable" in message:
        assert text == f"{message} (no line breaks or control characters)"
    if "goes in" in message:
        assert text == f"{message}, not 'body'"


def test_well_formed_credentials_are_accepted() -> None:
    assert BasicAuth("u", "p").username == "u"
    assert ApiKeyAuth("n", "v", "cookie").location == "cookie"
    assert BearerAuth("~token-1").token == "~token-1"


def test_an_api_key_fills_its_own_parameter_by_the_rules_of_its_place() -> None:
    header = ApiKeyAuth("X-Key", "v-123456789")
    assert header.supplies("header", "x-key")
    assert not header.supplies("cookie", "X-Key")
    query = ApiKeyAuth("api_key", "v-123456789", "query")
    assert query.supplies("query", "api_key")
    assert not query.supplies("query", "API_KEY")
    assert not query.supplies("query", "other")


async def test_a_short_header_key_is_not_scrubbed_as_a_name_value_pair() -> None:
    def said(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="X-Key=v1")

    adapter, client = _with(ApiKeyAuth("X-Key", "v1"), said)
    async with client:
        assert (await _result(adapter)).endswith("\n\nX-Key=v1")


@pytest.mark.parametrize("auth", [BearerAuth("t0ken"), BasicAuth("u", "p")])
def test_an_authorization_credential_fills_only_the_authorization_header(
    auth: OpenApiAuth,
) -> None:
    assert auth.supplies("header", "Authorization")
    assert auth.supplies("header", "authorization")
    assert not auth.supplies("header", "X-Request-Id")
    assert not auth.supplies("query", "authorization")


async def test_other_header_parameters_stay_offered_with_a_bearer_token() -> None:
    header = {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}}
    adapter, client = _with(BearerAuth("t0ken-123456"), _echo([]), header)
    async with client:
        assert list(adapter.tool("echo").parameters["properties"]) == ["X-Request-Id"]


@pytest.mark.parametrize(
    ("arguments", "cookie"),
    [
        ({"theme": "dark"}, "theme=dark; api_key=k-123456789"),
        ({}, "api_key=k-123456789"),
    ],
)
async def test_an_api_key_cookie_goes_beside_the_operations_own(
    arguments: dict[str, Any], cookie: str
) -> None:
    sent: list[httpx.Request] = []
    adapter, client = _with(
        ApiKeyAuth("api_key", "k-123456789", "cookie"), _echo(sent), _cookie("theme")
    )
    async with client:
        await _result(adapter, **arguments)
    assert sent[0].headers["cookie"] == cookie


async def test_a_short_bearer_token_is_scrubbed_where_it_shows_as_one() -> None:
    adapter, client = _with(BearerAuth("q7Z"), _echo([]))
    async with client:
        text = await _result(adapter)
    assert "Bearer q7Z" not in text


async def test_basic_auth_is_scrubbed_as_sent_and_as_its_bare_token() -> None:
    short = base64.b64encode(b"u:p").decode()
    adapter, client = _with(BasicAuth("u", "p"), _echo([]))
    async with client:
        text = await _result(adapter)
    assert f"Basic {short}" not in text

    long = base64.b64encode(b"someone:a-long-password-4711").decode()
    adapter, client = _with(BasicAuth("someone", "a-long-password-4711"), _echo([]))
    async with client:
        text = await _result(adapter)
    assert long not in text


@pytest.mark.parametrize(
    ("error", "why"),
    [
        (httpx.ConnectError("no route to api.example"), "ConnectError: no route to api.example"),
        (httpx.ConnectError(""), "ConnectError"),
    ],
)
async def test_a_transport_failure_says_what_failed(error: Exception, why: str) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise error

    adapter, client = _with(None, fail)
    async with client:
        with pytest.raises(ToolError) as raised:
            await _result(adapter)
    assert str(raised.value) == f"GET /echo: the request failed ({why})"


def test_a_skipped_operation_names_its_id_only_when_it_has_one() -> None:
    assert str(SkippedOperation("get", "/x", None, "why")) == "GET /x: why"
    assert str(SkippedOperation("get", "/x", "getX", "why")) == "GET /x (getX): why"


def _agent() -> Agent:
    return Agent.from_provider(MockProvider(), ModelConfig.mock())


def _options(sent: list[httpx.Request]) -> dict[str, Any]:
    return {
        "config": OpenApiConfig(prefix="api", auth=BearerAuth("t0ken-123456")),
        "filter": OperationFilter(operation_ids=["echo"]),
        "client": httpx.AsyncClient(transport=httpx.MockTransport(_echo(sent))),
    }


async def _check_helper(adapter: OpenApiToolAdapter, sent: list[httpx.Request]) -> None:
    assert [tool.name for tool in adapter.tools] == ["api_echo"]
    await _result(adapter, "api_echo")
    assert sent[-1].headers["authorization"] == "Bearer t0ken-123456"


async def test_the_agent_helpers_pass_config_filter_and_client_on(tmp_path: Any) -> None:
    sent: list[httpx.Request] = []
    await _check_helper(with_openapi_spec(_agent(), _spec(), **_options(sent)), sent)
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(_spec()))
    await _check_helper(with_openapi_file(_agent(), path, **_options(sent)), sent)

    def serve(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/openapi.json":
            return httpx.Response(200, json=_spec())
        return _echo(sent)(request)

    options = _options(sent)
    options["client"] = httpx.AsyncClient(transport=httpx.MockTransport(serve))
    adapter = await with_openapi_url(_agent(), f"{ORIGIN}/openapi.json", **options)
    await _check_helper(adapter, sent)
