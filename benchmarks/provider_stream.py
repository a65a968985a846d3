"""A whole provider turn over loopback vs a raw httpx + httpx-sse loop doing the same work.

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
    ModelConfig,
    OpenAiCompat,
    StreamConfig,
    UserMessage,
)
from yoagent.providers import AnthropicProvider, OpenAiCompletionsProvider
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


async def timed(turn: Callable[[], Awaitable[str]]) -> list[float]:
    for _ in range(10):  # warm up the connection and caches
        await turn()
    times: list[float] = []
    for _ in range(TURNS):
        start = time.perf_counter()
        await turn()
        times.append(time.perf_counter() - start)
    return times


async def main() -> None:
    rows: list[tuple[str, float, float]] = []
    with ScriptedSseServer() as server:
        for api in (ApiProtocol.ANTHROPIC_MESSAGES, ApiProtocol.OPENAI_COMPLETIONS):
            anthropic = api is ApiProtocol.ANTHROPIC_MESSAGES
            payload = anthropic_body() if anthropic else openai_body()
            base = server.url if anthropic else server.url + "/v1"
            model = ModelConfig(
                api=api,
                provider="bench",
                id="m",
                base_url=base,
                api_key="k",
                compat=AnthropicCompat() if anthropic else OpenAiCompat(),
            )
            config = StreamConfig(
                model=model, system_prompt="s", messages=[UserMessage.from_text("hi")]
            )
            provider = AnthropicProvider(model) if anthropic else OpenAiCompletionsProvider(model)
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
                    anthropic: bool = anthropic,
                    payload: bytes = payload,
                    body: dict[str, Any] = body,
                ) -> str:
                    server.enqueue(payload)
                    reader = raw_anthropic if anthropic else raw_openai
                    return await reader(client, server.url, body)

                # Interleave so drift (CPU frequency, other load) hits both sides alike.
                ours_times: list[float] = []
                raw_times: list[float] = []
                for _ in range(3):
                    ours_times += await timed(ours)
                    raw_times += await timed(raw)
            await provider.aclose()
            rows.append((api.value, statistics.median(ours_times), statistics.median(raw_times)))

    print(
        f"{TURNS * 3} turns per side, {DELTAS} text deltas + 1 tool call per turn, "
        "median per turn\n"
    )
    print("| protocol | yoagent provider | raw httpx + httpx-sse | ratio |")
    print("|---|---|---|---|")
    for name, ours_s, raw_s in rows:
        print(
            f"| {name} | {ours_s * 1000:.2f} ms | {raw_s * 1000:.2f} ms | {ours_s / raw_s:.2f}× |"
        )


if __name__ == "__main__":
    anyio.run(main)
