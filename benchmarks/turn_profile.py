"""Where one agent turn's CPU goes: a cProfile of the shared bench's yoagent client.

Starts the shared benchmark's SSE server (``../shared/bench/sse_server.py``, in the
bench's server venv), runs the bench's own ``yoagent_client.py`` (or, with ``--client floor``, the
hand-written ``floor.py``) conversation once cold,
then profiles ``--conversations`` warm ones (or, with ``--concurrency N``, one batch of N
at once as the bench's scenario d runs them) and prints, per turn (= per model request):

* the CPU by library (the module that owns each function's own time),
* the functions with the most own time, and the yoagent functions with the most
  cumulative time;
* the garbage collector's CPU per generation, and with ``--concurrency`` the objects it
  tracks per live run (a full collection walks all of them).

    uv run python benchmarks/turn_profile.py --scenario T20-K3-D20-S16-A4 --conversations 30

Needs ``../shared/bench`` and its server venv (``../shared/bench/setup_venvs.sh``); profile
figures are inflated by cProfile itself (every call is hooked), so read them as shares.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / ".." / "shared" / "bench"

GROUPS = (
    ("yoagent.core", "/yoagent/core/"),
    ("yoagent.providers", "/yoagent/providers/"),
    ("httpx", "/httpx/"),
    ("httpx_sse", "/httpx_sse/"),
    ("httpcore", "/httpcore/"),
    ("h11", "/h11/"),
    ("anyio", "/anyio/"),
    ("pydantic", "/pydantic"),
    ("asyncio", "/asyncio/"),
    ("json", "/json/"),
    ("bench client", "/clients/"),
)


def group_of(filename: str) -> str:
    """The library a profiled function belongs to, by its file path."""
    for name, part in GROUPS:
        if part in filename:
            return name
    if filename == "~":
        return "builtins (C)"
    return "other stdlib/other"


class GcMeter:
    """The collector's CPU per generation while enabled (cProfile charges a collection to
    whichever function allocated when it ran, so the profile alone hides it)."""

    def __init__(self) -> None:
        self.cpu = [0.0, 0.0, 0.0]
        self.count = [0, 0, 0]
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.cpu[info["generation"]] += time.process_time() - self._started
            self.count[info["generation"]] += 1

    def __enter__(self) -> GcMeter:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    def per_turn(self, turns: int) -> str:
        """Collections and CPU ms per turn, by generation."""
        return ", ".join(
            f"gen{g} {self.count[g]}x {self.cpu[g] * 1e3 / turns:.3f}" for g in range(3)
        )


def start_server(python: str) -> tuple[subprocess.Popen[bytes], str]:
    """The bench's SSE server on a free loopback port, and its base address."""
    port_file = Path(f"/tmp/turn-profile-port-{os.getpid()}")
    port_file.unlink(missing_ok=True)
    server = subprocess.Popen([python, str(BENCH / "sse_server.py"), "--port-file", str(port_file)])
    deadline = time.monotonic() + 20
    while not port_file.exists() or not port_file.read_text().strip():
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("sse_server did not start")
        time.sleep(0.05)
    host = f"http://127.0.0.1:{port_file.read_text().strip()}"
    port_file.unlink()
    return server, host


def main() -> None:
    """Profile warm conversations of one scenario and print the per-turn breakdown."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--scenario",
        default="T20-K3-D20-S16-A4",
        help="bench scenario code (a = T20-K3-D20-S16-A4)",
    )
    ap.add_argument(
        "--client", choices=("yoagent", "floor"), default="yoagent", help="whose turn to profile"
    )
    ap.add_argument("--conversations", type=int, default=30)
    ap.add_argument(
        "--concurrency",
        type=int,
        default=0,
        help="N > 0: profile ONE batch of N conversations at once (after a warm-up batch of 10),"
        " as the bench's scenario d runs them, instead of --conversations one after another",
    )
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--dump", help="also write the raw profile here (for pstats' callers view)")
    ap.add_argument(
        "--server-python",
        default=str(
            Path(os.environ.get("BENCH_VENVS", "/tmp/benchvenvs")) / "server" / "bin" / "python"
        ),
    )
    a = ap.parse_args()
    if not BENCH.is_dir():
        raise SystemExit(f"no shared bench at {BENCH}")
    sys.path.insert(0, str(BENCH / "clients"))
    sys.path.insert(0, str(BENCH))
    import importlib

    scenario: Any = importlib.import_module("scenario")

    client: Any = importlib.import_module("yoagent_client" if a.client == "yoagent" else "floor")
    if a.concurrency:
        common: Any = importlib.import_module("_common")
        common._pool_size = a.concurrency  # the floor sizes its one pool N, as in scenario d
        common._raise_nofile(a.concurrency)

    sc: Any = scenario.Scenario.parse(a.scenario)
    server, host = start_server(a.server_python)
    try:
        lib = client.load()
        url = f"{host}/p/profile/{sc.code}/v1"

        async def conversations(n: int) -> None:
            for _ in range(n):
                agent = client.make_agent(lib, url)
                await client.run(lib, agent)

        tracked: list[int] = []  # objects the collector tracks: before the batch, at its end

        async def at_once(n: int) -> None:
            agents = [client.make_agent(lib, url) for _ in range(n)]
            await asyncio.gather(*(client.run(lib, agent) for agent in agents))
            tracked.append(len(gc.get_objects()))  # the N agents (and their histories) alive

        async def profiled() -> tuple[cProfile.Profile, float]:
            await conversations(1)  # cold: imports, the shared client, first-use caches
            if a.concurrency:
                await at_once(10)
            gc.collect()
            tracked.clear()
            tracked.append(len(gc.get_objects()))
            profile = cProfile.Profile(time.process_time)  # CPU, not wall: the machine is shared
            c0 = time.process_time()
            with meter:
                profile.enable()
                if a.concurrency:
                    await at_once(a.concurrency)
                else:
                    await conversations(a.conversations)
                profile.disable()
            return profile, time.process_time() - c0

        meter = GcMeter()
        profile, cpu = asyncio.run(profiled())
    finally:
        server.terminate()  # its "CancelledError" callbacks on stderr at exit are harmless
        server.wait()

    if a.dump:
        profile.dump_stats(a.dump)
    turns = (a.concurrency or a.conversations) * sc.requests_per_run
    stats = pstats.Stats(profile)
    raw = cast(
        dict[tuple[str, int, str], tuple[int, int, float, float, Any]],
        stats.stats,  # type: ignore[attr-defined]  # pstats keeps its table untyped
    )
    total = sum(tt for (_cc, _nc, tt, _ct, _callers) in raw.values())
    by_group: dict[str, float] = defaultdict(float)
    for (filename, _line, _name), (_cc, _nc, tt, _ct, _callers) in raw.items():
        by_group[group_of(filename)] += tt
    shape = f"{a.concurrency} at once" if a.concurrency else f"{a.conversations} warm conversations"
    print(f"{a.client}, scenario {sc.code}: {shape}, {turns} turns")
    print(
        f"CPU under the profiler: {cpu * 1e3 / turns:.2f} ms/turn"
        f" (profiled own time {total * 1e3 / turns:.2f})"
    )
    print(f"garbage collector (inside the figures above), ms/turn: {meter.per_turn(turns)}")
    if a.concurrency and len(tracked) == 2:
        per_run = (tracked[1] - tracked[0]) / a.concurrency
        print(f"objects the collector tracks: {tracked[0]} before, {per_run:.0f} more per run")
    print("\n| library | µs/turn | share |\n|---|---|---|")
    for name, tt in sorted(by_group.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {tt * 1e6 / turns:.0f} | {tt / total:.1%} |")

    def label(key: tuple[str, int, str]) -> str:
        filename, line, name = key
        if filename == "~":
            return name
        short = filename.split("site-packages/")[-1].split("/src/")[-1]
        return f"{short}:{line}({name})"

    print("\n| function (own time) | calls/turn | own µs/turn | share |\n|---|---|---|---|")
    for key, (_cc, nc, tt, _ct, _callers) in sorted(raw.items(), key=lambda kv: -kv[1][2])[: a.top]:
        print(f"| `{label(key)}` | {nc / turns:.1f} | {tt * 1e6 / turns:.1f} | {tt / total:.1%} |")
    print(
        "\n| yoagent function (cumulative) | calls/turn | cum µs/turn | share |\n|---|---|---|---|"
    )
    ours = [kv for kv in raw.items() if "/yoagent/" in kv[0][0]]
    for key, (_cc, nc, _tt, ct, _callers) in sorted(ours, key=lambda kv: -kv[1][3])[: a.top]:
        print(f"| `{label(key)}` | {nc / turns:.1f} | {ct * 1e6 / turns:.1f} | {ct / total:.1%} |")


if __name__ == "__main__":
    main()
