"""A whole provider turn over loopback vs a raw httpx + httpx-sse loop doing the same work.

Azure OpenAI and Vertex AI share the Responses and Gemini code paths measured here.

Both sides POST the same JSON to the same scripted SSE server on 127.0.0.1, read every
event, parse its JSON and assemble the text and tool call. Run it with
``uv run python benchmarks/provider_stream.py``; it prints a Markdown table.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import httpx_sse

from yoagent.core import (
    AnthropicCompat,
    ApiProtocol,
    GoogleCompat,
    ModelConfig,
    OpenAiCompat,
    UserMessage,
)
from yoagent.core.provider import StreamConfig
from yoagent.providers import (
    AnthropicProvider,
    GoogleProvider,
    OpenAiCompletionsProvider,
    OpenAiResponsesProvider,
)
from yoagent.providers.testing import ScriptedSseServer

TURNS = 200
DELTAS = 400
WORD = "token "


def anthropic_body() -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": WORD}}
        for _ in range(DELTAS)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "read_file",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.txt"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": DELTAS},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def openai_body() -> bytes:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": WORD}}]} for _ in range(DELTAS)
    ]
    chunks.append(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                            }
                        ]
                    },
                }
            ]
        }
    )
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": DELTAS}})
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def responses_body() -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        }
    ]
    events += [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": WORD,
        }
        for _ in range(DELTAS)
    ]
    call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "read_file"}
    events += [
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**call, "arguments": ""},
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 1,
            "delta": '{"path": "a.txt"}',
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**call, "arguments": '{"path": "a.txt"}'},
        },
        {
            "type": "response.completed",
            "response": {"status": "completed", "usage": {"input_tokens": 10, "output_tokens": 9}},
        },
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def gemini_body() -> bytes:
    chunks: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": WORD}]}, "index": 0}]}
        for _ in range(DELTAS)
    ]
    call = {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}
    chunks.append(
        {
            "candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": DELTAS},
        }
    )
    return "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode()


async def raw_responses(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
    text: list[str] = []
    args: list[str] = []
    async with httpx_sse.aconnect_sse(
        client, "POST", url + "/v1/responses", json=body, headers={"authorization": "Bearer k"}
    ) as source:
        async for event in source.aiter_sse():
            data = json.loads(event.data)
            kind = data["type"]
            if kind == "response.output_text.delta":
                text.append(data["delta"])
            elif kind == "response.function_call_arguments.delta":
                args.append(data["delta"])
            elif kind == "response.completed":
                break
    json.loads("".join(args))
    return "".join(text)


async def raw_gemini(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
    text: list[str] = []
    args: list[str] = []
    async with httpx_sse.aconnect_sse(
        client,
        "POST",
        url + "/v1beta/models/m:streamGenerateContent?alt=sse",
        json=body,
        headers={"x-goog-api-key": "k"},
    ) as source:
        async for event in source.aiter_sse():
            candidate = json.loads(event.data)["candidates"][0]
            for part in candidate["content"]["parts"]:
                if "text" in part:
                    text.append(part["text"])
                elif "functionCall" in part:
                    args.append(json.dumps(part["functionCall"]["args"]))
            if candidate.get("finishReason"):
                break
    json.loads("".join(args))
    return "".join(text)


async def raw_anthropic(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
    text: list[str] = []
    args: list[str] = []
    async with httpx_sse.aconnect_sse(
        client,
        "POST",
        url + "/v1/messages",
        json=body,
        headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
    ) as source:
        async for event in source.aiter_sse():
            data = json.loads(event.data)
            if data["type"] == "content_block_delta":
                delta = data["delta"]
                if delta["type"] == "text_delta":
                    text.append(delta["text"])
                else:
                    args.append(delta["partial_json"])
            elif data["type"] == "message_stop":
                break
    json.loads("".join(args))
    return "".join(text)


async def raw_openai(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
    text: list[str] = []
    args: list[str] = []
    async with httpx_sse.aconnect_sse(
        client,
        "POST",
        url + "/v1/chat/completions",
        json=body,
        headers={"authorization": "Bearer k"},
    ) as source:
        async for event in source.aiter_sse():
            if event.data == "[DONE]":
                break
            data = json.loads(event.data)
            for choice in data["choices"]:
                delta = choice["delta"]
                if delta.get("content"):
                    text.append(delta["content"])
                for call in delta.get("tool_calls") or []:
                    args.append(call["function"]["arguments"])
    json.loads("".join(args))
    return "".join(text)


RAW = {
    ApiProtocol.ANTHROPIC_MESSAGES: raw_anthropic,
    ApiProtocol.OPENAI_COMPLETIONS: raw_openai,
    ApiProtocol.OPENAI_RESPONSES: raw_responses,
    ApiProtocol.GOOGLE_GENERATIVE_AI: raw_gemini,
}


async def timed(turn: Callable[[], Awaitable[str]]) -> tuple[list[float], list[float]]:
    """Wall time and this thread's CPU time per turn (the server runs in another thread)."""
    for _ in range(10):  # warm up the connection and caches
        await turn()
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(TURNS):
        start, start_cpu = time.perf_counter(), time.thread_time()
        await turn()
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return wall, cpu


async def main() -> None:
    rows: list[tuple[str, float, float, float, float]] = []
    with ScriptedSseServer() as server:
        for api in RAW:
            payload, base, compat, provider_class = {
                ApiProtocol.ANTHROPIC_MESSAGES: (
                    anthropic_body(),
                    server.url,
                    AnthropicCompat(),
                    AnthropicProvider,
                ),
                ApiProtocol.OPENAI_COMPLETIONS: (
                    openai_body(),
                    server.url + "/v1",
                    OpenAiCompat(),
                    OpenAiCompletionsProvider,
                ),
                ApiProtocol.OPENAI_RESPONSES: (
                    responses_body(),
                    server.url + "/v1",
                    OpenAiCompat(),
                    OpenAiResponsesProvider,
                ),
                ApiProtocol.GOOGLE_GENERATIVE_AI: (
                    gemini_body(),
                    server.url,
                    GoogleCompat(),
                    GoogleProvider,
                ),
            }[api]
            model = ModelConfig(
                api=api, provider="bench", id="m", base_url=base, api_key="k", compat=compat
            )
            config = StreamConfig(
                model=model, system_prompt="s", messages=[UserMessage.from_text("hi")]
            )
            provider: Any = provider_class(model)
            body = {
                "model": "m",
                "max_tokens": 1024,
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            }

            async def ours(
                provider: Any = provider, config: StreamConfig = config, payload: bytes = payload
            ) -> str:
                server.enqueue(payload)
                return (await provider.stream(config, lambda d: None)).text

            async with httpx.AsyncClient() as client:

                async def raw(
                    client: httpx.AsyncClient = client,
                    reader: Any = RAW[api],
                    payload: bytes = payload,
                    body: dict[str, Any] = body,
                ) -> str:
                    server.enqueue(payload)
                    return await reader(client, server.url, body)

                # Interleave so drift (CPU frequency, other load) hits both sides alike.
                ours_wall: list[float] = []
                ours_cpu: list[float] = []
                raw_wall: list[float] = []
                raw_cpu: list[float] = []
                for _ in range(3):
                    wall, cpu = await timed(ours)
                    ours_wall += wall
                    ours_cpu += cpu
                    wall, cpu = await timed(raw)
                    raw_wall += wall
                    raw_cpu += cpu
            await provider.aclose()
            median = statistics.median
            rows.append(
                (api.value, median(ours_wall), median(raw_wall), median(ours_cpu), median(raw_cpu))
            )

    print(
        f"{TURNS * 3} turns per side, {DELTAS} text deltas + 1 tool call per turn, "
        "median per turn\n"
    )
    print(
        "| protocol | wall: yoagent | wall: raw | wall ratio "
        "| CPU: yoagent | CPU: raw | CPU ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, ours_s, raw_s, ours_c, raw_c in rows:
        print(
            f"| {name} | {ours_s * 1000:.2f} ms | {raw_s * 1000:.2f} ms | {ours_s / raw_s:.2f}× "
            f"| {ours_c * 1000:.2f} ms | {raw_c * 1000:.2f} ms | {ours_c / raw_c:.2f}× |"
        )


if __name__ == "__main__":
    anyio.run(main)
