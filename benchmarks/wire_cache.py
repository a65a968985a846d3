"""What the Chat Completions WireCache saves per request, and what it holds per message.

A history shaped like the shared bench's scenarios (T turns of K parallel ``echo`` calls
and their results) is turned into a request's encoded body three ways (median of
``--repeat`` batches of ``--calls`` calls, process CPU): without the cache; from the
cached wire dicts, then ``json.dumps`` of the whole body; and as sent, from each
message's cached JSON (``encode_request``). The memory the cache keeps is read with
``tracemalloc`` after one whole-history request, without and with the JSON.

    uv run python benchmarks/wire_cache.py
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
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
from yoagent.providers._completions_request import build_request_body, encode_request
from yoagent.providers._http import encode_body
from yoagent.providers._messages import WireCache

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


def cpu_per_call(request: Callable[[], bytes], calls: int) -> float:
    """Process CPU µs of one ``request()``."""
    start = time.process_time()
    for _ in range(calls):
        request()
    return (time.process_time() - start) * 1e6 / calls


def held_bytes(request: Callable[[WireCache[Any]], object]) -> int:
    """The memory a fresh cache keeps after one ``request(cache)``."""
    gc.collect()
    tracemalloc.start()
    held: WireCache[Any] = WireCache()
    request(held)
    gc.collect()
    size, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return size


def main() -> None:
    """Print the timing and memory table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print(
        "| shape | messages | no cache µs | cached dicts µs | cached JSON µs "
        "| bytes held: dicts | with JSON | bytes/message with JSON |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, turns, calls in (("a: T=20 K=3", 20, 3), ("b: T=100 K=1", 100, 1)):
        print(row(name, history(turns, calls), a.repeat, a.calls))


def row(name: str, messages: list[Message], repeat: int, calls: int) -> str:
    """One line of the table for a request holding ``messages``."""
    config = StreamConfig(model=CONFIG, system_prompt="You are a test.", messages=messages)
    cache: WireCache[Any] = WireCache()
    assert encode_request(config, cache) == encode_body(build_request_body(config))
    ways: dict[str, Callable[[], bytes]] = {
        "fresh": lambda: encode_body(build_request_body(config)),
        "dicts": lambda: encode_body(build_request_body(config, cache)),
        "json": lambda: encode_request(config, cache),
    }
    times: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(repeat):
        for way, request in ways.items():
            times[way].append(cpu_per_call(request, calls))
    dicts = held_bytes(lambda held: build_request_body(config, held))
    with_json = held_bytes(lambda held: encode_request(config, held))
    fresh, cached, joined = (statistics.median(times[way]) for way in ways)
    return (
        f"| {name} | {len(messages)} | {fresh:.0f} | {cached:.0f} | {joined:.0f} "
        f"| {dicts:,} | {with_json:,} | {with_json / len(messages):,.0f} |"
    )


if __name__ == "__main__":
    main()
