"""Hand-written streams covering every case the corpus covers, so a clone without it tests all.

Each is built from payload dicts, in the shapes of Anthropic's and OpenAI's streaming docs.
"""

from __future__ import annotations

import json
from typing import Any


def anthropic_sse(events: list[dict[str, Any]], *, crlf: bool = False, pad: bool = False) -> bytes:
    """Frame Anthropic events as the API does (``event:`` + ``data:``), optionally CRLF/padded."""
    nl = "\r\n" if crlf else "\n"
    out = []
    for event in events:
        data = json.dumps(event, separators=(",", ":")) + ("    " if pad else "")
        out.append(f"event: {event['type']}{nl}data: {data}{nl}{nl}")
    return "".join(out).encode()


def openai_sse(chunks: list[dict[str, Any]], *, done: bool = True, comments: bool = False) -> bytes:
    """Frame chat completion chunks as ``data:`` lines, with ``[DONE]`` and optional comments."""
    out = []
    for chunk in chunks:
        if comments:
            out.append(": OPENROUTER PROCESSING\n\n")
        out.append(f"data: {json.dumps(chunk)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def message_start(usage: dict[str, int] | None = None, id: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": id,
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-test",
            "stop_reason": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 1},
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


def text_delta(index: int, text: str) -> dict[str, Any]:
    return delta(index, {"type": "text_delta", "text": text})


def json_delta(index: int, partial: str) -> dict[str, Any]:
    return delta(index, {"type": "input_json_delta", "partial_json": partial})


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop: str, usage: dict[str, int] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None, **extra},
        "usage": usage or {"output_tokens": 5},
    }


MESSAGE_STOP: dict[str, Any] = {"type": "message_stop"}
PING: dict[str, Any] = {"type": "ping"}


def anthropic_text(text: str = "Hello there!", stop: str = "end_turn") -> list[dict[str, Any]]:
    return [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        PING,
        text_delta(0, text[:5]),
        text_delta(0, text[5:]),
        block_stop(0),
        message_delta(stop),
        MESSAGE_STOP,
    ]


def anthropic_tool(
    name: str = "read_file", args: str = '{"path": "a.txt"}'
) -> list[dict[str, Any]]:
    return [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        text_delta(0, "Reading it."),
        block_stop(0),
        block_start(1, {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}),
        json_delta(1, ""),
        json_delta(1, args[:7]),
        json_delta(1, args[7:]),
        block_stop(1),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    """One chat completion chunk for choice 0."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }


def usage_chunk(prompt: int = 20, completion: int = 7, cached: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def openai_text(text: str = "Hello there!") -> list[dict[str, Any]]:
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": text[:5]}),
        chunk({"content": text[5:]}),
        chunk({}, "stop"),
        usage_chunk(),
    ]


def openai_tool(name: str = "read_file", args: str = '{"path": "a.txt"}') -> list[dict[str, Any]]:
    return [
        chunk({"role": "assistant", "content": "Reading it."}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[:6]}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[6:]}}]}),
        chunk({}, "tool_calls"),
        usage_chunk(),
    ]
