"""The Python search engine on a one-line file: time and memory against the file's size.

Each measurement runs in a fresh interpreter (so peak RSS is its own): it builds nothing,
only searches a file made beforehand. Variants:

- **floor:read**: read the file in 1 MiB chunks and drop them (the I/O floor).
- **python**: ``SearchTool(engine="python")`` for a pattern found at the end of the line.
- **python:miss**: the same with a pattern that is nowhere (every byte is scanned).
- **ripgrep**: ``SearchTool(engine="ripgrep")`` (rg's own memory is not in the RSS figure).

Figures: wall time (median of ``--repeat`` runs), peak RSS growth over the interpreter's
baseline, and tracemalloc's peak (Python-level allocations).

Usage: ``uv run python benchmarks/search_engine.py [--sizes 75,150,300] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time, tracemalloc
import anyio
from yoagent.core import ToolContext
from yoagent.tools import PathSandbox, SearchTool

variant, folder, pattern = sys.argv[1], sys.argv[2], sys.argv[3]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
started = time.perf_counter()
if variant == "floor:read":
    with open(folder + "/one-line.txt", "rb", buffering=0) as file:
        while file.read(1 << 20):
            pass
    text = ""
else:
    engine = "ripgrep" if variant == "ripgrep" else "python"
    tool = SearchTool(PathSandbox([folder]), engine=engine, timeout=600)
    ctx = ToolContext(tool_call_id="1", tool_name="search")
    text = anyio.run(tool.execute, {"pattern": pattern}, ctx).text
elapsed = time.perf_counter() - started
_, peak = tracemalloc.get_traced_memory()
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(json.dumps({"s": elapsed, "rss_kb": grown, "traced": peak, "text": text[:60]}))
"""


def make_file(folder: str, megabytes: int) -> None:
    """A single line of ``megabytes`` MiB of ``x``, then ``needle`` and a newline."""
    block = b"x" * (1 << 20)
    with open(os.path.join(folder, "one-line.txt"), "wb") as file:
        for _ in range(megabytes):
            file.write(block)
        file.write(b"needle\n")


def measure(variant: str, folder: str, pattern: str) -> dict[str, float]:
    """One run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, variant, folder, pattern],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    """Measure every variant at every size and print a Markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="75,150,300", help="file sizes in MiB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    variants = [
        ("floor:read", "needle"),
        ("python", "needle"),
        ("python:miss", "absent"),
        ("ripgrep", "needle"),
    ]
    print("| variant | MiB | s (median) | MB/s | peak RSS growth MB | tracemalloc peak MB |")
    print("|---|---|---|---|---|---|")
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            make_file(folder, size)
            for variant, pattern in variants:
                runs = [measure(variant, folder, pattern) for _ in range(args.repeat)]
                seconds = statistics.median(run["s"] for run in runs)
                rss = max(run["rss_kb"] for run in runs) / 1024
                traced = max(run["traced"] for run in runs) / (1 << 20)
                print(
                    f"| {variant} | {size} | {seconds:.2f} | {size / seconds:.0f} | "
                    f"{rss:.1f} | {traced:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
