"""Every recorded Bedrock stream, replayed through the real provider, block by block.

Raw ``.eventstream`` bodies are served byte for byte; ``.chunks.txt`` files (one decoded
``{"<eventType>": {...}}`` payload per line) are framed first. The expected reply is
computed from the payloads by a deliberately naive reader (below), independent of the
provider's own event handling.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from bedrock_fixtures import frame, replay_bedrock
from provider_helpers import CORPUS

from yoagent.core import (
    ApiProtocol,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from yoagent.providers._eventstream import EventStreamDecoder

STOP = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.LENGTH,
}


def corpus() -> list[Any]:
    folder = CORPUS / "bedrock"
    files = (
        sorted(
            p
            for p in folder.rglob("*")
            if p.name.endswith((".eventstream", ".chunks.txt")) and p.is_file()
        )
        if folder.is_dir()
        else []
    )
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {folder}"))]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in files]


def events_of(path: Path) -> tuple[bytes, list[tuple[str, dict[str, Any]]]]:
    """The body to serve and its (event type, payload) list."""
    if path.name.endswith(".chunks.txt"):
        events = []
        for line in path.read_text().splitlines():
            if line.strip():
                ((name, payload),) = json.loads(line).items()
                events.append((name, payload))
        return b"".join(frame(name, payload) for name, payload in events), events
    raw = path.read_bytes()
    decoded = [
        (str(f.headers[":event-type"]), json.loads(f.payload))
        for f in EventStreamDecoder().feed(raw)
    ]
    return raw, decoded


def expected_reply(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    blocks: dict[int, dict[str, Any]] = {}
    skipped: set[int] = set()
    stop, usage = None, {}
    for name, payload in events:
        index = payload.get("contentBlockIndex")
        if name == "contentBlockStart":
            start = payload["start"]
            tool = start.get("toolUse")
            if tool and tool.get("type") != "server_tool_use":
                blocks[index] = {"kind": "tool", "id": tool["toolUseId"], "name": tool["name"]}
            elif "toolResult" in start or "image" in start:
                skipped.add(index)
        elif name == "contentBlockDelta" and index not in skipped:
            delta = payload["delta"]
            if "text" in delta:
                blocks.setdefault(index, {"kind": "text"}).setdefault("parts", []).append(
                    delta["text"]
                )
            elif "reasoningContent" in delta:
                block = blocks.setdefault(index, {"kind": "thinking"})
                part = delta["reasoningContent"]
                block.setdefault("parts", []).append(part.get("text", ""))
                block.setdefault("sig", []).append(part.get("signature", ""))
                if "redactedContent" in part:
                    block.setdefault("redacted", []).append(
                        base64.b64decode(part["redactedContent"])
                    )
            elif "toolUse" in delta and index in blocks:
                blocks[index].setdefault("parts", []).append(delta["toolUse"]["input"])
        elif name == "contentBlockStop" and index in blocks:
            blocks[index]["closed"] = True
        elif name == "messageStop":
            stop = STOP[payload["stopReason"]]
        elif name == "metadata":
            usage = payload["usage"]
    content: list[Any] = []
    for index in sorted(blocks):
        block = blocks[index]
        text = "".join(block.get("parts", []))
        if block["kind"] == "text" and text:
            content.append(TextContent(text=text))
        elif block["kind"] == "thinking":
            redacted = b"".join(block.get("redacted", []))
            content.append(
                ThinkingContent(
                    thinking=text,
                    signature="".join(block["sig"]) or None,
                    redacted=base64.b64encode(redacted).decode() if redacted else None,
                    redacted_protocol=ApiProtocol.BEDROCK_CONVERSE_STREAM if redacted else None,
                )
            )
        elif block["kind"] == "tool" and block.get("closed"):
            arguments = json.loads(text) if text.strip() else {}
            content.append(ToolCall(id=block["id"], name=block["name"], arguments=arguments))
    return {"content": content, "stop": stop, "usage": usage}


@pytest.mark.parametrize("path", corpus())
async def test_recorded_bedrock_stream_replays_block_by_block(path: Path) -> None:
    served, events = events_of(path)
    want = expected_reply(events)
    message, deltas, route = await replay_bedrock(served)
    assert route.called
    assert want["content"], "every recorded stream holds something"
    assert [type(b).__name__ for b in message.content] == [
        type(b).__name__ for b in want["content"]
    ]
    for got, expected in zip(message.content, want["content"], strict=True):
        if isinstance(expected, ToolCall):
            assert isinstance(got, ToolCall)
            assert (got.id, got.name, got.arguments) == (
                expected.id,
                expected.name,
                expected.arguments,
            )
        else:
            assert got == expected
    assert message.stop_reason is want["stop"]
    usage = want["usage"]
    assert (
        message.usage.input,
        message.usage.output,
        message.usage.cache_read,
        message.usage.cache_write,
    ) == (
        usage.get("inputTokens", 0),
        usage.get("outputTokens", 0),
        usage.get("cacheReadInputTokens", 0),
        usage.get("cacheWriteInputTokens", 0),
    )
    streamed = "".join(d.delta for d in deltas if d.type == "text_delta")
    assert streamed == message.text


@pytest.mark.parametrize("path", corpus())
async def test_recorded_bedrock_stream_fed_in_small_pieces_gives_the_same_reply(
    path: Path,
) -> None:
    served, _ = events_of(path)
    whole, _, _ = await replay_bedrock(served)
    pieces = [served[i : i + 61] for i in range(0, len(served), 61)]
    split, _, _ = await replay_bedrock(pieces)
    assert split.content == whole.content
    assert split.usage == whole.usage


async def test_the_recorded_400_error_body_is_an_api_error_with_its_message() -> None:
    error = CORPUS / "bedrock" / "pydantic-ai" / "test_bedrock_streaming_error.0.error.json"
    if not error.is_file():
        pytest.skip(f"no corpus at {error.parent}")
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(
            error.read_bytes(), status=400, headers={"content-type": "application/json"}
        )
    assert caught.value.kind is ErrorKind.API
    assert caught.value.message == "The provided model identifier is invalid."
