"""The headers a caller gives an HTTP client: kept as given when valid, each refusal naming
the header and never its value, and their credentials kept out of what the model reads."""

from __future__ import annotations

from typing import Any

import pytest

from yoagent.core import ToolContext
from yoagent.mcp import McpClient, McpError, McpToolAdapter
from yoagent.mcp._http import checked_headers

ORIGIN = "http://127.0.0.1:1"


def test_valid_headers_are_kept_as_given() -> None:
    given = {
        "Authorization": "Bearer abc",
        "X-Tab": "a\tb",
        "X-Empty": "",
        "!#$%&'*+-.^_`|~09az": "every token character",
        "X-Printable": "".join(chr(code) for code in range(0x20, 0x7F)),
    }
    assert checked_headers(given, ORIGIN) == given
    client = McpClient.http(f"{ORIGIN}/mcp", headers=given)
    assert client._transport.headers == given  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Bad Name", "'Bad Name' is not a valid header name"),
        ("X:Key", "'X:Key' is not a valid header name"),
        ("", "'' is not a valid header name"),
        (b"X-Bytes", "b'X-Bytes' is not a valid header name"),
        ("ACCEPT", "the ACCEPT header is set by the transport and cannot be set"),
        ("mcp-session-id", "the mcp-session-id header is set by the transport and cannot be set"),
    ],
)
def test_a_bad_or_reserved_header_name_is_refused_in_words(name: Any, said: str) -> None:
    with pytest.raises(McpError) as refused:
        checked_headers({name: "sk-value-never-shown"}, ORIGIN)
    assert str(refused.value) == f"MCP server {ORIGIN}: {said}"


@pytest.mark.parametrize("value", ["del\x7f", "nul\x00", "unit\x1f", "naïve", 42, None])
def test_a_value_that_is_not_visible_ascii_text_is_refused_without_echoing_it(
    value: Any,
) -> None:
    with pytest.raises(McpError) as refused:
        checked_headers({"X-Key": value}, ORIGIN)
    assert str(refused.value) == (
        f"MCP server {ORIGIN}: the value of the X-Key header is not visible ASCII"
    )


async def test_header_credentials_echoed_by_the_server_are_redacted_for_the_model(
    py_http_url: str,
) -> None:
    headers = {"Authorization": "Bearer opaquevalue12345", "X-Api-Key": "keyvalue98765"}
    async with McpClient.http(py_http_url, headers=headers) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        echoed = await McpToolAdapter(client, tools["echo"]).execute(
            {"text": "sent opaquevalue12345 and keyvalue98765"},
            ToolContext(tool_call_id="c", tool_name="echo"),
        )
    assert echoed.text == "sent [redacted] and [redacted]"


def test_the_url_is_taken_without_surrounding_space() -> None:
    client = McpClient.http("  http://127.0.0.1:1/mcp \n")
    assert client._transport.url == "http://127.0.0.1:1/mcp"  # type: ignore[attr-defined]
    assert client.name == ORIGIN


def test_the_scheme_is_checked_in_any_case() -> None:
    assert McpClient.http("HTTPS://example.com/mcp").name == "https://example.com"
    with pytest.raises(McpError, match="must start with http:// or https://"):
        McpClient.http("example.com/mcp")
