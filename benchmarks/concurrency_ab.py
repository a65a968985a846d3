"""N conversations at once in one process, as the bench's scenario d runs them, with the pool
variants the official harness cannot choose: what the HTTP pool costs and what it hides.

Starts the shared bench's SSE server and runs the bench's own client (``yoagent_client.py``
or the hand-written ``floor.py``): one conversation alone, 10 at once, then N at once while
a ticker sleeps 10 ms in a loop (event-loop lag). Prints CPU per turn, the lag, the
collector's CPU per generation and the objects it tracks per live run. With ``--memory`` it
measures instead what a live run holds: the Python heap (``tracemalloc``, started after the
warm-up) at its peak during the batch and once the batch has finished with its N agents
still referenced, per run, and the process's resident memory the same way (``VmHWM`` after
a reset of the peak mark, ``VmRSS``). CPU and lag are not printed then: tracing every
allocation slows the process several times.

    uv run python benchmarks/concurrency_ab.py floor 1000                  # httpcore's pool
    uv run python benchmarks/concurrency_ab.py floor 1000 --variant linear # yoagent's assignment
    uv run python benchmarks/concurrency_ab.py yoagent 1000 --variant main # as on main (20 idle)
    uv run python benchmarks/concurrency_ab.py yoagent 1000                # the default
    uv run python benchmarks/concurrency_ab.py yoagent 1000 --memory       # KB per live run

Needs ``../shared/bench`` and its server venv (``../shared/bench/setup_venvs.sh``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from turn_profile import BENCH, GcMeter, start_server


def _variant(name: str) -> None:
    import httpx

    from yoagent.core._support import http, http_pool

    if name == "linear":  # every httpx.AsyncClient gets yoagent's pool assignment
        init = httpx.AsyncClient.__init__

        def patched(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            http_pool.use_linear_pools(self)

        httpx.AsyncClient.__init__ = patched
    elif name == "main":  # the factory as on main: 20 idle connections, httpcore's assignment
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=20)
        http.HTTP_POOL_LIMITS = limits  # pyright: ignore[reportAttributeAccessIssue]
        http_pool._LINEAR_POOLS = {}  # pyright: ignore[reportAttributeAccessIssue, reportPrivateUsage]


def main() -> None:
    """Run one batch of N conversations at once and print its figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("client", choices=("yoagent", "floor"))
    ap.add_argument("n", type=int)
    ap.add_argument("--variant", choices=("default", "linear", "main"), default="default")
    ap.add_argument("--scenario", default="T5-K2-D10-S16-A4", help="scenario d's conversation")
    ap.add_argument("--memory", action="store_true", help="measure the memory a live run holds")
    ap.add_argument(
        "--server-python",
        default=str(
            Path(os.environ.get("BENCH_VENVS", "/tmp/benchvenvs")) / "server" / "bin" / "python"
        ),
    )
    a = ap.parse_args()
    sys.path.insert(0, str(BENCH / "clients"))
    sys.path.insert(0, str(BENCH))
    scenario: Any = importlib.import_module("scenario")
    client: Any = importlib.import_module("yoagent_client" if a.client == "yoagent" else "floor")
    common: Any = importlib.import_module("_common")
    common._pool_size = a.n  # the floor sizes its one pool N, as in scenario d
    common._raise_nofile(a.n)
    if a.variant != "default":
        _variant(a.variant)
    sc: Any = scenario.Scenario.parse(a.scenario)
    server, host = start_server(a.server_python)
    try:
        lib = client.load()
        url = f"{host}/p/ab/{sc.code}/v1"
        tracked: list[int] = []

        async def at_once(n: int) -> list[Any]:
            agents = [client.make_agent(lib, url) for _ in range(n)]
            await asyncio.gather(*(client.run(lib, agent) for agent in agents))
            tracked.append(len(gc.get_objects()))
            return agents

        async def memory() -> None:
            await at_once(1)
            await at_once(10)
            # Resident memory first, untraced (tracemalloc's own records would count).
            gc.collect()
            rss0 = _status_kb("VmRSS:")
            peak_reset = _reset_peak_rss()
            held = await at_once(a.n)
            gc.collect()
            rss, rss_peak = _status_kb("VmRSS:"), _status_kb("VmHWM:")
            del held
            gc.collect()
            tracemalloc.start()
            heap0 = tracemalloc.get_traced_memory()[0]
            held = await at_once(a.n)
            gc.collect()
            heap, heap_peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(
                f"{a.client} ({a.variant}) N={a.n}, KB per live run: resident peak"
                f" {(rss_peak - rss0) / a.n:.1f}{'' if peak_reset else ' (peak mark not reset)'},"
                f" after {(rss - rss0) / a.n:.1f}; Python heap (a second batch, traced) peak"
                f" {(heap_peak - heap0) / 1024 / a.n:.1f}, held after"
                f" {(heap - heap0) / 1024 / a.n:.1f} ({len(held)} agents referenced)"
            )

        async def batch() -> tuple[float, float, list[float]]:
            await at_once(1)
            await at_once(10)
            gc.collect()
            tracked.clear()
            tracked.append(len(gc.get_objects()))
            lags: list[float] = []
            done = asyncio.Event()

            async def ticker() -> None:
                while not done.is_set():
                    t = time.perf_counter()
                    await asyncio.sleep(0.01)
                    lags.append(time.perf_counter() - t - 0.01)

            tick = asyncio.create_task(ticker())
            c0, w0 = time.process_time(), time.perf_counter()
            with meter:
                await at_once(a.n)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            done.set()
            await tick
            return cpu, wall, sorted(lags)

        if a.memory:
            asyncio.run(memory())
            return
        meter = GcMeter()
        cpu, wall, lags = asyncio.run(batch())
    finally:
        server.terminate()
        server.wait()
    turns = a.n * sc.requests_per_run

    def lag(q: float) -> float:
        return lags[min(len(lags) - 1, int(q * len(lags)))] * 1e3

    print(
        f"{a.client} ({a.variant}) N={a.n}: {cpu * 1e3 / turns:.2f} ms CPU/turn, wall {wall:.1f} s,"
        f" lag p50 {lag(0.5):.0f} / p99 {lag(0.99):.0f} ms ({len(lags)} ticks)"
    )
    print(f"  collector ms/turn: {meter.per_turn(turns)}")
    print(f"  tracked objects: {tracked[0]} before, {(tracked[1] - tracked[0]) / a.n:.0f} per run")
    print(f"  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _status_kb(field: str) -> int:
    """A ``/proc/self/status`` figure in KB (``VmRSS:``, ``VmHWM:``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise LookupError(field)


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark so ``VmHWM`` measures only what follows."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


if __name__ == "__main__":
    main()
