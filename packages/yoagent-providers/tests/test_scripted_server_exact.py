"""The scripted test server exactly: Bedrock replies it frames, the answer when nothing is
queued, a reply's own headers, a request without a content length, each client that went
away counted, and one port of its own per server."""

from __future__ import annotations

import http.client
import json
import socket
import struct
from collections.abc import Iterator

import pytest
from bedrock_fixtures import bedrock_config, fixed_env, text_events
from provider_helpers import stream_config

from yoagent.providers import BedrockProvider
from yoagent.providers._eventstream import EventStreamDecoder
from yoagent.providers.testing import (
    EVENTSTREAM_CONTENT_TYPE,
    ScriptedReply,
    ScriptedSseServer,
    bedrock_event_stream,
    bedrock_reply,
)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedSseServer]:
    # One server for the module: each one closed waits out its serve_forever poll (0.5 s).
    with ScriptedSseServer() as running:
        yield running


def address(server: ScriptedSseServer) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").split(":")
    return host, int(port)


def post(server: ScriptedSseServer) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(*address(server), timeout=5)
    connection.request("POST", "/any", body=b"{}")
    return connection.getresponse()


def test_a_bedrock_event_stream_is_one_json_event_frame_per_event() -> None:
    events = [("messageStart", {"role": "assistant"}), ("messageStop", {"stopReason": "end_turn"})]
    frames = EventStreamDecoder().feed(bedrock_event_stream(events))
    assert [(f.headers, json.loads(f.payload)) for f in frames] == [
        (
            {":event-type": name, ":content-type": "application/json", ":message-type": "event"},
            payload,
        )
        for name, payload in events
    ]


async def test_a_bedrock_reply_is_served_as_an_eventstream_the_provider_reads(
    server: ScriptedSseServer,
) -> None:
    reply = bedrock_reply(text_events("scripted"))
    assert (reply.status, reply.headers) == (200, {"content-type": EVENTSTREAM_CONTENT_TYPE})
    server.enqueue(reply)
    model = bedrock_config(base_url=server.url, api_key="bedrock-api-key-test")
    env = fixed_env(AWS_REGION="us-east-1")
    async with BedrockProvider(model, env=env) as provider:
        message = await provider.stream(stream_config(model), lambda _: None)
    assert message.text == "scripted"
    assert server.requests[-1].json()["messages"][0]["content"][0] == {"text": "hello"}


def test_with_nothing_queued_the_answer_is_a_json_500_and_a_reply_sends_its_own_headers(
    server: ScriptedSseServer,
) -> None:
    empty = post(server)
    assert empty.status == 500
    assert empty.getheader("content-type") == "application/json"
    assert empty.read() == b'{"error": "no reply scripted"}'
    server.enqueue(ScriptedReply([b"ok"], headers={"x-scripted": "yes"}))
    scripted = post(server)
    assert (scripted.getheader("x-scripted"), scripted.read()) == ("yes", b"ok")


def test_a_request_without_a_content_length_is_recorded_with_an_empty_body(
    server: ScriptedSseServer,
) -> None:
    server.enqueue(b"data: {}\n\n")
    with socket.create_connection(address(server), timeout=5) as raw:
        raw.sendall(b"POST /bare HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert (server.requests[-1].path, server.requests[-1].body) == ("/bare", b"")


def test_every_client_that_goes_away_mid_reply_is_counted(server: ScriptedSseServer) -> None:
    big = ScriptedReply([b"x" * (4 << 20)] * 4)
    before = server.disconnects
    for _ in range(2):
        server.enqueue(big)
        server.disconnected.clear()
        with socket.create_connection(address(server), timeout=5) as raw:
            raw.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            raw.recv(1024)
            # Reset rather than close: the server's next write fails at once.
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        assert server.disconnected.wait(5)
    assert server.disconnects == before + 2


def test_each_server_listens_on_a_port_of_its_own(server: ScriptedSseServer) -> None:
    with ScriptedSseServer() as second:
        assert second.url != server.url
        assert post(server).status == 500
        assert post(second).status == 500
