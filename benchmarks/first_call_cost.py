"""What a process's first model call costs with yoagent-pricing installed, by what it loads.

Core runs the ``yoagent.pricing`` autoload entry point at the first model call. Each row is
a fresh interpreter that builds an agent (with or without a ``@tool``, which loads
pydantic) on the mock provider and runs one prompt; ``whole package`` first loads every
public name of ``yoagent.pricing``, which is what the entry point loaded before it was made
lazy. Prints the first prompt's wall time and the RSS it added (medians of ``--runs``).

    uv run python benchmarks/first_call_cost.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = """
import asyncio, json, sys, time
def rss_kb():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0])
from yoagent.core import Agent, MockProvider, ModelConfig, tool
tools = []
if sys.argv[2] == "tool":
    @tool
    async def echo(text: str) -> str:
        '''Echo.'''
        return text
    tools = [echo]
agent = Agent.from_provider(MockProvider.text("hi"), ModelConfig.mock(), tools=tools)
before, started = rss_kb(), time.perf_counter()
if sys.argv[1] == "whole":
    import yoagent.pricing
    for name in yoagent.pricing.__all__:
        getattr(yoagent.pricing, name)
asyncio.run(agent.prompt("go"))
print(json.dumps({"ms": (time.perf_counter() - started) * 1000, "mb": (rss_kb() - before) / 1024}))
"""


def measure(load: str, tools: str, runs: int) -> tuple[float, float]:
    seen = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", CHILD, load, tools],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(s["ms"] for s in seen), statistics.median(s["mb"] for s in seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| agent | pricing loaded at the first call | first prompt ms | RSS added MB |")
    print("|---|---|---|---|")
    for tools in ("none", "tool"):
        for load, label in (
            ("whole", "whole package (before)"),
            ("lazy", "entry point only (now)"),
        ):
            ms, mb = measure(load, tools, args.runs)
            agent = "no tools" if tools == "none" else "one @tool"
            print(f"| {agent} | {label} | {ms:.0f} | {mb:.1f} |")


if __name__ == "__main__":
    main()
