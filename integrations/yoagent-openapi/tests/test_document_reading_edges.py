"""Reading a document at its edges: JSON told from YAML by its first character, YAML
aliases kept shared, the size cap counted over the whole body of a fetch, and a fetch
with a client of its own bounded in time. From the mutation triage: each test pins a
behaviour a surviving mutant changed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import anyio
import httpx
import pytest
from test_response_edges import Pieces

from yoagent.openapi import OpenApiError, _load

URL = "http://api.test/openapi.json"


@pytest.mark.parametrize("lead", ["", "\n  \t"])
def test_a_document_starting_with_a_brace_is_read_as_json(lead: str) -> None:
    # JSON reads 1e3 as a number; YAML 1.1 reads it as the string "1e3".
    data = _load.parse_text(lead + '{"openapi": "3.1.0", "x-n": 1e3}', origin="doc")
    assert data["x-n"] == 1000.0


def test_yaml_flow_style_that_is_not_json_is_still_read() -> None:
    data = _load.parse_text("{openapi: 3.1.0, x-n: 1e3}", origin="doc")
    assert data == {"openapi": "3.1.0", "x-n": "1e3"}


def test_a_yaml_alias_is_converted_once_and_stays_shared() -> None:
    text = (
        "openapi: 3.1.0\nx-list: &l [a, {200: b}]\nx-map: &m {201: c}\nx-uses: [*l, *l, *m, *m]\n"
    )
    data = _load.parse_text(text, origin="doc")
    first, second, third, fourth = data["x-uses"]
    assert first == ["a", {"200": "b"}]
    assert first is second and first is data["x-list"]
    assert third == {"201": "c"} and third is fourth


async def test_the_size_cap_counts_the_whole_fetched_body_not_each_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_load, "MAX_DOCUMENT_BYTES", 100)

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Pieces(*([b"x" * 40] * 3)))

    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        with pytest.raises(OpenApiError) as caught:
            await _load.fetch(URL, client)
    assert str(caught.value) == "http://api.test: the document is larger than 100 bytes"

    def fits(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Pieces(b"{", b" " * 98, b"}"))

    async with httpx.AsyncClient(transport=httpx.MockTransport(fits)) as client:
        assert await _load.fetch(URL, client) == ("{" + " " * 98 + "}", URL)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that takes connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/openapi.json"
    finally:
        listener.close()
        for connection in held:
            connection.close()


async def test_a_fetch_with_its_own_client_gives_up_after_the_fetch_timeout(
    silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_load, "FETCH_TIMEOUT", 0.3)
    with anyio.fail_after(10), pytest.raises(OpenApiError) as caught:
        await _load.fetch(silent_server, None)
    origin = silent_server.removesuffix("/openapi.json")
    assert str(caught.value) == f"cannot fetch the document from {origin}: no answer within 0.3 s"


async def test_a_fetch_with_a_given_client_that_times_out_says_so(silent_server: str) -> None:
    origin = silent_server.removesuffix("/openapi.json")
    async with httpx.AsyncClient(timeout=0.3) as client:
        with anyio.fail_after(10), pytest.raises(OpenApiError) as caught:
            await _load.fetch(silent_server, client)
    assert str(caught.value) == (
        f"cannot fetch the document from {origin}: no answer within the client's timeout"
    )


def test_yaml_nested_deeper_than_python_can_follow_is_refused_by_name() -> None:
    # Deep enough for the conversion of its keys to run out of stack, not so deep that
    # the YAML parser does first.
    text = "openapi: 3.1.0\nx-deep: " + "[" * 600 + "]" * 600 + "\n"
    with pytest.raises(OpenApiError) as caught:
        _load.parse_text(text, origin="deep.yaml")
    assert str(caught.value) == "deep.yaml: the document is nested too deeply to read"
