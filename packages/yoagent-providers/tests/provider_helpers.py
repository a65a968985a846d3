"""Helpers for yoagent-providers' tests: the corpus beside the checkout, replay, configs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from yoagent.core import (
    AnthropicCompat,
    ApiProtocol,
    AssistantMessage,
    GoogleCompat,
    ModelConfig,
    OpenAiCompat,
    UserMessage,
)
from yoagent.core.provider import StreamConfig, StreamDelta, ToolDefinition
from yoagent.providers import (
    AnthropicProvider,
    AzureOpenAiResponsesProvider,
    BedrockProvider,
    GoogleProvider,
    OpenAiCompletionsProvider,
    OpenAiResponsesProvider,
    VertexProvider,
)
from yoagent.providers._http import HttpProvider

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus" / "providers"
ANTHROPIC_URL = "http://anthropic.test"
OPENAI_URL = "http://openai.test/v1"
AZURE_URL = "http://azure.test/openai/v1"
GEMINI_URL = "http://gemini.test"
VERTEX_URL = "http://vertex.test/v1/projects/proj/locations/us-central1"
BEDROCK_URL = "https://bedrock-runtime.us-east-1.amazonaws.com"
SECRET = "sk-ant-test-SECRET-0123456789abcdef"

READ_TOOL = ToolDefinition(
    name="read_file",
    description="Read a file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
)
"""A one-argument tool with a closed schema (strict where the vendor supports it)."""
BEDROCK_KEY = f"AKIDEXAMPLE:{SECRET}:{SECRET}-session-token"
"""SigV4 credentials whose secret key and session token both hold :data:`SECRET`."""


def corpus_files(protocol: str) -> list[Path]:
    """Every stream file of ``protocol`` in the shared corpus (empty when it is absent)."""
    folder = CORPUS / protocol
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.rglob("*") if p.suffix in (".sse", ".txt") and p.name != "README.md"
    )


def corpus_params(protocol: str) -> list[Any]:
    """pytest params over the corpus, or one skipped param saying why."""
    files = corpus_files(protocol)
    if not files:
        return [
            pytest.param(
                None, marks=pytest.mark.skip(reason=f"shared corpus not found at {CORPUS}")
            )
        ]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in files]


def chunk_payloads(path: Path) -> list[str]:
    """The JSON payload lines of a ``*.chunks.txt`` file."""
    return [line for line in path.read_text().splitlines() if line.strip()]


def sse_from_payloads(payloads: Iterable[str], *, event_lines: bool) -> bytes:
    """Frame payloads as SSE the way the corpus README says to replay them."""
    out: list[str] = []
    for payload in payloads:
        if event_lines:
            out.append(f"event: {json.loads(payload)['type']}\n")
        out.append(f"data: {payload}\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def body_of(path: Path, *, anthropic: bool) -> bytes:
    """The exact HTTP body to serve for a corpus file."""
    if path.name.endswith(".chunks.txt"):
        return sse_from_payloads(chunk_payloads(path), event_lines=anthropic)
    return path.read_bytes()


def payloads_of(body: bytes) -> list[tuple[str, str]]:
    """(event, data) of each event of an SSE body: an independent, naive reader for tests."""
    events: list[tuple[str, str]] = []
    text = body.decode().replace("\r\n", "\n").replace("\r", "\n")
    for block in text.split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            events.append((name, "\n".join(data)))
    return events


def anthropic_config(**overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "api": ApiProtocol.ANTHROPIC_MESSAGES,
        "provider": "anthropic",
        "id": "claude-test",
        "base_url": ANTHROPIC_URL,
        "api_key": SECRET,
        "max_tokens": 4096,
        "compat": AnthropicCompat(),
    }
    values.update(overrides)
    return ModelConfig(**values)


def openai_config(**overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "api": ApiProtocol.OPENAI_COMPLETIONS,
        "provider": "openai",
        "id": "gpt-test",
        "base_url": OPENAI_URL,
        "api_key": SECRET,
        "max_tokens": 4096,
        "compat": OpenAiCompat(),
    }
    values.update(overrides)
    return ModelConfig(**values)


def stream_config(model: ModelConfig, **overrides: Any) -> StreamConfig:
    values: dict[str, Any] = {
        "model": model,
        "system_prompt": "You are terse.",
        "messages": [UserMessage.from_text("hello")],
    }
    values.update(overrides)
    return StreamConfig(**values)


class Chunks(httpx.AsyncByteStream):
    """A response body delivered in the given pieces."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self.pieces = list(pieces)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def sse_response(body: bytes | list[bytes], status: int = 200, **headers: str) -> httpx.Response:
    pieces = body if isinstance(body, list) else [body]
    return httpx.Response(
        status,
        headers={"content-type": "text/event-stream", **headers},
        stream=Chunks(pieces),
    )


async def replay(
    body: bytes | list[bytes],
    *,
    anthropic: bool,
    config: StreamConfig | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> tuple[AssistantMessage, list[StreamDelta], respx.Route]:
    """Serve ``body`` on the provider's route and stream one reply through the real provider."""
    deltas: list[StreamDelta] = []
    if anthropic:
        cfg = config or stream_config(anthropic_config())
        url = ANTHROPIC_URL + "/v1/messages"
        provider: AnthropicProvider | OpenAiCompletionsProvider = AnthropicProvider(cfg.model)
    else:
        cfg = config or stream_config(openai_config())
        url = OPENAI_URL + "/chat/completions"
        provider = OpenAiCompletionsProvider(cfg.model)
    async with provider, respx.mock(assert_all_called=False) as mock:
        route = mock.post(url).mock(return_value=sse_response(body, status, **(headers or {})))
        message = await provider.stream(cfg, deltas.append)
    return message, deltas, route


@dataclass(frozen=True)
class Protocol:
    """How the tests reach one wire protocol: its provider, config, route and corpus."""

    api: ApiProtocol
    provider: type[HttpProvider]
    corpus: str
    route: str
    base_url: str
    compat: Any = None
    api_key: str = SECRET

    def model(self, **overrides: Any) -> ModelConfig:
        values: dict[str, Any] = {
            "api": self.api,
            "provider": self.api.value,
            "id": "test-model",
            "base_url": self.base_url,
            "api_key": self.api_key,
            "max_tokens": 4096,
            "compat": self.compat,
        }
        values.update(overrides)
        return ModelConfig(**values)

    def url(self, model_id: str = "test-model") -> str:
        return self.route.format(id=model_id)


PROTOCOLS: dict[ApiProtocol, Protocol] = {
    p.api: p
    for p in (
        Protocol(
            ApiProtocol.ANTHROPIC_MESSAGES,
            AnthropicProvider,
            "anthropic",
            ANTHROPIC_URL + "/v1/messages",
            ANTHROPIC_URL,
            AnthropicCompat(),
        ),
        Protocol(
            ApiProtocol.OPENAI_COMPLETIONS,
            OpenAiCompletionsProvider,
            "openai-chat",
            OPENAI_URL + "/chat/completions",
            OPENAI_URL,
            OpenAiCompat(),
        ),
        Protocol(
            ApiProtocol.OPENAI_RESPONSES,
            OpenAiResponsesProvider,
            "openai-responses",
            OPENAI_URL + "/responses",
            OPENAI_URL,
            OpenAiCompat(),
        ),
        Protocol(
            ApiProtocol.AZURE_OPENAI_RESPONSES,
            AzureOpenAiResponsesProvider,
            "azure-responses",
            AZURE_URL + "/responses",
            AZURE_URL,
            OpenAiCompat(),
        ),
        Protocol(
            ApiProtocol.GOOGLE_GENERATIVE_AI,
            GoogleProvider,
            "gemini",
            GEMINI_URL + "/v1beta/models/{id}:streamGenerateContent?alt=sse",
            GEMINI_URL,
            GoogleCompat(),
        ),
        Protocol(
            ApiProtocol.GOOGLE_VERTEX,
            VertexProvider,
            "vertex",
            VERTEX_URL + "/publishers/google/models/{id}:streamGenerateContent?alt=sse",
            VERTEX_URL,
            GoogleCompat(),
        ),
        Protocol(
            ApiProtocol.BEDROCK_CONVERSE_STREAM,
            BedrockProvider,
            "bedrock",
            BEDROCK_URL + "/model/{id}/converse-stream",
            BEDROCK_URL,
            api_key=BEDROCK_KEY,
        ),
    )
}
"""Every protocol this package speaks, seven in all."""

SSE_PROTOCOLS = [api for api in PROTOCOLS if api is not ApiProtocol.BEDROCK_CONVERSE_STREAM]
"""The six that stream Server-Sent Events (Bedrock streams binary eventstream frames)."""


def chunks_body(path: Path, api: ApiProtocol) -> bytes:
    """The HTTP body for a corpus file of ``api`` (``*.chunks.txt`` framed as the README says)."""
    if not path.name.endswith(".chunks.txt"):
        return path.read_bytes()
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        return sse_from_payloads(chunk_payloads(path), event_lines=True)
    if api is ApiProtocol.OPENAI_COMPLETIONS:
        return sse_from_payloads(chunk_payloads(path), event_lines=False)
    return "".join(f"data: {line}\n\n" for line in chunk_payloads(path)).encode()


async def replay_as(
    api: ApiProtocol,
    body: bytes | list[bytes],
    *,
    config: StreamConfig | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> tuple[AssistantMessage, list[StreamDelta], respx.Route]:
    """Serve ``body`` on ``api``'s route and stream one reply through the real provider."""
    protocol = PROTOCOLS[api]
    cfg = config or stream_config(protocol.model())
    deltas: list[StreamDelta] = []
    provider = protocol.provider(cfg.model)
    async with provider, respx.mock(assert_all_called=False) as mock:
        route = mock.post(protocol.url(cfg.model.id)).mock(
            return_value=sse_response(body, status, **(headers or {}))
        )
        message = await provider.stream(cfg, deltas.append)  # type: ignore[attr-defined]
    return message, deltas, route
