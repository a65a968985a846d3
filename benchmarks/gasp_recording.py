"""What recording a run into a GASP repository costs, against the same run unrecorded.

    uv run python benchmarks/gasp_recording.py [--turns 50] [--repeat 5] [--json]

The run: ``--turns`` turns, each a scripted reply (MockProvider) asking for 3 tool calls
(``read_file`` / ``bash`` / ``search``-like arguments, trivial async tools), then one
final text reply. The model's latency is simulated: each reply takes ``L`` ms to stream
(0 = the CPU-bound extreme, no model could be that fast). Recorded = the same run with
``on_event=recording`` inside ``async with recorder.recording(...)``, so the time includes
everything up to the run's closing commit: mapping, the writer thread's appends and
fsyncs, and the ``git commit``. Both variants alternate in one process, after a warm-up;
the median of ``--repeat`` runs per variant is reported.

Where the recorded run's fixed cost goes: "after the run" is the wait from the loop's
last event to the end of the ``async with`` block (the writer catching up with the queued
events, its last fsync, and the commit); "commit" is the ``git commit`` alone, on the
repository the runs grow (its log gains one run's lines each time). CPU is the time this
process (every thread) and its git children spent, a steadier figure than wall time on a
loaded machine.

Target: recording costs ≤ 5 % of the run's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    MockProvider,
    MockReply,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
    tool,
)
from yoagent.gasp import NewGoal, Recorder

CONFIG = ModelConfig(
    api=ApiProtocol.ANTHROPIC_MESSAGES, provider="mock", id="mock", base_url="http://x", api_key="k"
)


@tool
async def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}\n" * 5


@tool
async def bash(command: str) -> str:
    """Run a command."""
    return f"$ {command}\nok"


@tool
async def search(pattern: str) -> str:
    """Search."""
    return f"3 matches for {pattern}"


def script(turns: int, latency_ms: float) -> list[MockReply]:
    delay = latency_ms / 1000 / 4  # 3 deltas (one per call) + the closing wait
    replies = []
    for turn in range(turns):
        calls = [
            ToolCall(id=f"r{turn}", name="read_file", arguments={"path": f"src/m{turn}.py"}),
            ToolCall(id=f"b{turn}", name="bash", arguments={"command": f"pytest -k t{turn}"}),
            ToolCall(id=f"s{turn}", name="search", arguments={"pattern": f"def f{turn}"}),
        ]
        message = AssistantMessage(
            content=calls, stop_reason=StopReason.TOOL_USE, usage=Usage(input=1000, output=80)
        )
        replies.append(MockReply(message=message, delay=delay, chunk_size=1_000_000))
    final = AssistantMessage(content=[TextContent(text="All done.")], usage=Usage(input=900))
    replies.append(MockReply(message=final, delay=latency_ms / 1000 / 2, chunk_size=1_000_000))
    return replies


def agent(turns: int, latency_ms: float) -> Agent:
    return Agent.from_provider(
        MockProvider(script(turns, latency_ms), validate=False),
        CONFIG,
        tools=[read_file, bash, search],
        max_repeated_tool_calls=None,
    )


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its finished children (git)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


async def plain(turns: int, latency_ms: float) -> tuple[float, float]:
    runner = agent(turns, latency_ms)
    cpu, start = cpu_seconds(), time.perf_counter()
    await runner.prompt("do the work")
    return time.perf_counter() - start, cpu_seconds() - cpu


class Timed:
    """The recorded runs' own timings: the wait after the run, and the commit alone."""

    def __init__(self, recorder: Recorder) -> None:
        self.after: list[float] = []
        self.commit: list[float] = []
        repo = recorder.repo
        commit_run = repo.commit_run

        def timed_commit(*args: Any, **kwargs: Any) -> str | None:
            start = time.perf_counter()
            try:
                return commit_run(*args, **kwargs)
            finally:
                self.commit.append(time.perf_counter() - start)

        repo.commit_run = timed_commit  # type: ignore[method-assign]


async def recorded(
    recorder: Recorder, timed: Timed, turns: int, latency_ms: float
) -> tuple[float, float]:
    runner = agent(turns, latency_ms)
    cpu, start = cpu_seconds(), time.perf_counter()
    async with recorder.recording("do the work") as recording:
        await runner.prompt("do the work", on_event=recording)
        ended = time.perf_counter()
    elapsed, used = time.perf_counter() - start, cpu_seconds() - cpu
    timed.after.append(time.perf_counter() - ended)
    if recording.error is not None or recording.commit is None:
        raise SystemExit(f"recording failed: {recording.error}")
    return elapsed, used


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


async def measure(turns: int, latency_ms: float, repeat: int, root: Path) -> dict[str, Any]:
    recorder = Recorder.init(root / f"agent-{latency_ms:g}", "bench", NewGoal("benchmark"))
    timed = Timed(recorder)
    await plain(turns, latency_ms)
    await recorded(recorder, timed, turns, latency_ms)
    timed.after.clear()
    timed.commit.clear()
    plain_runs: list[tuple[float, float]] = []
    recorded_runs: list[tuple[float, float]] = []
    for _ in range(repeat):
        plain_runs.append(await plain(turns, latency_ms))
        recorded_runs.append(await recorded(recorder, timed, turns, latency_ms))
    base = statistics.median(wall for wall, _ in plain_runs)
    rec = statistics.median(wall for wall, _ in recorded_runs)
    log = recorder.repo.log_path.read_bytes()
    return {
        "latency_ms": latency_ms,
        "plain_ms": round(base * 1000, 1),
        "recorded_ms": round(rec * 1000, 1),
        "overhead_ms": round((rec - base) * 1000, 1),
        "overhead_pct": round((rec - base) / base * 100, 2),
        "plain_cpu_ms": _ms([cpu for _, cpu in plain_runs]),
        "recorded_cpu_ms": _ms([cpu for _, cpu in recorded_runs]),
        "after_run_ms": _ms(timed.after),
        "commit_ms": _ms(timed.commit),
        "events_per_run": (log.count(b"\n") - 2) // (repeat + 1),
        "log_mb_at_end": round(len(log) / 1e6, 2),
    }


def git_commit_ms(root: Path) -> float:
    """One run commit of a one-line append to a small log (the commit's floor)."""
    recorder = Recorder.init(root / "commit-only", "bench", NewGoal("commit"))
    repo = recorder.repo
    times = []
    for index in range(10):
        with repo.log_path.open("a") as handle:
            handle.write(f'{{"n":{index}}}\n')
        start = time.perf_counter()
        repo.commit_run(f"run_{index}", recorder.goal_id, "completed")
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--latency", type=float, nargs="*", default=[0.0, 10.0, 50.0, 200.0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("GASP_BENCH_DIR")) as scratch:
        root = Path(scratch)
        rows = [
            anyio.run(measure, args.turns, latency, args.repeat, root) for latency in args.latency
        ]
        commit = git_commit_ms(root)
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    if args.json:
        print(json.dumps({"rows": rows, "git_commit_ms": commit}, indent=2))
        return
    python = sys.version.split()[0]
    print(
        f"{args.turns} turns × 3 tool calls, median of {args.repeat}; Python {python}, "
        f"{platform.machine()}, {git_version.strip()}"
    )
    print(
        "| model latency / reply | unrecorded | recorded | recording costs | share of the run "
        "| after the run | of which commit | CPU unrecorded / recorded |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['latency_ms']:g} ms | {row['plain_ms']} ms | {row['recorded_ms']} ms "
            f"| {row['overhead_ms']} ms | {row['overhead_pct']} % | {row['after_run_ms']} ms "
            f"| {row['commit_ms']} ms | {row['plain_cpu_ms']} / {row['recorded_cpu_ms']} ms |"
        )
    print(
        f"\nevents per run: {rows[0]['events_per_run']}; log at the end: "
        f"{rows[0]['log_mb_at_end']} MB; a commit of a one-line append to a small log: "
        f"{commit} ms"
    )


if __name__ == "__main__":
    main()
