"""Responses and documents at their edges: which statuses are results, bodies at the size
cap and the excerpt length, content types with parameters, charsets, bytes that do not
decode, and documents fetched in pieces, at their size bound, or refused in words (from
the mutation triage: each test pins a behaviour a surviving mutant changed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from yoagent.core import CancelToken, ToolContext, ToolError, ToolResult
from yoagent.openapi import OpenApiConfig, OpenApiError, OpenApiToolAdapter, OperationFilter, _load

ORIGIN = "http://api.example"
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Echo", "version": "1"},
    "servers": [{"url": ORIGIN}],
    "paths": {
        "/thing": {"get": {"operationId": "thing", "responses": {"200": {"description": "ok"}}}},
        "/other": {"get": {"operationId": "other", "responses": {"200": {"description": "ok"}}}},
    },
}

Handler = Callable[[httpx.Request], httpx.Response]


def _answer(status: int, body: bytes, content_type: str) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"content-type": content_type})

    return handle


class Pieces(httpx.AsyncByteStream):
    """A body sent as separate chunks."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk


def _pieces(status: int, content_type: str, *chunks: bytes) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, stream=Pieces(*chunks), headers={"content-type": content_type}
        )

    return handle


async def _outcome(handler: Handler, **config: Any) -> ToolResult:
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        adapter = OpenApiToolAdapter.from_spec(SPEC, config=OpenApiConfig(**config), client=client)
        tool = adapter.tool("thing")
        return await tool.execute({}, ToolContext(tool_call_id="c1", tool_name=tool.name))


async def _text(handler: Handler, **config: Any) -> str:
    result = await _outcome(handler, **config)
    return result.content[0].text  # type: ignore[union-attr]


async def _error(handler: Handler, **config: Any) -> str:
    with pytest.raises(ToolError) as raised:
        await _outcome(handler, **config)
    return str(raised.value)


async def test_a_300_is_an_error_and_a_299_a_result() -> None:
    text = await _error(_answer(300, b"pick one", "text/plain"))
    assert text.startswith("HTTP 300 Multiple Choices from GET /thing")
    assert (await _text(_answer(299, b"fine", "text/plain"))).split("\n")[0] == "HTTP 299"


async def test_an_error_body_of_exactly_the_excerpt_length_is_not_cut() -> None:
    text = await _error(_answer(500, b"x" * 10, "text/plain"), error_excerpt_chars=10)
    assert text.endswith("\n\n" + "x" * 10)


async def test_a_body_of_exactly_the_cap_is_whole_and_one_over_is_cut() -> None:
    whole = await _outcome(_pieces(200, "text/plain", b"abcd", b"efgh"), max_response_bytes=8)
    assert whole.details["truncated"] is False
    assert whole.content[0].text.endswith("\n\nabcdefgh")  # type: ignore[union-attr]
    cut = await _outcome(_pieces(200, "text/plain", b"abcd", b"efgh", b"i"), max_response_bytes=8)
    assert cut.details["truncated"] is True
    assert cut.details["bytes"] == 8
    text = cut.content[0].text  # type: ignore[union-attr]
    assert "\n\nabcdefgh\n\n[response truncated: the body is larger than 8 bytes" in text


async def test_a_body_in_many_small_chunks_is_still_cut_at_the_cap() -> None:
    chunks = [b"ab"] * 10
    cut = await _outcome(_pieces(200, "text/plain", *chunks), max_response_bytes=8)
    assert cut.details["truncated"] is True
    assert cut.details["bytes"] == 8


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json; charset=utf-8",
        "application/json; charset=utf-8; profile=x",
        "text/csv",
        "application/vnd.api+json",
        "application/atom+xml",
        "application/openapi+yaml",
    ],
)
async def test_text_content_types_are_shown_as_text(content_type: str) -> None:
    text = await _text(_answer(200, b'{"a": 1}', content_type))
    assert text.endswith('\n\n{"a": 1}')


async def test_a_binary_body_cut_at_the_cap_says_more_was_not_read() -> None:
    text = await _text(_answer(200, b"\x89PNG" * 4, "image/png"), max_response_bytes=8)
    assert text.endswith("\n\n[8 bytes of image/png (more not read): binary content is not shown]")


async def test_the_charset_the_response_names_decodes_it() -> None:
    text = await _text(_answer(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1"))
    assert text.endswith("\n\ncafé")


async def test_an_unknown_charset_falls_back_to_utf8_with_replacement() -> None:
    body = "héllo ".encode() + b"\xff"
    text = await _text(_answer(200, body, "text/plain; charset=no-such-charset"))
    assert text.endswith("\n\nhéllo \ufffd")


async def test_bytes_that_do_not_decode_are_replaced_not_refused() -> None:
    text = await _text(_answer(200, b"ok \xff and \xc3", "text/plain"))
    assert text.endswith("\n\nok \ufffd and \ufffd")


# -- documents -----------------------------------------------------------------------------


def _client(handler: Handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def _from_url(handler: Handler, url: str = f"{ORIGIN}/secret-path/openapi.json") -> Any:
    async with _client(handler) as client:
        return await OpenApiToolAdapter.from_url(url, client=client)


async def _refused(handler: Handler, url: str = f"{ORIGIN}/secret-path/openapi.json") -> str:
    with pytest.raises(OpenApiError) as raised:
        await _from_url(handler, url)
    return str(raised.value)


async def test_a_document_in_pieces_from_any_2xx_over_https_is_read() -> None:
    text = json.dumps(SPEC).encode()
    middle = len(text) // 2
    handler = _pieces(203, "application/json", text[:middle], text[middle:])
    adapter = await _from_url(handler, "https://api.example/openapi.json")
    assert [tool.name for tool in adapter.tools] == ["thing", "other"]


async def test_a_document_at_the_size_bound_is_read_and_one_byte_more_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = json.dumps(SPEC).encode()
    monkeypatch.setattr(_load, "MAX_DOCUMENT_BYTES", len(text))
    half = len(text) // 2
    adapter = await _from_url(_pieces(200, "application/json", text[:half], text[half:]))
    assert len(adapter.tools) == 2
    padded = text + b" "
    refused = await _refused(_pieces(200, "application/json", padded[:half], padded[half:]))
    assert refused == f"{ORIGIN}: the document is larger than {len(text)} bytes"


async def test_a_document_that_is_not_a_mapping_is_named_by_its_origin_only() -> None:
    refused = await _refused(_answer(200, b"[1]", "application/json"))
    assert refused == f"{ORIGIN}: the document is a list, not a mapping"
    refused = await _refused(_answer(200, b"\xff\xfe", "application/json"))
    assert refused == f"{ORIGIN}: the document is not UTF-8 text"


async def test_a_url_that_is_not_http_is_refused_in_words() -> None:
    refused = await _refused(_answer(200, b"{}", "application/json"), "ftp://api.example/x")
    assert refused == "cannot fetch ftp://api.example: only http and https URLs are fetched"


def test_a_document_that_does_not_parse_quotes_the_first_line_of_why() -> None:
    with pytest.raises(OpenApiError) as raised:
        OpenApiToolAdapter.from_str("a: [")
    assert str(raised.value).startswith("the document: not valid JSON or YAML (while parsing")
    with pytest.raises(OpenApiError) as raised:
        OpenApiToolAdapter.from_str("[1]")
    assert str(raised.value) == "the document: the document is a list, not a mapping"


async def test_from_str_passes_its_filter_and_client_on() -> None:
    sent: list[httpx.Request] = []

    def keep(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="ok")

    async with _client(keep) as client:
        adapter = OpenApiToolAdapter.from_str(
            json.dumps(SPEC), filter=OperationFilter(operation_ids=["other"]), client=client
        )
        assert [tool.name for tool in adapter.tools] == ["other"]
        tool = adapter.tool("other")
        await tool.execute({}, ToolContext(tool_call_id="c1", tool_name=tool.name))
    assert [str(request.url) for request in sent] == [f"{ORIGIN}/other"]


async def test_a_body_without_a_content_type_is_shown_as_text() -> None:
    def bare(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"plain")

    assert (await _text(bare)).endswith("\n\nplain")


async def test_a_redirect_is_not_followed_even_by_a_client_that_follows_them() -> None:
    def moved(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/elsewhere":
            return httpx.Response(200, text="followed")
        return httpx.Response(302, headers={"location": f"{ORIGIN}/elsewhere"})

    transport = httpx.MockTransport(moved)
    async with httpx.AsyncClient(transport=transport, follow_redirects=True) as client:
        tool = OpenApiToolAdapter.from_spec(SPEC, client=client).tool("thing")
        with pytest.raises(ToolError) as raised:
            await tool.execute({}, ToolContext(tool_call_id="c1", tool_name=tool.name))
    assert str(raised.value).startswith("HTTP 302 Found from GET /thing")


async def _slow(request: httpx.Request) -> httpx.Response:
    await anyio.sleep(5)
    return httpx.Response(200, text="late")


async def test_the_timeout_bounds_the_whole_exchange() -> None:
    with anyio.fail_after(3):
        text = await _error(_slow, timeout=0.1)
    assert text == "GET /thing: no complete response within 0.1 s (timed out)"


async def test_a_call_cancelled_in_flight_says_so() -> None:
    token = CancelToken()
    errors: list[ToolError] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(_slow)) as client:
        tool = OpenApiToolAdapter.from_spec(SPEC, client=client).tool("thing")
        ctx = ToolContext(tool_call_id="c1", tool_name=tool.name, cancel=token)
        with anyio.fail_after(3):
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_soon, token)
                try:
                    await tool.execute({}, ctx)
                except ToolError as error:
                    errors.append(error)
    assert [str(error) for error in errors] == ["GET /thing: cancelled"]


async def _cancel_soon(token: CancelToken) -> None:
    await anyio.sleep(0.05)
    token.cancel()
