"""Hand-written Bedrock ConverseStream bodies and a replay helper for yoagent-providers' tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
import respx
from provider_helpers import BEDROCK_URL, Chunks, stream_config

from yoagent.core import ApiProtocol, AssistantMessage, ModelConfig
from yoagent.core.provider import StreamConfig, StreamDelta
from yoagent.providers import BedrockProvider
from yoagent.providers._eventstream import encode_frame

MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
STREAM_PATH = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE-SESSION-TOKEN-0123456789abcdef"
FIXED_TIME = 1_440_938_160.0  # 2015-08-30T12:36:00Z
EVENTSTREAM = {"content-type": "application/vnd.amazon.eventstream"}

Event = tuple[str, Mapping[str, Any]]


def bedrock_config(**overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "api": ApiProtocol.BEDROCK_CONVERSE_STREAM,
        "provider": "bedrock",
        "id": MODEL_ID,
        "base_url": BEDROCK_URL,
        "api_key": f"{ACCESS_KEY}:{SECRET_KEY}",
        "max_tokens": 4096,
    }
    values.update(overrides)
    return ModelConfig(**values)


def frame(event: str, payload: Mapping[str, Any]) -> bytes:
    """One event frame as Bedrock sends it (with its ``p`` padding field)."""
    return encode_frame(
        {":event-type": event, ":content-type": "application/json", ":message-type": "event"},
        json.dumps({**payload, "p": "abcdefgh"}).encode(),
    )


def delta(index: int, **content: Any) -> Event:
    """A ``contentBlockDelta`` event for block ``index``."""
    return ("contentBlockDelta", {"contentBlockIndex": index, "delta": content})


def reasoning(index: int, **content: str) -> Event:
    """A ``reasoningContent`` delta (``text``, ``signature`` or ``redactedContent``)."""
    return delta(index, reasoningContent=content)


def exception_frame(name: str, message: str) -> bytes:
    return encode_frame(
        {
            ":exception-type": name,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        json.dumps({"message": message}).encode(),
    )


def body(events: Iterable[Event]) -> bytes:
    return b"".join(frame(name, payload) for name, payload in events)


def usage_event(input: int = 10, output: int = 5, **extra: int) -> Event:
    usage = {"inputTokens": input, "outputTokens": output, "totalTokens": input + output, **extra}
    return ("metadata", {"usage": usage, "metrics": {"latencyMs": 100}})


def text_events(*parts: str, stop: str = "end_turn") -> list[Event]:
    events: list[Event] = [("messageStart", {"role": "assistant"})]
    events += [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}) for p in parts]
    events += [
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": stop}),
        usage_event(),
    ]
    return events


def tool_events(
    name: str = "read_file", tool_id: str = "tooluse_1", arguments: str = '{"path": "a.txt"}'
) -> list[Event]:
    half = len(arguments) // 2
    return [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Reading."}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": tool_id, "name": name}}},
        ),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": arguments[:half]}}},
        ),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": arguments[half:]}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("messageStop", {"stopReason": "tool_use"}),
        usage_event(),
    ]


def fixed_env(**values: str) -> dict[str, str]:
    """An environment for the provider: nothing of the real one, so tests never see real keys."""
    return {"HOME": "/nonexistent-home", **values}


async def replay_bedrock(
    pieces: bytes | list[bytes],
    *,
    config: StreamConfig | None = None,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    clock: float = FIXED_TIME,
) -> tuple[AssistantMessage, list[StreamDelta], respx.Route]:
    """Serve ``pieces`` on the ConverseStream route; stream one reply through the provider."""
    cfg = config or stream_config(bedrock_config())
    deltas: list[StreamDelta] = []
    provider = BedrockProvider(cfg.model, env=fixed_env(**(env or {})), clock=lambda: clock)
    chunks = pieces if isinstance(pieces, list) else [pieces]
    async with provider, respx.mock(assert_all_called=False) as mock:
        route = mock.post(url__regex=r".*/converse-stream$").mock(
            return_value=httpx.Response(
                status, headers={**EVENTSTREAM, **(headers or {})}, stream=Chunks(chunks)
            )
        )
        message = await provider.stream(cfg, deltas.append)
    return message, deltas, route


REPLY_TEXT = body(text_events("ok"))
"""A complete one-block text reply."""
