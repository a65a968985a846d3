"""What the Chat Completions WireCache saves per request, and what it holds per message.

A history shaped like the shared bench's scenarios (T turns of K parallel ``echo`` calls
and their results) is turned into a request's ``messages`` with and without the cache
(median of ``--repeat`` batches of ``--calls`` calls, process CPU), and the memory the
cache keeps is read with ``tracemalloc`` after one whole-history call.

    uv run python benchmarks/wire_cache.py
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from typing import Any

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig
from yoagent.providers._messages import WireCache
from yoagent.providers.openai_completions import build_request_body

CONFIG = ModelConfig(
    api=ApiProtocol.OPENAI_COMPLETIONS,
    provider="openai",
    id="bench",
    base_url="http://127.0.0.1:9/v1",
    api_key="x",
)


def history(turns: int, calls: int) -> list[Message]:
    """A task, then ``turns`` replies of ``calls`` tool calls each, and their results."""
    messages: list[Message] = [UserMessage.from_text("do the thing")]
    for turn in range(turns):
        ids = [f"call_{turn}_{k}" for k in range(calls)]
        messages.append(
            AssistantMessage(
                content=[
                    ToolCall(id=i, name="echo", arguments={"text": f"{i} " + "x" * 16}) for i in ids
                ],
                stop_reason=StopReason.TOOL_USE,
            )
        )
        messages += [
            ToolResultMessage(
                tool_call_id=i, tool_name="echo", content=[TextContent(text=f"echo: {i}")]
            )
            for i in ids
        ]
    return messages


def cpu_per_call(config: StreamConfig, cache: WireCache[Any] | None, calls: int) -> float:
    """Process CPU µs of one ``build_request_body``."""
    start = time.process_time()
    for _ in range(calls):
        build_request_body(config, cache)
    return (time.process_time() - start) * 1e6 / calls


def main() -> None:
    """Print the timing and memory tables."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print("| shape | messages | no cache µs | cache µs | cache bytes | bytes/message |")
    print("|---|---|---|---|---|---|")
    for name, turns, calls in (("a: T=20 K=3", 20, 3), ("b: T=100 K=1", 100, 1)):
        messages = history(turns, calls)
        config = StreamConfig(model=CONFIG, system_prompt="You are a test.", messages=messages)
        cache: WireCache[Any] = WireCache()
        build_request_body(config, cache)
        fresh: list[float] = []
        cached: list[float] = []
        for _ in range(a.repeat):
            fresh.append(cpu_per_call(config, None, a.calls))
            cached.append(cpu_per_call(config, cache, a.calls))
        gc.collect()
        tracemalloc.start()
        held: WireCache[Any] = WireCache()
        build_request_body(config, held)
        gc.collect()
        size, _peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"| {name} | {len(messages)} | {statistics.median(fresh):.0f} "
            f"| {statistics.median(cached):.0f} | {size:,} | {size / len(messages):,.0f} |"
        )


if __name__ == "__main__":
    main()
