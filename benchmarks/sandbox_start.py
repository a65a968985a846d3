"""Starting a sandboxed command against an unsandboxed one (yoagent-tools, issue 33).

Each figure is the wall time of one whole ``bash`` tool call running ``true`` (spawn, wait,
read the pipes, build the result), median of ``--repeat`` calls after 3 warm-up calls, every
variant interleaved. The workspace is a folder holding a ``.git`` (so ``workspace-write``
pins it and makes its hooks and config read-only). Variants:

- **none**: ``BashTool()``, no sandbox (today's behaviour, and ``full-access``).
- **landlock**: ``workspace-write``, network off: the confinement step makes a network and
  a mount namespace, binds ``.git``, applies Landlock, then ``exec``s bash.
- **landlock:net-on**: ``workspace-write`` with the network on and no ``.git``: Landlock
  alone, no namespace.
- **bubblewrap**: ``workspace-write``, network off, under ``bwrap``.

And the parts, each as a bare ``subprocess.run`` (no tool around it):

- **exec:bash**: ``bash -c true``.
- **exec:python -I -S**: an interpreter start without ``site`` (the confinement step's floor).
- **exec:confine**: the confinement step running ``true`` (as the tool starts it: ``-I -S``
  and the step's source after ``-c``).
- **exec:confine -m**: the same step started as ``python -m yoagent.tools._confine`` (with
  ``site``: what running it without saves).

Usage: ``uv run python benchmarks/sandbox_start.py [--repeat 40] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from yoagent.core import ToolContext
from yoagent.tools import BashTool, CommandSandbox, SandboxUnavailableError
from yoagent.tools._confine import landlock_abi
from yoagent.tools._mechanisms import launcher, render

Variant = Callable[[], Awaitable[None]]
_KEPT: list[CommandSandbox] = []


def tool_variant(tool: BashTool) -> Variant:
    ctx = ToolContext(tool_call_id="1", tool_name="bash")

    async def call() -> None:
        await tool.execute({"command": "true"}, ctx)

    return call


def exec_variant(argv: list[str], cwd: str) -> Variant:
    def start() -> None:
        subprocess.run(argv, cwd=cwd, check=True)

    async def call() -> None:
        await anyio.to_thread.run_sync(start)

    return call


def variants(workspace: Path, plain: Path) -> dict[str, Variant]:
    found: dict[str, Variant] = {"none": tool_variant(BashTool(cwd=workspace))}
    for name, mechanism, network, folder in (
        ("landlock", "landlock", False, workspace),
        ("landlock:net-on", "landlock", True, plain),
        ("bubblewrap", "bubblewrap", False, workspace),
    ):
        sandbox = CommandSandbox(
            writable_paths=[folder],
            network=network,
            mechanisms=[mechanism],  # type: ignore[list-item]
        )
        try:
            sandbox.resolve()
        except SandboxUnavailableError as error:
            print(f"skipping {name}: {error}", file=sys.stderr)
            continue
        found[name] = tool_variant(BashTool(cwd=folder, sandbox=sandbox))
    cwd = str(workspace)
    found["exec:bash"] = exec_variant(["bash", "-c", "true"], cwd)
    found["exec:python -I -S"] = exec_variant([sys.executable, "-I", "-S", "-c", "pass"], cwd)
    if landlock_abi() >= 1:
        sandbox = CommandSandbox(writable_paths=[workspace], mechanisms=["landlock"])
        _KEPT.append(sandbox)  # its temporary folder lives as long as the sandbox
        python = launcher("landlock", [str(workspace)])
        line = render("landlock", sandbox.plan(), ["true"], cwd, launcher=python)
        found["exec:confine"] = exec_variant(line, cwd)
        module = [sys.executable, "-m", "yoagent.tools._confine", *line[5:]]
        found["exec:confine -m"] = exec_variant(module, cwd)
    return found


async def measure(found: dict[str, Variant], repeat: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in found}
    for round_number in range(repeat + 3):
        for name, call in found.items():
            started = time.perf_counter()
            await call()
            if round_number >= 3:
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        workspace = Path(base, "ws")
        (workspace / ".git" / "hooks").mkdir(parents=True)
        (workspace / ".git" / "config").write_text("")
        plain = Path(base, "plain")
        plain.mkdir()
        found = variants(workspace, plain)
        times = anyio.run(measure, found, args.repeat)
    floor = statistics.median(times["none"])
    print(
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}, "
        f"{os.cpu_count()} cores, Landlock ABI {landlock_abi()}, {args.repeat} calls each\n"
    )
    print("| variant | median ms | p90 ms | + ms over none |")
    print("|---|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        extra = f"{median - floor:+.1f}" if not name.startswith("exec:") else "—"
        print(f"| {name} | {median:.1f} | {p90:.1f} | {extra} |")
    if args.json is not None:
        args.json.write_text(json.dumps(times, indent=1))


if __name__ == "__main__":
    main()
