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


# --- Responses API (OpenAI and Azure) --------------------------------------------------


def responses_sse(events: list[dict[str, Any]], *, event_lines: bool = True) -> bytes:
    """Frame Responses events as the API does: ``event:`` + ``data:`` with sequence numbers."""
    out = []
    for number, event in enumerate(events):
        payload = json.dumps({**event, "sequence_number": number})
        out.append(f"event: {event['type']}\n" if event_lines else "")
        out.append(f"data: {payload}\n\n")
    return "".join(out).encode()


def responses_completed(
    input_tokens: int = 20,
    output: int = 7,
    cached: int = 0,
    status: str = "completed",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "type": "response.completed" if status == "completed" else "response.incomplete",
        "response": {
            "id": "resp_1",
            "status": status,
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": output,
                "output_tokens_details": {"reasoning_tokens": 3},
                "total_tokens": input_tokens + output,
            },
            **extra,
        },
    }


def responses_text(text: str = "Hello there!") -> list[dict[str, Any]]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    done = {
        **message,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": text[:5],
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": text[5:],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        responses_completed(),
    ]


def responses_tool(
    name: str = "read_file",
    args: str = '{"path": "a.txt"}',
    *,
    encrypted: str | None = "gAAAA-encrypted",
) -> list[dict[str, Any]]:
    """A reasoning item (summary + optional encrypted content), then one function call."""
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    summary = [{"type": "summary_text", "text": "Need the file."}]
    reasoning_done = {**reasoning, "summary": summary}
    if encrypted is not None:
        reasoning_done["encrypted_content"] = encrypted
    call = {
        "id": "fc_1",
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": "call_1",
        "name": name,
    }
    return [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Need the file.",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning_done},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 1,
            "delta": args[:6],
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 1,
            "delta": args[6:],
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "output_index": 1,
            "arguments": args,
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**call, "status": "completed", "arguments": args},
        },
        responses_completed(),
    ]


# --- Gemini API and Vertex AI -------------------------------------------------------------


def gemini_sse(chunks: list[dict[str, Any]], *, crlf: bool = True) -> bytes:
    """Frame GenerateContentResponse chunks as ``data:`` events (CRLF, as Google sends)."""
    nl = "\r\n" if crlf else "\n"
    return "".join(f"data: {json.dumps(c)}{nl}{nl}" for c in chunks).encode()


def gemini_chunk(
    parts: list[dict[str, Any]], finish: str | None = None, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "responseId": "resp-g1"}
    if usage is not None:
        chunk["usageMetadata"] = usage
    return chunk


GEMINI_USAGE = {
    "promptTokenCount": 20,
    "candidatesTokenCount": 5,
    "thoughtsTokenCount": 2,
    "cachedContentTokenCount": 4,
    "totalTokenCount": 27,
}


def gemini_text(text: str = "Hello there!") -> list[dict[str, Any]]:
    return [
        gemini_chunk([{"text": "Thinking it over.", "thought": True}]),
        gemini_chunk([{"text": text[:5]}]),
        gemini_chunk([{"text": text[5:]}]),
        gemini_chunk([{"text": "", "thoughtSignature": "c2lnLXRleHQ="}], "STOP", GEMINI_USAGE),
    ]


def gemini_tool(name: str = "read_file", args: str = '{"path": "a.txt"}') -> list[dict[str, Any]]:
    call = {"functionCall": {"name": name, "args": json.loads(args)}}
    return [
        gemini_chunk([{"text": "Reading it."}]),
        gemini_chunk([{**call, "thoughtSignature": "c2lnLWNhbGw="}]),
        gemini_chunk([{"text": ""}], "STOP", GEMINI_USAGE),
    ]
