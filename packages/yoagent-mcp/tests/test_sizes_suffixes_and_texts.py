"""Small texts the model and the app read: the size a binary block is shown with, a tool
name's collision suffix within the 64-character bound, an HTTP status, an adapter's repr."""

from __future__ import annotations

import sys

import pytest
from mcp_types import AudioContent, BlobResourceContents, CallToolResult, EmbeddedResource, Tool

from yoagent.mcp import McpClient, McpToolAdapter
from yoagent.mcp._content import converted_content
from yoagent.mcp._exchange import Exchange
from yoagent.mcp._names import MAX_TOOL_NAME, with_suffix


@pytest.mark.parametrize(
    ("base64_length", "shown"),
    [
        (0, "0 bytes"),
        (13_332, "9999 bytes"),  # 13332 * 3 // 4 = 9999
        (13_334, "9 KiB"),  # 10000 bytes: KiB from here, rounded down
        (1_398_104, "1024 KiB"),  # 1 MiB and 2 bytes
    ],
)
def test_a_binary_blocks_size_is_shown_in_bytes_below_10000_then_in_whole_kib(
    base64_length: int, shown: str
) -> None:
    data = "A" * base64_length
    result = CallToolResult(
        content=[
            AudioContent(type="audio", data=data, mime_type="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///b", blob=data, mime_type="x/y"),
            ),
        ]
    )
    assert [block.text for block in converted_content(result)] == [  # type: ignore[union-attr]
        f"[audio: audio/wav, {shown}]",
        f"[resource <file:///b>: x/y, {shown}]",
    ]


def test_base64_padding_is_not_counted() -> None:
    result = CallToolResult(content=[AudioContent(type="audio", data="AAE=", mime_type="a/b")])
    assert converted_content(result)[0].text == "[audio: a/b, 2 bytes]"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "number", "made"),
    [
        ("search", 2, "search_2"),
        ("a" * 64, 2, "a" * 62 + "_2"),
        ("b" * 63, 12, "b" * 61 + "_12"),
    ],
)
def test_a_collision_suffix_keeps_the_name_within_64_characters(
    name: str, number: int, made: str
) -> None:
    assert with_suffix(name, number) == made
    assert len(made) <= MAX_TOOL_NAME


@pytest.mark.parametrize(
    ("exchange", "said"),
    [
        (Exchange(status=503, reason="Service Unavailable"), "HTTP 503 Service Unavailable"),
        (Exchange(status=599), "HTTP 599"),  # no reason phrase: no trailing space
        (Exchange(status=307, refused_redirect="not followed"), "not followed"),
    ],
)
def test_an_exchange_describes_its_status_or_its_refused_redirect(
    exchange: Exchange, said: str
) -> None:
    assert exchange.describe() == said


@pytest.mark.parametrize(
    ("status", "failed"), [(None, False), (199, True), (200, False), (299, False), (300, True)]
)
def test_an_exchange_failed_outside_2xx(status: int | None, failed: bool) -> None:
    assert Exchange(status=status).failed is failed


def test_an_adapter_not_renamed_shows_its_name_and_server_only() -> None:
    client = McpClient.stdio(sys.executable, ["server.py"])
    adapter = McpToolAdapter(client, Tool(name="ok-name", input_schema={"type": "object"}))
    assert repr(adapter) == "McpToolAdapter('ok-name', server='python server.py')"


def test_an_error_results_text_joins_its_blocks_by_line_and_names_its_images() -> None:
    from mcp_types import ImageContent, TextContent

    from yoagent.mcp._content import error_text

    result = CallToolResult(
        content=[
            TextContent(type="text", text="first"),
            ImageContent(type="image", data="AA==", mime_type="image/png"),
            TextContent(type="text", text="last"),
        ],
        is_error=True,
    )
    assert error_text(result) == "first\n[image: image/png]\nlast"
    empty = CallToolResult(content=[], is_error=True)
    assert error_text(empty) == "the tool reported an error without saying what"
