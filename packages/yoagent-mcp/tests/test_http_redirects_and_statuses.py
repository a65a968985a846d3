"""Streamable HTTP against the Python SDK's server behind a gateway: redirects by a policy
(same-origin by default), and the HTTP status of a failed exchange on the error."""

from __future__ import annotations

from typing import Literal
from urllib.request import urlopen

import pytest

from yoagent.mcp import McpClient, McpError

KEY_IN_TARGET = "sk-live-elsewhere0123456789"
Redirects = Literal["same-origin", "none", "any"]


def origin_of(url: str) -> str:
    return url.removesuffix("/mcp")


def hits(url: str) -> int:
    """How many requests the test server behind ``url`` got (its gateway counts them)."""
    with urlopen(origin_of(url) + "/hits", timeout=10) as answer:
        return int(answer.read())


async def test_a_redirect_within_the_origin_is_followed(py_http_url: str) -> None:
    async with McpClient.http(origin_of(py_http_url) + "/moved") as client:
        assert client.server_name == "py-test-server"
        result = await client.call_tool("echo", {"text": "moved"})
    assert result.content[0].text == "moved"


async def test_a_redirect_to_another_origin_is_refused_by_default(
    py_http_url: str, other_py_http_url: str
) -> None:
    origin, other = origin_of(py_http_url), origin_of(other_py_http_url)
    target = f"{other}/{KEY_IN_TARGET}/mcp"

    with pytest.raises(McpError) as refused:
        async with McpClient.http(f"{origin}/elsewhere?to={target}"):
            pass

    assert str(refused.value) == (
        f"MCP server {origin}: initialize failed: the server redirected to {other} "
        f"(HTTP 307), another origin; redirects='same-origin' follows only redirects within "
        f"{origin} (pass redirects='any' to follow it)"
    )
    assert refused.value.http_status == 307
    assert hits(other_py_http_url) == 0


async def test_redirects_none_refuses_even_a_redirect_within_the_origin(py_http_url: str) -> None:
    origin = origin_of(py_http_url)

    with pytest.raises(McpError) as refused:
        async with McpClient.http(origin + "/moved", redirects="none"):
            pass

    assert str(refused.value) == (
        f"MCP server {origin}: initialize failed: the server redirected to {origin} "
        "(HTTP 307); redirects='none' follows none"
    )
    assert refused.value.http_status == 307


@pytest.mark.parametrize("redirects", ["same-origin", "any"])
async def test_a_redirect_that_would_make_the_post_a_get_is_refused(
    py_http_url: str, redirects: Redirects
) -> None:
    origin = origin_of(py_http_url)

    with pytest.raises(McpError) as refused:
        async with McpClient.http(origin + "/see-other", redirects=redirects):
            pass

    assert str(refused.value) == (
        f"MCP server {origin}: initialize failed: the server redirected to {origin} "
        "(HTTP 303), which would turn the POST into a GET: only 307 and 308 keep it"
    )
    assert refused.value.http_status == 303


async def test_redirects_any_follows_to_another_origin(
    py_http_url: str, other_py_http_url: str
) -> None:
    origin = origin_of(py_http_url)

    async with McpClient.http(
        f"{origin}/elsewhere?to={other_py_http_url}", redirects="any"
    ) as client:
        result = await client.call_tool("echo", {"text": "far away"})

    assert result.content[0].text == "far away"
    assert hits(other_py_http_url) > 0


def test_an_unknown_redirect_policy_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="redirects must be 'same-origin', 'none' or 'any'"):
        McpClient.http("http://127.0.0.1:1/mcp", redirects="always")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (503, "HTTP 503 Service Unavailable: Server returned an error response (error -32603)"),
        (404, "HTTP 404 Not Found: Session terminated (error -32600)"),
    ],
)
async def test_the_http_status_of_a_failed_call_is_on_its_error(
    py_http_url: str, code: int, said: str
) -> None:
    async with McpClient.http(py_http_url) as client:
        with pytest.raises(McpError) as failed:
            await client.call_tool("http_status", {"code": code})
        still = await client.call_tool("echo", {"text": "still here"})

    assert str(failed.value) == (
        f"MCP server {origin_of(py_http_url)}: tools/call http_status failed: {said}"
    )
    assert failed.value.http_status == code
    assert still.content[0].text == "still here"


async def test_a_refused_handshake_names_its_status(py_http_url: str) -> None:
    origin = origin_of(py_http_url)

    with pytest.raises(McpError) as refused:
        async with McpClient.http(origin + "/status/401"):
            pass

    assert str(refused.value) == (
        f"MCP server {origin}: initialize failed: HTTP 401 Unauthorized: Server returned an "
        "error response (error -32603)"
    )
    assert refused.value.http_status == 401


async def test_an_error_that_is_not_an_http_one_has_no_status(py_http_url: str) -> None:
    async with McpClient.http(py_http_url, call_timeout=1) as client:
        with pytest.raises(McpError) as slow:
            await client.call_tool("hang", {"seconds": 600})

    assert slow.value.http_status is None
