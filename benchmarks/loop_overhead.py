"""The agent loop's own cost per step, against a hand-written asyncio floor.

    uv run python benchmarks/loop_overhead.py [--repeat 15] [--clock cpu] [--json] [--profile]

One step is one turn: stream one scripted reply holding 3 tool calls, run the 3 calls in
parallel (trivial async tools), append their results to the history. A run is N such
turns and one final text reply; the figure is the run's wall time divided by N, in ms.

- ``yoagent``: ``Agent.prompt`` on ``MockProvider(validate=False)``: the loop, events,
  tool middleware chain, limits, telemetry no-ops and all.
- ``yoagent+validate``: the same on the default ``MockProvider``, which also checks each
  request's whole transcript the way a real API would (a cost of the test double that
  grows with the history, reported apart so it does not hide the loop's own).
- ``floor``: the least code doing the same work: for each reply, stream its tool-call
  arguments in the same 16-character deltas, emit comparable events to a list, run the 3
  coroutines with ``asyncio.gather``, and append the results to a list.

Every variant and turn count runs in the same process and event loop, interleaved, after
a warm-up; the median of ``--repeat`` runs is reported. ``--clock cpu`` times with the
process's CPU time instead of the wall clock: on a machine shared with other work, time
the scheduler gives to other processes then counts against no variant (the loop and the
floors are all single-threaded, and nothing here waits on I/O). Targets: yoagent ≤ 2x the floor
per step, and its per-step time at 100 turns grows no more than the floor's does relative
to 10 turns (a per-step time that does not grow at all meets it, whatever the floor's
amortization).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from yoagent.core import (
    Agent,
    AssistantMessage,
    ExecutionLimits,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolContext,
    ToolResultMessage,
    UserMessage,
    tool,
)
from yoagent.core.provider import StreamConfig

TURNS = (10, 100)
CALLS_PER_TURN = 3
CHUNK = 16  # MockProvider's default delta size
TARGET_RATIO = 2.0


@tool
async def echo(n: int) -> str:
    """Return ``n`` as text."""
    return str(n)


def script(turns: int) -> list[AssistantMessage]:
    """``turns`` replies of 3 tool calls (distinct arguments each turn), then a text reply."""
    replies = [
        AssistantMessage(
            content=[
                ToolCall(id=f"call_{turn}_{k}", name="echo", arguments={"n": turn * 10 + k})
                for k in range(CALLS_PER_TURN)
            ],
            stop_reason=StopReason.TOOL_USE,
        )
        for turn in range(turns)
    ]
    replies.append(AssistantMessage(content=[TextContent(text="done")]))
    return replies


# --- the floor ---------------------------------------------------------------------------


async def _floor_tool(n: int) -> str:
    return str(n)


async def _floor_stream(reply: AssistantMessage, events: list[Any]) -> AssistantMessage:
    events.append(("message_start",))
    for index, block in enumerate(reply.content):
        if isinstance(block, ToolCall):
            raw = json.dumps(block.arguments)
            for start in range(0, len(raw), CHUNK):
                events.append(("delta", index, raw[start : start + CHUNK]))
        elif isinstance(block, TextContent):
            for start in range(0, len(block.text), CHUNK):
                events.append(("delta", index, block.text[start : start + CHUNK]))
    events.append(("message_end", reply))
    return reply


async def floor_run(replies: list[AssistantMessage]) -> list[Any]:
    """The minimal loop: stream, run the calls with gather, append, repeat."""
    history: list[Any] = [("user", "go")]
    events: list[Any] = [("agent_start",)]
    for turn, scripted in enumerate(replies, start=1):
        events.append(("turn_start", turn))
        reply = await _floor_stream(scripted, events)
        history.append(reply)
        calls = [block for block in reply.content if isinstance(block, ToolCall)]
        if not calls:
            events.append(("turn_end", turn))
            break
        for call in calls:
            events.append(("tool_start", call.id))
        outputs = await asyncio.gather(*(_floor_tool(**call.arguments) for call in calls))
        for call, output in zip(calls, outputs, strict=True):
            events.append(("tool_end", call.id, output))
            result = ("tool_result", call.id, output)
            history.append(result)
            events.append(("message_end", result))
        events.append(("turn_end", turn))
    events.append(("agent_end", history))
    return history


async def floor_parts_run(replies: list[AssistantMessage]) -> list[Any]:
    """The minimal loop over yoagent's own parts: the same ``MockProvider`` (streaming its
    deltas into an event list), the same ``@tool`` (argument validation and all), the same
    message types, ``asyncio.gather`` for the 3 calls. What it leaves out is exactly the
    loop's own machinery: events as objects, cancellation, middleware, limits, retries,
    compaction, telemetry, containment."""
    provider = MockProvider(replies, validate=False)
    model = ModelConfig.mock()
    history: list[Any] = [UserMessage.from_text("go")]
    events: list[Any] = [("agent_start",)]
    for turn in range(1, len(replies) + 1):
        events.append(("turn_start", turn))
        request = StreamConfig(model=model, system_prompt="", messages=list(history))
        reply = await provider.stream(request, events.append)
        history.append(reply)
        calls = reply.tool_calls
        if not calls:
            events.append(("turn_end", turn))
            break
        contexts = [ToolContext(tool_call_id=c.id, tool_name=c.name) for c in calls]
        outputs = await asyncio.gather(
            *(echo.execute(c.arguments, ctx) for c, ctx in zip(calls, contexts, strict=True))
        )
        for call, output in zip(calls, outputs, strict=True):
            result = ToolResultMessage(
                tool_call_id=call.id, tool_name=call.name, content=list(output.content)
            )
            history.append(result)
            events.append(("tool_end", result))
        events.append(("turn_end", turn))
    events.append(("agent_end", history))
    return history


# --- yoagent -----------------------------------------------------------------------------

_NO_LIMITS = ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None)


def _agent(replies: list[AssistantMessage], *, validate: bool) -> Agent:
    return Agent.from_provider(
        MockProvider(replies, validate=validate),
        ModelConfig.mock(),
        tools=[echo],
        limits=_NO_LIMITS,
        max_repeated_tool_calls=None,
    )


async def yoagent_run(replies: list[AssistantMessage], *, validate: bool = False) -> list[Any]:
    agent = _agent(replies, validate=validate)
    events: list[Any] = []
    await agent.prompt("go", on_event=events.append)
    return agent.messages


# --- measuring ---------------------------------------------------------------------------

Runner = Callable[[list[AssistantMessage]], Awaitable[list[Any]]]


async def _validated(replies: list[AssistantMessage]) -> list[Any]:
    return await yoagent_run(replies, validate=True)


VARIANTS: dict[str, Runner] = {
    "floor": floor_run,
    "floor:same-parts": floor_parts_run,
    "yoagent": yoagent_run,
    "yoagent+validate": _validated,
}


CLOCK = time.perf_counter_ns


async def _time_once(runner: Runner, turns: int) -> float:
    replies = script(turns)
    gc.collect()
    started = CLOCK()
    history = await runner(replies)
    elapsed = CLOCK() - started
    expected = 2 + turns * (1 + CALLS_PER_TURN)  # prompt, N x (reply + 3 results), final
    if len(history) != expected:
        raise AssertionError(f"{turns} turns left {len(history)} messages, not {expected}")
    return elapsed / 1e6 / turns


@dataclass
class Figures:
    """Median ms per step, per variant and turn count."""

    ms_per_step: dict[str, dict[int, float]]

    def ratio(self, variant: str, turns: int, floor: str = "floor") -> float:
        return self.ms_per_step[variant][turns] / self.ms_per_step[floor][turns]

    def growth(self, variant: str) -> float:
        by_turns = self.ms_per_step[variant]
        return by_turns[TURNS[-1]] / by_turns[TURNS[0]]


async def measure(repeat: int, warmup: int = 3) -> Figures:
    samples: dict[str, dict[int, list[float]]] = {v: {t: [] for t in TURNS} for v in VARIANTS}
    for round_ in range(warmup + repeat):
        # Interleaved, so that load from elsewhere on the machine hits every figure alike.
        for turns in TURNS:
            for name, runner in VARIANTS.items():
                value = await _time_once(runner, turns)
                if round_ >= warmup:
                    samples[name][turns].append(value)
    return Figures(
        {v: {t: statistics.median(s) for t, s in by.items()} for v, by in samples.items()}
    )


def table(figures: Figures) -> str:
    head = "| variant | " + " | ".join(f"ms/step @ {t} turns" for t in TURNS)
    head += " | × floor @ " + " | × floor @ ".join(str(t) for t in TURNS)
    head += " | × same-parts @ " + " | × same-parts @ ".join(str(t) for t in TURNS)
    head += f" | growth {TURNS[-1]}/{TURNS[0]} |"
    rows = [head, "|" + "---|" * (2 + 3 * len(TURNS))]
    for name, by_turns in figures.ms_per_step.items():
        cells = [f"{by_turns[t]:.3f}" for t in TURNS]
        cells += [f"{figures.ratio(name, t):.2f}" for t in TURNS]
        cells += [f"{figures.ratio(name, t, 'floor:same-parts'):.2f}" for t in TURNS]
        cells.append(f"{figures.growth(name):.2f}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def verdict(figures: Figures) -> list[str]:
    worst = max(figures.ratio("yoagent", t) for t in TURNS)
    worst_parts = max(figures.ratio("yoagent", t, "floor:same-parts") for t in TURNS)
    growth, floor_growth = figures.growth("yoagent"), figures.growth("floor")
    return [
        f"ratio target (≤ {TARGET_RATIO:.0f}x floor): worst {worst:.2f}x the bare floor -> "
        + ("met" if worst <= TARGET_RATIO else "MISSED")
        + f"; worst {worst_parts:.2f}x the same-parts floor -> "
        + ("met" if worst_parts <= TARGET_RATIO else "MISSED"),
        # Growth is per-step time at the most turns over that at the fewest. Below 1, both
        # only amortize their fixed per-run cost, which is not growth with history; 10 %
        # slack because two medians of a noisy quantity never divide to exactly 1.
        f"growth target (≤ floor's, or none): yoagent {growth:.2f}x vs floor "
        f"{floor_growth:.2f}x -> "
        + ("met" if growth <= max(1.0, floor_growth) * 1.10 else "MISSED"),
    ]


def profile(turns: int) -> None:
    """cProfile one warmed-up yoagent run; print own time per file, then per function."""
    import cProfile
    import pstats
    from collections import defaultdict

    async def profiled() -> pstats.Stats:
        await yoagent_run(script(turns))  # warm-up: first-call compilation, imports
        replies = script(turns)
        profiler = cProfile.Profile()
        profiler.enable()
        await yoagent_run(replies)
        profiler.disable()
        return pstats.Stats(profiler)

    stats = asyncio.run(profiled())
    # pstats keeps {(file, line, function): (calls, primitive calls, own time, cumulative, callers)}
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = getattr(stats, "stats")  # noqa: B009
    total = sum(float(entry[2]) for entry in raw.values())
    by_file: defaultdict[str, float] = defaultdict(float)
    for (filename, _line, _name), entry in raw.items():
        by_file[_short(filename)] += float(entry[2])
    print(f"own time by file, one {turns}-turn run ({total * 1e3:.1f} ms profiled):")
    for filename, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {seconds / total:6.1%}  {filename}")
    stats.sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats("yoagent", 20)


def _short(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1]
    if "/src/yoagent/" in filename:
        return "yoagent/" + filename.split("/src/yoagent/", 1)[1]
    if "/lib/python3" in filename:
        return "stdlib/" + filename.rsplit("/", 1)[1]
    return "builtins" if filename == "~" else filename


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per figure")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time (default) or the process's CPU time (for a shared machine)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--profile", action="store_true", help="cProfile a 100-turn run")
    args = parser.parse_args()
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.process_time_ns
    if args.profile:
        profile(TURNS[-1])
        return
    figures = asyncio.run(measure(args.repeat))
    if args.json:
        print(json.dumps(figures.ms_per_step, indent=2))
        return
    print(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"median of {args.repeat} runs, {CALLS_PER_TURN} parallel tool calls per turn, "
        f"{args.clock} clock"
    )
    print(table(figures))
    for line in verdict(figures):
        print(line)


if __name__ == "__main__":
    main()
