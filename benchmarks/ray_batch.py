"""A batch of agent runs on Ray (yoagent.ray) vs the same batch with anyio in one process.

Each run is one agent on the scripted OpenAI-compatible server of yoagent-ray's tests
(loopback, in a process of its own, so it takes no GIL from either side). Two workloads:

- ``io``: one model request the server holds for ``--latency`` seconds, then the reply.
- ``cpu``: the model calls a tool that burns ``--cpu-ms`` of CPU, then answers: what a
  run that parses, greps or tests locally looks like. One process has one core for it.

Each figure is the median of ``--repeat`` rounds after one warm-up round. Both sides
keep at most ``--concurrency`` runs in flight. Ray runs on a local cluster
(``ray.init(num_cpus=N)``) over a :class:`~yoagent.ray.WorkerPool` started once, before
timing (its start-up is reported apart). Run it with
``uv run python benchmarks/ray_batch.py``; it prints a Markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # workers on this interpreter

import anyio
import ray

from yoagent.core import Agent, ApiProtocol, ModelConfig, tool
from yoagent.ray import AgentTask, Batch, WorkerPool

SERVER = Path(__file__).parents[1] / "integrations" / "yoagent-ray" / "tests" / "model_server.py"


def burn_for(milliseconds: int) -> str:
    """Spend CPU for a while (stands in for local work: parsing, grepping, testing)."""
    deadline = time.process_time() + milliseconds / 1000
    digest = b""
    while time.process_time() < deadline:
        digest = hashlib.sha256(digest).digest()
    return digest.hex()[:8]


def make_agent(task: AgentTask) -> Agent:
    """The run's agent (pickled by value: this script is ``__main__``)."""
    data: dict[str, Any] = task.data

    @tool
    def burn() -> str:
        """Do the local work."""
        return burn_for(data["cpu_ms"])

    config = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS, provider="scripted", id="m", base_url=data["url"]
    )
    return Agent.from_config(config, tools=[burn])


def tasks(count: int, workload: str, url: str, latency: float, cpu_ms: int) -> list[AgentTask]:
    prompt = f"slow {latency}" if workload == "io" else "call burn"
    data = {"url": url, "cpu_ms": cpu_ms}
    return [AgentTask(id=str(i), prompt=prompt, data=data) for i in range(count)]


async def run_anyio(batch: list[AgentTask], concurrency: int) -> int:
    """The same runs in this process, at most ``concurrency`` at once."""
    limiter = anyio.CapacityLimiter(concurrency)
    ok = 0

    async def one(task: AgentTask) -> None:
        nonlocal ok
        async with limiter, make_agent(task) as agent:
            await agent.prompt(task.prompt)
            ok += 1

    async with anyio.create_task_group() as group:
        for task in batch:
            group.start_soon(one, task)
    return ok


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,10,100,1000")
    parser.add_argument("--workloads", default="io,cpu")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--cpu-ms", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="ERROR")
    init_seconds = time.perf_counter() - started
    pool = WorkerPool(args.cpus, slots=args.concurrency, worker_options={"num_cpus": 1})
    started = time.perf_counter()
    pool.pids()  # the workers are up
    pool_seconds = time.perf_counter() - started
    print(f"ray.init: {init_seconds:.1f}s; {args.cpus} workers up: {pool_seconds:.1f}s\n")
    print("| workload | tasks | anyio s | anyio runs/s | ray s | ray runs/s | ray/anyio |")
    print("|---|---|---|---|---|---|---|")
    server = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        for workload in args.workloads.split(","):
            for size in sizes:
                batch = tasks(size, workload, url, args.latency, args.cpu_ms)
                anyio_times: list[float] = []
                ray_times: list[float] = []
                for _ in range(args.repeat + 1):  # the first round warms both sides up
                    begin = time.perf_counter()
                    ok = anyio.run(run_anyio, batch, args.concurrency)
                    anyio_times.append(time.perf_counter() - begin)
                    begin = time.perf_counter()
                    ray_batch = Batch(batch, make_agent, pool=pool, concurrency=args.concurrency)
                    results = list(ray_batch)
                    ray_times.append(time.perf_counter() - begin)
                    assert ok == size, "anyio runs failed"
                    assert ray_batch.report.succeeded == len(results) == size, ray_batch.report
                anyio_seconds = statistics.median(anyio_times[1:])
                ray_seconds = statistics.median(ray_times[1:])
                print(
                    f"| {workload} | {size} | {anyio_seconds:.2f} | {size / anyio_seconds:.0f} "
                    f"| {ray_seconds:.2f} | {size / ray_seconds:.0f} "
                    f"| {ray_seconds / anyio_seconds:.2f} |",
                    flush=True,
                )
    finally:  # never leave the server behind, whatever happened
        server.kill()
        server.wait()
    pool.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
