"""What ``Agent.from_config`` costs per agent, first and after (issue 13: ≤ 1 ms after the first).

Before the shared pool, each construction built an ``httpx.AsyncClient`` with its own TLS
context (≈ 16 ms). Now a provider borrows the event loop's shared client at its first
request, so construction builds no client at all; the first request in a loop pays for
the client once. Run: ``uv run python benchmarks/agent_construction.py``.
"""

from __future__ import annotations

import statistics
import time

import anyio

from yoagent.core import Agent
from yoagent.providers import aclose_shared_clients, models
from yoagent.providers._pool import shared_client

AGENTS = 100


def construct(config_name: str) -> tuple[float, list[float]]:
    config = {
        "anthropic": models.anthropic("claude-sonnet-5"),
        "openai": models.openai("gpt-5.5"),
        "gemini": models.gemini("gemini-2.5-pro"),
    }[config_name]
    started = time.perf_counter()
    Agent.from_config(config, system_prompt="s")
    first = time.perf_counter() - started
    rest: list[float] = []
    for _ in range(AGENTS - 1):
        started = time.perf_counter()
        Agent.from_config(config, system_prompt="s")
        rest.append(time.perf_counter() - started)
    return first, rest


async def first_client() -> tuple[float, float]:
    started = time.perf_counter()
    shared_client("https://api.anthropic.com")
    first = time.perf_counter() - started
    started = time.perf_counter()
    shared_client("https://api.openai.com/v1")  # another origin: TLS context reused
    second = time.perf_counter() - started
    await aclose_shared_clients()
    return first, second


def main() -> None:
    print("| config | first agent | next 99: median | next 99: max |")
    print("|---|---|---|---|")
    for name in ("anthropic", "openai", "gemini"):
        first, rest = construct(name)
        print(
            f"| {name} | {first * 1000:.3f} ms | {statistics.median(rest) * 1000:.3f} ms | "
            f"{max(rest) * 1000:.3f} ms |"
        )
    first, second = anyio.run(first_client)
    print(
        f"\nshared client, paid once per event loop at the first request: first "
        f"{first * 1000:.1f} ms (builds the TLS context), another server "
        f"{second * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
