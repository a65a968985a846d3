"""Every protocol's agent turn against a hand-written floor for that protocol (issue 31).

For Chat Completions (the reference), Anthropic Messages, OpenAI Responses, Gemini and
Bedrock ConverseStream, one multi-turn tool-using conversation (the shared bench's
scenarios a / b / c: T tool turns of K parallel ``echo`` calls and D text deltas, then a
text-only turn) runs against a loopback server in its own process that replies in that
protocol's streaming format (SSE, or the AWS eventstream for Bedrock; chunked, one event
per chunk, as ``../shared/bench/sse_server.py`` sends). Two clients run it:

* **floor**: raw ``httpx`` + ``httpx_sse`` (Bedrock: a hand-written eventstream decoder
  with both CRCs checked) + ``json``, building the same request body as yoagent (system
  prompt, tools, the whole history each turn) and assembling the same replies;
* **yoagent**: ``Agent.from_config`` on that protocol's provider, every event drained.

The server checks each request (the tool results of every earlier turn are in it) and
picks the reply from how many results it holds. Replies follow the field shapes of
yoagent-providers' test fixtures (``tests/stream_fixtures.py``, ``bedrock_fixtures.py``).

CPU is the process's CPU (``time.process_time``) over whole conversations, divided by
the requests (turns); floor and yoagent alternate, conversation batch by batch, and the
figure is the median over ``--reps`` batches. The server's CPU is in its own process.

    uv run python benchmarks/protocol_floor.py                      # all, a/b/c
    uv run python benchmarks/protocol_floor.py --protocols anthropic --scenarios b --reps 9
    uv run python benchmarks/protocol_floor.py --profile anthropic --scenarios a
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

SYSTEM_PROMPT = "You are a benchmark agent. Call tools when asked."
USER_PROMPT = "Run the benchmark conversation."
TOOL_NAME = "echo"
TOOL_DESCRIPTION = "Echo the given text back, prefixed with 'echo:'."
ECHO_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
MODEL_ID = "bench"
MAX_TOKENS = 4096
BEDROCK_KEY = "bedrock-api-key-" + base64.b64encode(b"bench-key-0123456789").decode()
BENCH = Path(__file__).resolve().parent.parent / ".." / "shared" / "bench"
if not (BENCH / "scenario.py").is_file():
    raise SystemExit(f"no shared bench at {BENCH}: the conversation is its scenario.py")
sys.path.insert(0, str(BENCH))
# The conversation (its shape, call texts, echo results, deltas) is the shared bench's own.
from scenario import (  # noqa: E402  # pyright: ignore[reportMissingImports]
    SCENARIOS,
    Scenario,
    call_id,
    call_text,
    delta_text,
    echo_result,
    final_text,
)

PROTOCOLS = ("completions", "anthropic", "responses", "gemini", "bedrock")


def fragments(text: str, n: int) -> list[str]:
    step = -(-len(text) // n)
    return [text[i : i + step] for i in range(0, len(text), step)]


# --- the replies, per protocol ------------------------------------------------------------


def _texts(sc: Scenario, turn: int) -> list[str]:
    return [delta_text(turn, i, sc.delta_bytes) for i in range(sc.deltas)]


def _calls(sc: Scenario, turn: int) -> list[tuple[str, str]]:
    """(call id, arguments JSON) of each call in ``turn``; none in the last turn."""
    if turn >= sc.turns:
        return []
    return [(call_id(turn, k), json.dumps({"text": call_text(turn, k)})) for k in range(sc.calls)]


def completions_reply(sc: Scenario, turn: int) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1764547200,
            "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": t}) for t in _texts(sc, turn)]
    calls = _calls(sc, turn)
    for k, (cid, args) in enumerate(calls):
        head = {"index": k, "id": cid, "type": "function"}
        out.append(
            chunk({"tool_calls": [{**head, "function": {"name": TOOL_NAME, "arguments": ""}}]})
        )
        out += [
            chunk({"tool_calls": [{"index": k, "function": {"arguments": part}}]})
            for part in fragments(args, sc.arg_fragments)
        ]
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    out.append({**chunk({}), "choices": [], "usage": usage})
    return [f"data: {json.dumps(c)}\n\n".encode() for c in out] + [b"data: [DONE]\n\n"]


def anthropic_reply(sc: Scenario, turn: int) -> list[bytes]:
    start = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": MODEL_ID,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1},
    }
    out: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
    ]
    out += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
        for t in _texts(sc, turn)
    ]
    out.append({"type": "content_block_stop", "index": 0})
    calls = _calls(sc, turn)
    for k, (cid, args) in enumerate(calls, start=1):
        block = {"type": "tool_use", "id": cid, "name": TOOL_NAME, "input": {}}
        out.append({"type": "content_block_start", "index": k, "content_block": block})
        out += [
            {
                "type": "content_block_delta",
                "index": k,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
            for part in ["", *fragments(args, sc.arg_fragments)]
        ]
        out.append({"type": "content_block_stop", "index": k})
    stop = "tool_use" if calls else "end_turn"
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
    )
    out.append({"type": "message_stop"})
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in out]


def responses_reply(sc: Scenario, turn: int) -> list[bytes]:
    texts = _texts(sc, turn)
    message = {"id": "msg_bench", "type": "message", "status": "in_progress", "role": "assistant"}
    part = {"type": "output_text", "text": "", "annotations": []}
    at = {"item_id": "msg_bench", "output_index": 0, "content_index": 0}
    created = {"id": "resp_bench", "object": "response", "status": "in_progress", "model": MODEL_ID}
    out: list[dict[str, Any]] = [
        {"type": "response.created", "response": created},
        {"type": "response.in_progress", "response": created},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "content": []},
        },
        {"type": "response.content_part.added", **at, "part": part},
    ]
    out += [{"type": "response.output_text.delta", **at, "delta": t} for t in texts]
    whole = {**part, "text": "".join(texts)}
    out += [
        {"type": "response.output_text.done", **at, "text": whole["text"]},
        {"type": "response.content_part.done", **at, "part": whole},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**message, "status": "completed", "content": [whole]},
        },
    ]
    for k, (cid, args) in enumerate(_calls(sc, turn), start=1):
        item = {
            "id": f"fc_{cid}",
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": cid,
            "name": TOOL_NAME,
        }
        out.append({"type": "response.output_item.added", "output_index": k, "item": item})
        out += [
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": k,
                "delta": piece,
            }
            for piece in fragments(args, sc.arg_fragments)
        ]
        out.append(
            {
                "type": "response.function_call_arguments.done",
                "item_id": item["id"],
                "output_index": k,
                "arguments": args,
            }
        )
        done = {**item, "status": "completed", "arguments": args}
        out.append({"type": "response.output_item.done", "output_index": k, "item": done})
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 120,
    }
    out.append(
        {
            "type": "response.completed",
            "response": {**created, "status": "completed", "usage": usage},
        }
    )
    return [
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n".encode()
        for n, e in enumerate(out)
    ]


def gemini_reply(sc: Scenario, turn: int) -> list[bytes]:
    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        out: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL_ID}
        if finish:
            out["usageMetadata"] = {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "totalTokenCount": 120,
            }
        out["responseId"] = "resp-bench"
        return out

    out = [chunk([{"text": t}]) for t in _texts(sc, turn)]
    calls = [
        {"functionCall": {"name": TOOL_NAME, "args": json.loads(args)}}
        for _, args in _calls(sc, turn)
    ]
    if calls:
        calls[0]["thoughtSignature"] = "c2lnLWNhbGw="
        out.append(chunk(calls))
    out.append(chunk([{"text": ""}], "STOP"))
    return [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in out]


def _frame(event: str, payload: dict[str, Any]) -> bytes:
    """One eventstream frame (string headers, the ``p`` padding field Bedrock adds)."""
    headers = b""
    for name, value in (
        (":event-type", event),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = json.dumps({**payload, "p": "abcdefghijklmnop"}, separators=(",", ":")).encode()
    total = 16 + len(headers) + len(body)
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_reply(sc: Scenario, turn: int) -> list[bytes]:
    out = [_frame("messageStart", {"role": "assistant"})]
    out += [
        _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}})
        for t in _texts(sc, turn)
    ]
    out.append(_frame("contentBlockStop", {"contentBlockIndex": 0}))
    calls = _calls(sc, turn)
    for k, (cid, args) in enumerate(calls, start=1):
        start = {"toolUse": {"toolUseId": cid, "name": TOOL_NAME}}
        out.append(_frame("contentBlockStart", {"contentBlockIndex": k, "start": start}))
        out += [
            _frame(
                "contentBlockDelta", {"contentBlockIndex": k, "delta": {"toolUse": {"input": p}}}
            )
            for p in fragments(args, sc.arg_fragments)
        ]
        out.append(_frame("contentBlockStop", {"contentBlockIndex": k}))
    out.append(_frame("messageStop", {"stopReason": "tool_use" if calls else "end_turn"}))
    usage = {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120}
    out.append(_frame("metadata", {"usage": usage, "metrics": {"latencyMs": 100}}))
    return out


REPLIES: dict[str, tuple[Callable[[Scenario, int], list[bytes]], str]] = {
    "completions": (completions_reply, "text/event-stream"),
    "anthropic": (anthropic_reply, "text/event-stream"),
    "responses": (responses_reply, "text/event-stream"),
    "gemini": (gemini_reply, "text/event-stream"),
    "bedrock": (bedrock_reply, "application/vnd.amazon.eventstream"),
}


# --- the server (its own process) ---------------------------------------------------------


def _route(path: str) -> tuple[str, str]:
    """``/{scenario}/{protocol}/...`` → (scenario, protocol)."""
    parts = path.split("/")
    return parts[1], parts[2]


def _dump(name: str, request: bytes) -> None:
    """Keep a third request of each client (``PROTOCOL_FLOOR_DUMP=dir``), to compare bodies."""
    folder = Path(os.environ["PROTOCOL_FLOOR_DUMP"], name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{len(list(folder.iterdir()))}.txt").write_bytes(request)


async def _handle(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    cache: dict[tuple[str, str, int], bytes],
    stats: dict[str, list[int]],
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            if method == "GET":  # /stats: bytes and requests per protocol, then reset
                out = json.dumps(stats).encode()
                stats.clear()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(out)}\r\n\r\n".encode()
                    + out
                )
                await writer.drain()
                continue
            code, protocol = _route(path)
            sc = SCENARIOS[code]
            results = body.count(b"echo:t")
            turn, extra = divmod(results, sc.calls)
            for k in range(sc.calls if turn else 0):  # every result of the last turn is there
                if echo_result(call_text(turn - 1, k)).encode() not in body:
                    extra = 1
            if extra or turn > sc.turns:
                msg = f"bad history: {results} results for {code}/{protocol}".encode()
                writer.write(
                    b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n"
                    + f"content-length: {len(msg)}\r\n\r\n".encode()
                    + msg
                )
                await writer.drain()
                continue
            if os.environ.get("PROTOCOL_FLOOR_DUMP") and turn == 2:
                _dump(f"{protocol}-{code}", head + body)
            entry = stats.setdefault(f"{code}/{protocol}", [0, 0])
            entry[0] += 1
            entry[1] += len(body)
            key = (code, protocol, turn)
            reply = cache.get(key)
            if reply is None:
                render, ctype = REPLIES[protocol]
                events = render(sc, turn)
                reply = cache[key] = (
                    f"HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\n".encode()
                    + b"transfer-encoding: chunked\r\n\r\n"
                    + b"".join(f"{len(e):x}\r\n".encode() + e + b"\r\n" for e in events)
                    + b"0\r\n\r\n"
                )
            writer.write(reply)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def _write_port(port_file: str, port: int) -> None:
    Path(port_file).write_text(str(port))


async def _serve(port_file: str) -> None:
    cache: dict[tuple[str, str, int], bytes] = {}
    stats: dict[str, list[int]] = {}
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, cache, stats), "127.0.0.1", 0, backlog=256
    )
    port = server.sockets[0].getsockname()[1]
    _write_port(port_file, port)
    async with server:
        await server.serve_forever()


# --- the floor: one hand-written client per protocol ---------------------------------------


async def echo_tool(text: str) -> str:
    return echo_result(text)


class Floor:
    """Raw httpx + SSE / eventstream framing + json, one shared client."""

    def __init__(self) -> None:
        import httpx

        self.client = httpx.AsyncClient(timeout=60.0)

    async def _tools(self, calls: list[tuple[str, str, str]]) -> list[str]:
        import anyio

        results = [""] * len(calls)

        async def run(i: int, args: str) -> None:
            results[i] = await echo_tool(**json.loads(args))

        async with anyio.create_task_group() as tg:
            for i, (_, _, args) in enumerate(calls):
                tg.start_soon(run, i, args)
        return results

    async def completions(self, base: str) -> str:
        url, headers = base + "/chat/completions", {"authorization": "Bearer x"}
        tools = [
            {
                "type": "function",
                "function": {
                    "name": TOOL_NAME,
                    "description": TOOL_DESCRIPTION,
                    "parameters": ECHO_PARAMETERS,
                },
            }
        ]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_PROMPT},
        ]
        while True:
            body = {
                "model": MODEL_ID,
                "messages": messages,
                "tools": tools,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            text: list[str] = []
            calls: dict[int, list[Any]] = {}
            async with self._stream(url, headers, body) as source:
                source.response.raise_for_status()
                async for sse in source.aiter_sse():
                    if sse.data == "[DONE]":
                        continue
                    for choice in json.loads(sse.data)["choices"]:
                        delta = choice["delta"]
                        if delta.get("content"):
                            text.append(delta["content"])
                        for tc in delta.get("tool_calls") or ():
                            slot = calls.get(tc["index"])
                            if slot is None:
                                slot = calls[tc["index"]] = [tc["id"], tc["function"]["name"], []]
                            slot[2].append(tc["function"].get("arguments") or "")
            reply = "".join(text)
            done = [(c[0], c[1], "".join(c[2])) for _, c in sorted(calls.items())]
            assistant: dict[str, Any] = {"role": "assistant", "content": reply or None}
            if done:
                assistant["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                    for i, n, a in done
                ]
            messages.append(assistant)
            if not done:
                return reply
            results = await self._tools(done)
            messages += [
                {"role": "tool", "tool_call_id": c[0], "content": r}
                for c, r in zip(done, results, strict=True)
            ]

    def _stream(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        from httpx_sse import aconnect_sse

        return aconnect_sse(self.client, "POST", url, json=body, headers=headers)

    async def anthropic(self, base: str) -> str:
        url = base + "/v1/messages"
        headers = {"x-api-key": "x", "anthropic-version": "2023-06-01"}
        cache = {"type": "ephemeral"}
        system = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": cache}]
        tools = [
            {
                "name": TOOL_NAME,
                "description": TOOL_DESCRIPTION,
                "input_schema": ECHO_PARAMETERS,
                "cache_control": cache,
            }
        ]
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": USER_PROMPT}]}
        ]
        while True:
            body = {
                "model": MODEL_ID,
                "max_tokens": MAX_TOKENS,
                "stream": True,
                "system": system,
                "tools": tools,
                "messages": messages,
            }
            blocks: dict[int, dict[str, Any]] = {}
            async with self._stream(url, headers, body) as source:
                source.response.raise_for_status()
                async for sse in source.aiter_sse():
                    event = json.loads(sse.data)
                    kind = event["type"]
                    if kind == "content_block_delta":
                        block, delta = blocks[event["index"]], event["delta"]
                        if delta["type"] == "text_delta":
                            block["text"].append(delta["text"])
                        else:
                            block["json"].append(delta["partial_json"])
                    elif kind == "content_block_start":
                        block = dict(event["content_block"])
                        block["text" if block["type"] == "text" else "json"] = []
                        blocks[event["index"]] = block
            content: list[dict[str, Any]] = []
            calls: list[tuple[str, str, str]] = []
            reply = ""
            for _, block in sorted(blocks.items()):
                if block["type"] == "text":
                    reply = "".join(block["text"])
                    if reply:
                        content.append({"type": "text", "text": reply})
                else:
                    args = "".join(block["json"])
                    calls.append((block["id"], block["name"], args))
                    content.append(
                        {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": json.loads(args),
                        }
                    )
            messages.append({"role": "assistant", "content": content})
            if not calls:
                return reply
            results = await self._tools(calls)
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": c[0],
                            "content": [{"type": "text", "text": r}],
                            "is_error": False,
                        }
                        for c, r in zip(calls, results, strict=True)
                    ],
                }
            )

    async def responses(self, base: str) -> str:
        url, headers = base + "/responses", {"authorization": "Bearer x"}
        tools = [
            {
                "type": "function",
                "name": TOOL_NAME,
                "description": TOOL_DESCRIPTION,
                "parameters": ECHO_PARAMETERS,
            }
        ]
        items: list[dict[str, Any]] = [{"role": "user", "content": USER_PROMPT}]
        while True:
            body = {
                "model": MODEL_ID,
                "stream": True,
                "input": items,
                "max_output_tokens": MAX_TOKENS,
                "instructions": SYSTEM_PROMPT,
                "tools": tools,
                "prompt_cache_key": "floor-5dc868f3ea4b36e3",
            }
            text: list[str] = []
            done_items: list[dict[str, Any]] = []
            async with self._stream(url, headers, body) as source:
                source.response.raise_for_status()
                async for sse in source.aiter_sse():
                    event = json.loads(sse.data)
                    kind = event["type"]
                    if kind == "response.output_text.delta":
                        text.append(event["delta"])
                    elif kind == "response.output_item.done":
                        done_items.append(event["item"])
            reply = "".join(text)
            calls: list[tuple[str, str, str]] = []
            for item in done_items:
                if item["type"] == "message":
                    items.append(
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": reply}],
                        }
                    )
                elif item["type"] == "function_call":
                    calls.append((item["call_id"], item["name"], item["arguments"]))
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": item["call_id"],
                            "name": item["name"],
                            "arguments": item["arguments"],
                        }
                    )
            if not calls:
                return reply
            results = await self._tools(calls)
            items += [
                {"type": "function_call_output", "call_id": c[0], "output": r}
                for c, r in zip(calls, results, strict=True)
            ]

    async def gemini(self, base: str) -> str:
        url = f"{base}/v1beta/models/{MODEL_ID}:streamGenerateContent?alt=sse"
        headers = {"x-goog-api-key": "x"}
        tools = [
            {
                "functionDeclarations": [
                    {
                        "name": TOOL_NAME,
                        "description": TOOL_DESCRIPTION,
                        "parametersJsonSchema": ECHO_PARAMETERS,
                    }
                ]
            }
        ]
        contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": USER_PROMPT}]}]
        system = {"parts": [{"text": SYSTEM_PROMPT}]}
        while True:
            body = {
                "contents": contents,
                "systemInstruction": system,
                "tools": tools,
                "generationConfig": {"maxOutputTokens": MAX_TOKENS},
            }
            text: list[str] = []
            parts: list[dict[str, Any]] = []
            async with self._stream(url, headers, body) as source:
                source.response.raise_for_status()
                async for sse in source.aiter_sse():
                    chunk = json.loads(sse.data)
                    for part in chunk["candidates"][0]["content"]["parts"]:
                        if "functionCall" in part:
                            parts.append(part)
                        elif part.get("text"):
                            text.append(part["text"])
            reply = "".join(text)
            model_parts = ([{"text": reply}] if reply else []) + parts
            contents.append({"role": "model", "parts": model_parts})
            if not parts:
                return reply
            calls = [
                (
                    p["functionCall"]["name"],
                    p["functionCall"]["name"],
                    json.dumps(p["functionCall"]["args"]),
                )
                for p in parts
            ]
            results = await self._tools(calls)
            contents.append(
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": c[1], "response": {"output": r}}}
                        for c, r in zip(calls, results, strict=True)
                    ],
                }
            )

    async def bedrock(self, base: str) -> str:
        url = f"{base}/model/{MODEL_ID}/converse-stream"
        headers = {
            "authorization": f"Bearer {BEDROCK_KEY}",
            "content-type": "application/json",
            "accept": "application/vnd.amazon.eventstream",
        }
        tools = {
            "tools": [
                {
                    "toolSpec": {
                        "name": TOOL_NAME,
                        "description": TOOL_DESCRIPTION,
                        "inputSchema": {"json": ECHO_PARAMETERS},
                    }
                }
            ]
        }
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": USER_PROMPT}]}]
        while True:
            body = {
                "messages": messages,
                "system": [{"text": SYSTEM_PROMPT}],
                "inferenceConfig": {"maxTokens": MAX_TOKENS},
                "toolConfig": tools,
            }
            text: list[str] = []
            blocks: dict[int, list[Any]] = {}
            content = json.dumps(body).encode()
            async with self.client.stream(
                "POST", url, content=content, headers=headers
            ) as response:
                response.raise_for_status()
                buf = b""
                async for data in response.aiter_bytes():
                    buf += data
                    while len(buf) >= 12:
                        total, head_len, crc = struct.unpack_from(">III", buf)
                        if len(buf) < total:
                            break
                        if zlib.crc32(buf[:8]) != crc:
                            raise ValueError("prelude crc")
                        if (
                            zlib.crc32(buf[: total - 4])
                            != struct.unpack_from(">I", buf, total - 4)[0]
                        ):
                            raise ValueError("message crc")
                        event_type, pos, end = "", 12, 12 + head_len
                        while pos < end:  # string headers (type 7) only, as Bedrock sends
                            n = buf[pos]
                            name = buf[pos + 1 : pos + 1 + n]
                            pos += 2 + n
                            (size,) = struct.unpack_from(">H", buf, pos)
                            if name == b":event-type":
                                event_type = buf[pos + 2 : pos + 2 + size].decode()
                            pos += 2 + size
                        payload = json.loads(buf[end : total - 4])
                        buf = buf[total:]
                        if event_type == "contentBlockDelta":
                            delta = payload["delta"]
                            if "text" in delta:
                                text.append(delta["text"])
                            else:
                                blocks[payload["contentBlockIndex"]][2].append(
                                    delta["toolUse"]["input"]
                                )
                        elif event_type == "contentBlockStart":
                            use = payload["start"]["toolUse"]
                            blocks[payload["contentBlockIndex"]] = [
                                use["toolUseId"],
                                use["name"],
                                [],
                            ]
            reply = "".join(text)
            calls = [(b[0], b[1], "".join(b[2])) for _, b in sorted(blocks.items())]
            parts: list[dict[str, Any]] = [{"text": reply}] if reply else []
            parts += [
                {"toolUse": {"toolUseId": c[0], "name": c[1], "input": json.loads(c[2])}}
                for c in calls
            ]
            messages.append({"role": "assistant", "content": parts})
            if not calls:
                return reply
            results = await self._tools(calls)
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": c[0],
                                "content": [{"text": r}],
                                "status": "success",
                            }
                        }
                        for c, r in zip(calls, results, strict=True)
                    ],
                }
            )


# --- yoagent ------------------------------------------------------------------------------


class Yoagent:
    """``Agent.from_config`` on each protocol's provider, every event drained."""

    def __init__(self) -> None:
        from yoagent.core import ExecutionLimits, tool

        async def echo(text: str) -> str:
            """Echo the given text back, prefixed with 'echo:'."""
            return echo_result(text)

        self.tool = tool(echo)
        self.limits = ExecutionLimits(max_turns=None)

    def config(self, protocol: str, base: str) -> Any:
        from yoagent.core import ApiProtocol, ModelConfig

        api, provider, key = {
            "completions": (ApiProtocol.OPENAI_COMPLETIONS, "openai", "x"),
            "anthropic": (ApiProtocol.ANTHROPIC_MESSAGES, "anthropic", "x"),
            "responses": (ApiProtocol.OPENAI_RESPONSES, "openai", "x"),
            "gemini": (ApiProtocol.GOOGLE_GENERATIVE_AI, "google", "x"),
            "bedrock": (ApiProtocol.BEDROCK_CONVERSE_STREAM, "bedrock", BEDROCK_KEY),
        }[protocol]
        return ModelConfig(
            api=api,
            provider=provider,
            id=MODEL_ID,
            base_url=base,
            api_key=key,
            max_tokens=MAX_TOKENS,
        )

    async def run(self, protocol: str, base: str) -> str:
        from yoagent.core import Agent, AssistantMessage, TextContent

        agent = Agent.from_config(
            self.config(protocol, base),
            system_prompt=SYSTEM_PROMPT,
            tools=[self.tool],
            limits=self.limits,
        )
        async for _ in agent.stream(USER_PROMPT):
            pass
        last = agent.messages[-1]
        assert isinstance(last, AssistantMessage), last
        if last.error_message:
            raise RuntimeError(f"{protocol}: {last.stop_reason}: {last.error_message}")
        return "".join(c.text for c in last.content if isinstance(c, TextContent))


# --- measuring ----------------------------------------------------------------------------


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port_file = tempfile.mktemp(prefix="protocol-floor-port-")
    proc = subprocess.Popen([sys.executable, __file__, "--serve", port_file])
    for _ in range(200):
        if os.path.exists(port_file) and Path(port_file).read_text():
            port = Path(port_file).read_text()
            os.unlink(port_file)
            return proc, f"http://127.0.0.1:{port}"
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the server did not start")


async def batch(run: Callable[[], Awaitable[str]], expect: str, conversations: int) -> float:
    """Process CPU seconds of ``conversations`` conversations, one after another."""
    start = time.process_time()
    for _ in range(conversations):
        got = await run()
        if got != expect:
            raise AssertionError(f"final text {got[:40]!r} != {expect[:40]!r}")
    return time.process_time() - start


async def stats(floor: Floor, server: str) -> dict[str, list[int]]:
    response = await floor.client.get(server + "/stats")
    return response.json()


async def measure(args: argparse.Namespace, server: str) -> list[dict[str, Any]]:
    floor, ours = Floor(), Yoagent()
    rows: list[dict[str, Any]] = []
    for code in args.scenarios:
        sc = SCENARIOS[code]
        expect = final_text(sc)
        turns = sc.turns + 1
        conversations = max(1, args.turns // turns)
        for protocol in args.protocols:
            base = f"{server}/{code}/{protocol}"
            if protocol in ("completions", "responses"):
                base += "/v1"
            sides: dict[str, Callable[[], Awaitable[str]]] = {
                "floor": lambda p=protocol, b=base: getattr(floor, p)(b),
                "yoagent": lambda p=protocol, b=base: ours.run(p, b),
            }
            sizes: dict[str, float] = {}
            for side, run in sides.items():  # warm up, and check the request sizes
                await stats(floor, server)
                await batch(run, expect, 1)
                seen = (await stats(floor, server))[f"{code}/{protocol}"]
                assert seen[0] == turns, (side, protocol, seen)
                sizes[side] = seen[1] / turns
            cpu: dict[str, list[float]] = {"floor": [], "yoagent": []}
            load: list[float] = []
            for rep in range(args.reps):
                order = ("floor", "yoagent") if rep % 2 == 0 else ("yoagent", "floor")
                for side in order:
                    seconds = await batch(sides[side], expect, conversations)
                    cpu[side].append(seconds * 1000 / (conversations * turns))
                load.append(os.getloadavg()[0])
            f, y = statistics.median(cpu["floor"]), statistics.median(cpu["yoagent"])
            pairs = sorted(b / a for a, b in zip(cpu["floor"], cpu["yoagent"], strict=True))
            row = {
                "protocol": protocol,
                "scenario": code,
                "floor_ms": f,
                "yoagent_ms": y,
                "ratio": y / f,
                "pair_q1": pairs[len(pairs) // 4],
                "pair_q3": pairs[(3 * len(pairs)) // 4],
                "load": (min(load), max(load)),
                "body_floor": sizes["floor"],
                "body_yoagent": sizes["yoagent"],
                "turns": conversations * turns,
            }
            rows.append(row)
            print(
                f"{code} {protocol:12} floor {f:6.3f} yoagent {y:6.3f} ms/turn  "
                f"{y / f:4.2f}x (paired {row['pair_q1']:.2f}-{row['pair_q3']:.2f})  "
                f"body {sizes['floor']:.0f}/{sizes['yoagent']:.0f} B  "
                f"load {min(load):.1f}-{max(load):.1f}",
                flush=True,
            )
    return rows


async def profile(args: argparse.Namespace, server: str) -> None:
    """cProfile (process CPU clock) of the floor, then yoagent, over the same turns: own
    time per turn by library (``turn_profile.group_of``), then yoagent's top functions."""
    import cProfile
    import pstats
    from collections import defaultdict

    from turn_profile import group_of

    floor, ours = Floor(), Yoagent()
    protocol = args.profile
    code = args.scenarios[0]
    sc = SCENARIOS[code]
    base = f"{server}/{code}/{protocol}" + (
        "/v1" if protocol in ("completions", "responses") else ""
    )
    expect = final_text(sc)
    conversations = max(1, args.turns // (sc.turns + 1))
    turns = conversations * (sc.turns + 1)
    sides: dict[str, Callable[[], Awaitable[str]]] = {
        "floor": lambda: getattr(floor, protocol)(base),
        "yoagent": lambda: ours.run(protocol, base),
    }
    tables: dict[str, dict[str, float]] = {}
    for side, run in sides.items():
        await batch(run, expect, 1)
        prof = cProfile.Profile(time.process_time)
        prof.enable()
        await batch(run, expect, conversations)
        prof.disable()
        st = pstats.Stats(prof)
        own: dict[str, float] = defaultdict(float)
        for (filename, _, _), row in st.stats.items():  # type: ignore[attr-defined]
            own[group_of(filename)] += row[2]
        tables[side] = own
        if side == "yoagent":
            print(f"{turns} turns of {code} on {protocol}")
            st.sort_stats("cumulative").print_stats(r"yoagent", 30)
            st.sort_stats("tottime").print_stats(25)
    print("| library (own time) | yoagent µs/turn | floor µs/turn |")
    print("|---|---|---|")
    names = sorted(tables["yoagent"], key=lambda n: -tables["yoagent"][n])
    for name in [*names, "total"]:
        y = sum(tables["yoagent"].values()) if name == "total" else tables["yoagent"][name]
        f = sum(tables["floor"].values()) if name == "total" else tables["floor"].get(name, 0.0)
        print(f"| {name} | {y * 1e6 / turns:.0f} | {f * 1e6 / turns:.0f} |")


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| protocol | scenario | floor ms/turn | yoagent ms/turn | ratio | paired q1-q3 "
        "| request B floor / yoagent | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['protocol']} | {r['scenario']} | {r['floor_ms']:.3f} "
            f"| {r['yoagent_ms']:.3f} | {r['ratio']:.2f}x "
            f"| {r['pair_q1']:.2f}-{r['pair_q3']:.2f} "
            f"| {r['body_floor']:.0f} / {r['body_yoagent']:.0f} "
            f"| {r['load'][0]:.1f}-{r['load'][1]:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--protocols", nargs="+", default=list(PROTOCOLS), choices=PROTOCOLS)
    parser.add_argument("--scenarios", nargs="+", default=["a", "b", "c"], choices=["a", "b", "c"])
    parser.add_argument("--reps", type=int, default=7, help="batches per side (default 7)")
    parser.add_argument("--turns", type=int, default=200, help="turns per batch (default 200)")
    parser.add_argument("--profile", choices=PROTOCOLS, help="cProfile yoagent on this protocol")
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve))
        return
    proc, server = start_server()
    try:
        if args.profile:
            asyncio.run(profile(args, server))
            return
        rows = asyncio.run(measure(args, server))
        print()
        print(report(rows))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
