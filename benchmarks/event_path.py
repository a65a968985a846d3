"""Where a streamed event's CPU goes: the SSE reader, the Chat Completions reader, the loop.

The shared bench's own replies (``../shared/bench/sse_server.py``'s ``reply_bytes``, one
SSE event per chunk) are fed without a network, per event (process CPU, median of
``--repeat`` batches):

* **floor**: httpx-sse's line and event decoders, ``json.loads`` and the dict reads of the
  bench's hand-written client (``clients/floor.py``);
* **SSE**: yoagent's ``SseReader.feed`` alone, then **reader**: the Chat Completions
  reader on those events (``json.loads`` included, deltas to a sink that does nothing);
* **json.loads** alone, which both sides pay;
* **loop, per delta**: a provider that reports ``--deltas`` text deltas and returns, run by
  an ``Agent`` with no consumer (``prompt``) and with every event drained (``stream``).

    uv run python benchmarks/event_path.py [--scenario T20-K3-D20-S16-A4]

Needs ``../shared/bench`` (its scenario and server modules; no venv, no server started).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from httpx_sse._decoders import SSEDecoder, SSELineDecoder  # the floor's own decoders

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    ModelConfig,
    StopReason,
    TextContent,
    Usage,
)
from yoagent.core.provider import DeltaSink, StreamConfig, TextDelta
from yoagent.providers._completions_stream import CompletionsReader
from yoagent.providers._sse import SseEvent, SseReader

BENCH = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench"


def bench_replies(code: str) -> list[list[bytes]]:
    """Each turn's reply as the bench server sends it: the SSE bytes of each HTTP chunk."""
    sys.path.insert(0, str(BENCH))
    import scenario  # pyright: ignore[reportMissingImports]
    import sse_server  # pyright: ignore[reportMissingImports]

    turns = scenario.Scenario.parse(code).turns
    replies: list[list[bytes]] = []
    for turn in range(turns + 1):
        chunks = [c.split(b"\r\n", 1)[1][:-2] for c in sse_server.reply_bytes(code, turn)]
        replies.append([c for c in chunks if c])  # the chunked body's terminator is empty
    return replies


def per_event(run: Callable[[], object], events: int, repeat: int, batch: int = 20) -> float:
    """Median process CPU per event, in µs."""
    samples: list[float] = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(batch):
            run()
        samples.append((time.process_time() - start) / (batch * events))
    return statistics.median(samples) * 1e6


def floor_reads(replies: list[list[bytes]]) -> Callable[[], object]:
    def run() -> object:
        for chunks in replies:
            lines, events = SSELineDecoder(), SSEDecoder()
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            for chunk in chunks:
                for line in lines.decode(chunk.decode("utf-8")):
                    sse = events.decode(line)
                    if sse is None or sse.data == "[DONE]":
                        continue
                    for choice in json.loads(sse.data)["choices"]:
                        delta = choice["delta"]
                        if delta.get("content"):
                            text.append(delta["content"])
                        for tc in delta.get("tool_calls") or ():
                            slot = calls.get(tc["index"])
                            if slot is None:
                                slot = calls[tc["index"]] = {"id": tc["id"], "args": []}
                            slot["args"].append(tc["function"].get("arguments") or "")
        return None

    return run


def sse_events(replies: list[list[bytes]]) -> list[list[SseEvent]]:
    out: list[list[SseEvent]] = []
    for chunks in replies:
        reader = SseReader()
        out.append([event for chunk in chunks for event in reader.feed(chunk)])
    return out


def reader_run(events: list[list[SseEvent]]) -> Callable[[], object]:
    config = StreamConfig(
        model=ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="bench"),
        system_prompt="",
        messages=[],
    )

    def run() -> object:
        for turn in events:
            reader = CompletionsReader(config, lambda delta: None, "openai")
            for event in turn:
                if reader.on_event(event):
                    break
            reader.finish()
        return None

    return run


class Deltas:
    """A provider that reports ``count`` one-character text deltas, then its reply."""

    def __init__(self, count: int) -> None:
        self.count = count

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        for _ in range(self.count):
            sink(TextDelta(content_index=0, delta="x"))
        return AssistantMessage(
            content=[TextContent(text="x" * self.count)], stop_reason=StopReason.STOP, usage=Usage()
        )


def loop_per_delta(deltas: int, repeat: int, *, drained: bool) -> float:
    async def one() -> None:
        agent = Agent(Deltas(deltas), ModelConfig.mock())
        if drained:
            async with agent.stream("hi") as events:
                async for _ in events:
                    pass
        else:
            await agent.prompt("hi")

    async def batches() -> float:
        await one()  # warm-up
        samples: list[float] = []
        for _ in range(repeat):
            start = time.process_time()
            for _ in range(5):
                await one()
            samples.append((time.process_time() - start) / (5 * deltas))
        return statistics.median(samples) * 1e6

    return asyncio.run(batches())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--scenario", default="T20-K3-D20-S16-A4")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--deltas", type=int, default=2000)
    a = ap.parse_args()
    if not (BENCH / "sse_server.py").exists():
        raise SystemExit(f"no shared bench at {BENCH}")
    replies = bench_replies(a.scenario)
    events = sse_events(replies)
    count = sum(len(turn) for turn in events)
    texts = [event.data for turn in events for event in turn if event.data.startswith("{")]
    rows = [
        ("floor: httpx-sse decoders + json.loads + dict reads", floor_reads(replies)),
        ("yoagent SseReader.feed", lambda: sse_events(replies)),
        ("yoagent CompletionsReader (json.loads included)", reader_run(events)),
        ("json.loads alone", lambda: [json.loads(text) for text in texts]),
    ]
    print(f"scenario {a.scenario}: {count} events in {len(replies)} replies\n")
    print("| per event | µs |\n|---|---|")
    for name, run in rows:
        print(f"| {name} | {per_event(run, count, a.repeat):.2f} |")
    for drained in (False, True):
        name = "loop, per delta, events drained" if drained else "loop, per delta, no consumer"
        print(f"| {name} | {loop_per_delta(a.deltas, a.repeat, drained=drained):.2f} |")


if __name__ == "__main__":
    main()
