"""What yoagent-mcp costs a user: the import time the mcp SDK adds, and its install size.

    uv run python benchmarks/mcp_import_cost.py [--repeat 7] [--install-size]

Import time: each import in a fresh interpreter (``python -X importtime`` is not used:
the wall time of ``import X`` in a new process, minus the empty interpreter's, is what a
user waits), median of ``--repeat`` runs:

- ``yoagent.core`` (must not import the SDK), ``yoagent.mcp`` (must not either: it loads
  the SDK when a client connects), and what connecting loads: ``mcp`` plus
  ``mcp.client.streamable_http``.

``--install-size`` builds two throwaway venvs with uv (yoagent-core + yoagent-providers,
then the same plus yoagent-mcp) and reports the size of each site-packages and the
distributions the second adds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "(empty interpreter)": "pass",
    "yoagent.core": "import yoagent.core",
    "yoagent.mcp": "import yoagent.mcp",
    "mcp SDK (what connecting loads)": "import mcp, mcp.client.streamable_http",
    "yoagent.providers (httpx)": "import yoagent.providers",
}


def _time(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def import_times(repeat: int) -> dict[str, float]:
    """Median wall time (ms) of each case in a fresh interpreter, the empty one subtracted."""
    runs: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(repeat):
        for name, code in CASES.items():
            runs[name].append(_time(code))
    base = statistics.median(runs["(empty interpreter)"])
    return {
        name: (statistics.median(times) - (0 if name.startswith("(") else base)) * 1000
        for name, times in runs.items()
    }


def _site_size(venv: Path) -> tuple[int, set[str]]:
    site = next(venv.glob("lib/python*/site-packages"))
    total = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
    dists = {p.name.split("-")[0].lower() for p in site.glob("*.dist-info")}
    return total, dists


def install_sizes() -> None:
    """Site-packages of core + providers, and of the same plus yoagent-mcp."""
    packages = ROOT / "packages"
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {}
        for name, extra in (("core+providers", []), ("core+providers+mcp", ["yoagent-mcp"])):
            venv = Path(tmp) / name
            subprocess.run(["uv", "venv", "-q", str(venv)], check=True)
            wanted = ["yoagent-core", "yoagent-providers", *extra]
            args = [str(packages / w) for w in wanted]
            subprocess.run(
                ["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *args],
                check=True,
            )
            sizes[name] = _site_size(venv)
        (small, before), (big, after) = sizes["core+providers"], sizes["core+providers+mcp"]
        print(f"site-packages core+providers:     {small / 2**20:6.1f} MiB")
        added = (big - small) / 2**20
        print(f"site-packages core+providers+mcp: {big / 2**20:6.1f} MiB (+{added:.1f})")
        print("added:", ", ".join(sorted(after - before)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--install-size", action="store_true")
    options = parser.parse_args()
    for name, ms in import_times(options.repeat).items():
        print(f"{name:34} {ms:8.0f} ms")
    if options.install_size:
        install_sizes()


if __name__ == "__main__":
    main()
