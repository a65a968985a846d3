"""Every recorded Chat Completions stream, replayed through the real provider, block by block.

The expected reply comes from the stream file itself, read by a naive reader below. Streams
that carry an in-band error object must end in a ProviderError of the right kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import body_of, corpus_params, payloads_of, replay

from yoagent.core import (
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)

FINISH = {
    "stop": StopReason.STOP,
    "length": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE,
    "content_filter": StopReason.REFUSAL,
}
# What each recorded error means (the classification rule, applied by hand to the file).
ERROR_KINDS = {
    # Groq: tool_use_failed / invalid_request_error, status_code 400 → a plain API error.
    "test_tool_use_failed_error_streaming.0.sse": ErrorKind.API,
    # OpenRouter: {"code": 400, "message": "Token limit reached"} → an overflow phrase.
    "test_openrouter_stream_error.0.sse": ErrorKind.CONTEXT_OVERFLOW,
}


def expected_reply(body: bytes) -> dict[str, Any]:
    """Blocks (runs of one kind; tool calls by index), finish reason, usage and any error."""
    blocks: list[dict[str, Any]] = []
    tools: dict[int, dict[str, Any]] = {}
    finish, usage, error, refused = None, None, None, False
    for _, data in payloads_of(body):
        if data.strip() == "[DONE]":
            break
        chunk = json.loads(data)
        if chunk.get("error"):
            error = chunk["error"]
            break
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            pieces = [
                ("thinking", delta.get("reasoning_content") or delta.get("reasoning")),
                ("text", delta.get("content")),
                ("text", delta.get("refusal")),
            ]
            refused = refused or bool(delta.get("refusal"))
            for kind, piece in pieces:
                if piece:
                    if not blocks or blocks[-1]["kind"] != kind:
                        blocks.append({"kind": kind, "text": ""})
                    blocks[-1]["text"] += piece
            for call in delta.get("tool_calls") or []:
                fn = call.get("function") or {}
                if call["index"] not in tools:
                    tools[call["index"]] = {"kind": "tool", "id": "", "name": "", "args": ""}
                    blocks.append(tools[call["index"]])
                entry = tools[call["index"]]
                entry["id"] = entry["id"] or call.get("id") or ""
                entry["name"] = entry["name"] or fn.get("name") or ""
                entry["args"] += fn.get("arguments") or ""
                blocks.append({"kind": "boundary"})
            if choice.get("finish_reason"):
                finish = FINISH[choice["finish_reason"]]
    blocks = [b for b in blocks if b["kind"] != "boundary"]
    return {
        "blocks": blocks,
        "finish": StopReason.REFUSAL if refused else finish,
        "usage": usage,
        "error": error,
    }


def as_content(blocks: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for block in blocks:
        if block["kind"] == "text":
            out.append(TextContent(text=block["text"]))
        elif block["kind"] == "thinking":
            out.append(ThinkingContent(thinking=block["text"]))
        else:
            out.append(
                ToolCall(id=block["id"], name=block["name"], arguments=json.loads(block["args"]))
            )
    return out


@pytest.mark.parametrize("path", corpus_params("openai-chat"))
async def test_recorded_chat_stream_replays_block_by_block(path: Path) -> None:
    body = body_of(path, anthropic=False)
    want = expected_reply(body)

    if want["error"] is not None:
        with pytest.raises(ProviderError) as caught:
            await replay(body, anthropic=False)
        assert caught.value.kind is ERROR_KINDS[path.name]
        assert want["error"]["message"] in caught.value.message
        return

    message, deltas, _ = await replay(body, anthropic=False)

    expected = as_content(want["blocks"])
    assert [type(b).__name__ for b in message.content] == [type(b).__name__ for b in expected]
    for got, block in zip(message.content, expected, strict=True):
        if isinstance(block, ThinkingContent):
            assert isinstance(got, ThinkingContent)
            assert got.thinking == block.thinking
        else:
            assert got == block
    assert message.stop_reason is want["finish"]
    usage = want["usage"] or {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    assert message.usage.input == usage.get("prompt_tokens", 0) - cached
    assert message.usage.cache_read == cached
    assert message.usage.output == usage.get("completion_tokens", 0)
    streamed = "".join(d.delta for d in deltas if d.type == "text_delta")
    assert streamed == message.text
