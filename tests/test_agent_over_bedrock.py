"""A whole agent run over Bedrock: Agent.from_config → BedrockProvider → a loopback server
that speaks the binary eventstream and checks every SigV4 signature itself (with botocore,
an implementation independent of ours), refusing a bad one with 403 as AWS does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from unittest import mock

import anyio
import pytest

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    ModelConfig,
    StopReason,
    ToolCall,
    ToolResultMessage,
    tool,
)
from yoagent.providers.testing import (
    RecordedRequest,
    ScriptedReply,
    ScriptedSseServer,
    bedrock_reply,
)

botocore_auth = pytest.importorskip("botocore.auth", reason="botocore checks signatures (dev)")
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def expected_authorization(
    method: str, url: str, headers: dict[str, str], body: bytes
) -> str | None:
    """What botocore signs for this request with the server's copy of the credentials."""
    received = headers.get("authorization", "")
    if not received.startswith("AWS4-HMAC-SHA256 Credential="):
        return None
    scope = received.split("Credential=", 1)[1].split(",", 1)[0].split("/")
    signed = received.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    request = AWSRequest(
        method=method,
        url=url,
        headers={n: headers[n] for n in signed if n != "x-amz-date"},
        data=body,
    )
    signer = botocore_auth.SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), scope[3], scope[2])
    when = datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        signer.add_auth(request)
    return str(request.headers["Authorization"])


class SignatureCheck:
    """Recomputes each request's signature with botocore; a mismatch is answered 403."""

    def __init__(self) -> None:
        self.verified = 0
        self.rejected = 0

    def __call__(self, request: RecordedRequest) -> ScriptedReply | None:
        url = f"http://{request.headers['host']}{request.path}"
        expected = expected_authorization("POST", url, request.headers, request.body)
        if expected is not None and expected == request.headers.get("authorization"):
            self.verified += 1
            return None
        self.rejected += 1
        message = {"message": "The request signature we calculated does not match"}
        return ScriptedReply(
            [json.dumps(message).encode()], status=403, headers={"content-type": "application/json"}
        )


@dataclass
class SigningServer:
    server: ScriptedSseServer
    signatures: SignatureCheck

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[SigningServer]:
    # A loopback host names no region: the provider reads it from the environment.
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    check = SignatureCheck()
    with ScriptedSseServer(check) as running:
        yield SigningServer(running, check)


def usage(input: int, output: int) -> tuple[str, dict[str, Any]]:
    return ("metadata", {"usage": {"inputTokens": input, "outputTokens": output}})


TOOL_TURN = bedrock_reply(
    [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Adding."}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tu_1", "name": "add"}}},
        ),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a": 2'}}}),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": ', "b": 3}'}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("messageStop", {"stopReason": "tool_use"}),
        usage(20, 9),
    ]
)
FINAL_TURN = bedrock_reply(
    [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "It is 5."}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        usage(35, 4),
    ]
)


def config(server: SigningServer, secret: str = SECRET_KEY) -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.BEDROCK_CONVERSE_STREAM,
        provider="bedrock",
        id=MODEL_ID,
        base_url=server.url,
        api_key=f"{ACCESS_KEY}:{secret}",
    )


async def test_agent_runs_a_tool_over_signed_bedrock_requests(
    server: SigningServer,
) -> None:
    server.server.enqueue(TOOL_TURN)
    server.server.enqueue(FINAL_TURN)
    async with Agent.from_config(config(server), system_prompt="Be brief.", tools=[add]) as agent:
        with anyio.fail_after(10):
            new = await agent.prompt("what is 2 + 3?")

    replies = [m for m in new if isinstance(m, AssistantMessage)]
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    assert replies[0].tool_calls == [ToolCall(id="tu_1", name="add", arguments={"a": 2, "b": 3})]
    assert [(r.tool_call_id, r.text, r.is_error) for r in results] == [("tu_1", "5", False)]
    assert replies[-1].text == "It is 5." and replies[-1].stop_reason is StopReason.STOP
    assert (replies[-1].usage.input, replies[-1].usage.output) == (35, 4)

    assert (server.signatures.verified, server.signatures.rejected) == (2, 0)
    first, second = server.server.requests
    assert first.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert "/us-west-2/bedrock/aws4_request" in first.headers["authorization"]
    sent = second.json()
    assert sent["system"][0] == {"text": "Be brief."}
    assert sent["toolConfig"]["tools"][0]["toolSpec"]["name"] == "add"
    assert sent["messages"][1]["content"][1] == {
        "toolUse": {"toolUseId": "tu_1", "name": "add", "input": {"a": 2, "b": 3}}
    }
    result = sent["messages"][2]["content"][0]["toolResult"]
    assert (result["toolUseId"], result["content"], result["status"]) == (
        "tu_1",
        [{"text": "5"}],
        "success",
    )


async def test_a_request_signed_with_the_wrong_secret_is_refused_by_the_server(
    server: SigningServer,
) -> None:
    server.server.enqueue(FINAL_TURN)
    wrong = config(server, secret="not-the-secret-the-server-knows-0123456")
    async with Agent.from_config(wrong, tools=[add]) as agent:
        with anyio.fail_after(10):
            try:
                new = await agent.prompt("hi")
            except Exception as error:  # once a run ending in ERROR raises from prompt()
                text = str(error)
            else:
                reply = new[-1]
                assert isinstance(reply, AssistantMessage)
                assert reply.stop_reason is StopReason.ERROR
                text = reply.error_message or ""
    assert "refused the key from ModelConfig.api_key (403)" in text
    assert "not-the-secret" not in text
    # An AUTH failure is not retried: one request, refused.
    assert (server.signatures.verified, server.signatures.rejected) == (0, 1)
