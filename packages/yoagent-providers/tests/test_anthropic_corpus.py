"""Every recorded Anthropic stream, replayed through the real provider, block by block.

The expected reply is computed from the stream file itself by a deliberately naive reader
(below), independent of the provider's parser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import body_of, corpus_params, payloads_of, replay

from yoagent.core import (
    ApiProtocol,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)

STOP = {
    "end_turn": StopReason.STOP,
    "stop_sequence": StopReason.STOP,
    "pause_turn": StopReason.STOP,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "tool_use": StopReason.TOOL_USE,
    "refusal": StopReason.REFUSAL,
}
SURFACED = {"text", "thinking", "redacted_thinking", "tool_use"}


def expected_reply(body: bytes) -> dict[str, Any]:
    """What the stream says: blocks in order, stop reason, usage (last value of each field)."""
    blocks: dict[int, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    usage = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    stop = None
    message_id = None
    for _, data in payloads_of(body):
        if data.strip() == "[DONE]":
            continue
        event = json.loads(data)
        kind = event["type"]
        if kind == "message_stop":
            break  # one response is one message (some files hold two back to back)
        if kind == "message_start":
            if message_id is not None and event["message"]["id"] != message_id:
                order, usage = [], dict.fromkeys(usage, 0)
            message_id = event["message"]["id"]
            blocks = {}
            usage.update(
                {k: v for k, v in event["message"]["usage"].items() if k in usage and v is not None}
            )
        elif kind == "content_block_start":
            block = dict(event["content_block"], _parts=[], _sig=[], _closed=False)
            if block["type"] in SURFACED:
                blocks[event["index"]] = block
                order.append(block)
        elif kind == "content_block_delta" and event["index"] in blocks:
            block, delta = blocks[event["index"]], event["delta"]
            for field in ("text", "thinking", "partial_json"):
                if field in delta:
                    block["_parts"].append(delta[field])
            if "signature" in delta:
                block["_sig"].append(delta["signature"])
        elif kind == "content_block_stop" and event["index"] in blocks:
            blocks[event["index"]]["_closed"] = True
        elif kind == "message_delta":
            if event["delta"].get("stop_reason"):
                stop = STOP[event["delta"]["stop_reason"]]
            usage.update(
                {
                    k: v
                    for k, v in (event.get("usage") or {}).items()
                    if k in usage and v is not None
                }
            )
    return {"blocks": order, "stop": stop, "usage": usage}


def expected_content(blocks: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for block in blocks:
        text = "".join(block["_parts"])
        if block["type"] == "text":
            text = block.get("text", "") + text
            if text:
                out.append(TextContent(text=text))
        elif block["type"] == "thinking":
            out.append(
                ThinkingContent(
                    thinking=block.get("thinking", "") + text,
                    signature="".join(block["_sig"]) or None,
                )
            )
        elif block["type"] == "redacted_thinking":
            out.append(
                ThinkingContent(
                    redacted=block["data"], redacted_protocol=ApiProtocol.ANTHROPIC_MESSAGES
                )
            )
        elif block["_closed"]:
            out.append(
                ToolCall(
                    id=block["id"],
                    name=block["name"],
                    arguments=json.loads(text) if text.strip() else {},
                )
            )
    return out


@pytest.mark.parametrize("path", corpus_params("anthropic"))
async def test_recorded_anthropic_stream_replays_block_by_block(path: Path) -> None:
    body = body_of(path, anthropic=True)
    want = expected_reply(body)
    message, deltas, route = await replay(body, anthropic=True)

    assert route.called
    assert [type(b).__name__ for b in message.content] == [
        type(b).__name__ for b in expected_content(want["blocks"])
    ]
    for got, expected in zip(message.content, expected_content(want["blocks"]), strict=True):
        if isinstance(expected, ToolCall):
            assert isinstance(got, ToolCall)
            assert (got.id, got.name, got.arguments) == (
                expected.id,
                expected.name,
                expected.arguments,
            )
        elif isinstance(expected, ThinkingContent):
            assert isinstance(got, ThinkingContent)
            assert (got.thinking, got.signature, got.redacted, got.redacted_protocol) == (
                expected.thinking,
                expected.signature,
                expected.redacted,
                expected.redacted_protocol,
            )
        else:
            assert got == expected
    unclosed_tool = any(b["type"] == "tool_use" and not b["_closed"] for b in want["blocks"])
    assert message.stop_reason is (want["stop"] if not unclosed_tool else StopReason.LENGTH)
    usage = want["usage"]
    assert (
        message.usage.input,
        message.usage.output,
        message.usage.cache_read,
        message.usage.cache_write,
    ) == (
        usage["input_tokens"],
        usage["output_tokens"],
        usage["cache_read_input_tokens"],
        usage["cache_creation_input_tokens"],
    )
    streamed_text = "".join(d.delta for d in deltas if d.type == "text_delta")
    assert streamed_text.endswith(message.text) if message.text else True
