"""What recording and replaying cost per turn, against the same run on MockProvider.

    uv run python benchmarks/replay.py [--repeat 7] [--json]

One turn: the model streams 400 characters of text and one tool call (16-character
deltas, MockProvider's default), the tool returns 2,000 characters, and the result goes
back in the next request. A run is N such turns plus a final text reply; the figure is
the run's wall time divided by N, in ms.

- ``floor``: ``Agent.prompt`` on ``MockProvider(validate=False)``: the run itself.
- ``floor+body``: the same, the provider also turning each request's messages into JSON
  text, as every real provider does to send them (the least any code that looks at the
  whole request pays: that grows with the history).
- ``record``: the same provider wrapped in ``RecordingProvider`` (tool results recorded
  too), writing the cassette to a temporary folder.
- ``replay``: ``ReplayProvider`` serving that cassette, tools replayed (none runs).

Also reported: the cassette's size per turn, against what it would be with every request
written out in full (each holds the whole history, so that grows with the run).

Targets: record and replay each ≤ 3x ``floor+body`` per turn, at 10 and at 100 turns
(they serialize each request and compare or share it with the recording, a few passes
over the history where a provider makes one), and the cassette's size per turn constant
(±20 %) from 10 to 100 turns.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from yoagent.core import (
    Agent,
    AssistantMessage,
    ExecutionLimits,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    messages_adapter,
    tool,
)
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.testing import Cassette, RecordingProvider, ReplayProvider

TURNS = (10, 100)
NO_LIMITS = ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None)
OUTPUT = "y" * 2000


@tool
async def look(n: int) -> str:
    """Look at something."""
    return OUTPUT


def script(turns: int) -> list[AssistantMessage]:
    replies = [
        AssistantMessage(
            content=[
                TextContent(text=f"turn {i} " + "x" * 393),
                ToolCall(id=f"call_{i}", name="look", arguments={"n": i}),
            ],
            stop_reason=StopReason.TOOL_USE,
        )
        for i in range(turns)
    ]
    return [*replies, AssistantMessage(content=[TextContent(text="done")])]


class BodyBuilding:
    """MockProvider, also serializing each request's messages as a real provider does."""

    def __init__(self, turns: int) -> None:
        self.inner = MockProvider(script(turns), validate=False)

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        json.dumps(messages_adapter.dump_python(list(config.messages), mode="json"))
        return await self.inner.stream(config, sink)


async def run(provider: Any, tools: list[Any]) -> float:
    agent = Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=tools,
        max_repeated_tool_calls=None,
        compaction=False,
        limits=NO_LIMITS,
    )
    gc.collect()
    started = time.perf_counter()
    await agent.prompt("go")
    return time.perf_counter() - started


async def measure(turns: int, folder: Path) -> dict[str, float]:
    floor = await run(MockProvider(script(turns), validate=False), [look])
    body = await run(BodyBuilding(turns), [look])
    path = folder / f"run-{turns}.jsonl"
    recorder = RecordingProvider(MockProvider(script(turns), validate=False), path)
    record = await run(recorder, recorder.record_tools([look]))
    replayer = ReplayProvider(path)
    replay = await run(replayer, replayer.replay_tools([look]))
    assert replayer.mismatches == []
    assert replayer.unplayed == []
    assert replayer.served == turns + 1, "the run stopped early"
    cassette = Cassette.load(path)
    full = sum(len(json.dumps(call.to_json(), separators=(",", ":"))) for call in cassette.calls)
    return {
        "floor": floor * 1000 / turns,
        "floor+body": body * 1000 / turns,
        "record": record * 1000 / turns,
        "replay": replay * 1000 / turns,
        "bytes_per_turn": path.stat().st_size / turns,
        "full_bytes_per_turn": full / turns,
    }


async def main(repeat: int) -> dict[int, dict[str, float]]:
    results: dict[int, list[dict[str, float]]] = {turns: [] for turns in TURNS}
    with tempfile.TemporaryDirectory() as folder:
        for turns in TURNS:  # warm-up
            await measure(turns, Path(folder))
        for _ in range(repeat):
            for turns in TURNS:
                results[turns].append(await measure(turns, Path(folder)))
    return {
        turns: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for turns, runs in results.items()
    }


def report(medians: dict[int, dict[str, float]]) -> None:
    print(f"python {platform.python_version()}, {platform.machine()}")
    print(
        "| variant | ms/turn @ 10 | ms/turn @ 100 | × floor+body @ 10 | × floor+body @ 100 "
        "| growth 100/10 |"
    )
    print("|---|---|---|---|---|---|")
    small, large = medians[TURNS[0]], medians[TURNS[1]]
    for name in ("floor", "floor+body", "record", "replay"):
        print(
            f"| {name} | {small[name]:.3f} | {large[name]:.3f} | "
            f"{small[name] / small['floor+body']:.2f} | "
            f"{large[name] / large['floor+body']:.2f} | {large[name] / small[name]:.2f} |"
        )
    for turns in TURNS:
        m = medians[turns]
        print(
            f"cassette @ {turns} turns: {m['bytes_per_turn']:.0f} bytes/turn "
            f"(requests in full: {m['full_bytes_per_turn']:.0f})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    figures = anyio.run(main, options.repeat)
    if options.json:
        print(json.dumps(figures, indent=2))
    else:
        report(figures)
