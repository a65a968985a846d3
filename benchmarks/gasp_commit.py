"""What a GASP run commit costs, and what the alternatives to ``git commit -- <log>`` would.

    uv run python benchmarks/gasp_commit.py [--sizes 0.3 3 30] [--repeat 9]

A repository whose ``state/events.jsonl`` holds ``--sizes`` MB of event lines (a
50-turn run adds ≈ 0.3 MB); before each timed commit, three lines are appended. Variants:

- ``git commit -- log``: what the recorder runs (hooks run, only the log is committed).
- ``looseCompression=0``: the same with the blob stored uncompressed.
- ``plumbing (6 processes)``: ``hash-object -w``; then, on a temporary index,
  ``read-tree HEAD``, ``update-index --cacheinfo``, ``write-tree``; ``commit-tree``,
  ``update-ref`` (and the real index would still need its own ``update-index``).
- ``floor: SHA-1 + deflate in-process``: hashing and compressing the log in Python, which
  any commit of the log must do in some form (git's own SHA-1 is the slower
  collision-detecting one).
- ``floor: one git process``: ``git --version``.

Each figure is the median wall / CPU time (this process and its children) in ms.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

LOG = "state/events.jsonl"
LINE = (
    '{"id":"event_%s","schema_version":1,"ts_ms":1700000000000,'
    '"actor":{"kind":"agent","id":"bench"},"kind":"tool.called","payload":{"id":"node_x",'
    '"run_id":"run_y","tool":"read_file","input_summary":"{\\"path\\": \\"src/m1.py\\"}",'
    '"output_summary":null,"success":null,"metadata":{"args_fingerprint":"read_file:0"}},'
    '"causation_id":"event_a","correlation_id":"run_y"}\n'
)


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def lines(count: int) -> bytes:
    return "".join(LINE % os.urandom(16).hex() for _ in range(count)).encode()


def repository(scratch: Path, megabytes: float) -> Path:
    root = Path(tempfile.mkdtemp(dir=scratch))
    git(root, "init", "-q")
    git(root, "config", "user.name", "bench")
    git(root, "config", "user.email", "bench@example.invalid")
    (root / "state").mkdir()
    (root / "AGENT.md").write_text("# AGENT\n")
    log = root / LOG
    with log.open("wb") as handle:
        while handle.tell() < megabytes * 1e6:
            handle.write(lines(1000))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "scaffolding")
    return root


def porcelain(root: Path) -> None:
    git(root, "commit", "-q", "--no-edit", "-m", "run", "--", LOG)


def uncompressed(root: Path) -> None:
    git(root, "-c", "core.looseCompression=0", "commit", "-q", "--no-edit", "-m", "run", "--", LOG)


def plumbing(root: Path) -> None:
    blob = git(root, "hash-object", "-w", LOG)
    env = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "bench-index")}
    git(root, "read-tree", "HEAD", env=env)
    git(root, "update-index", "--cacheinfo", f"100644,{blob},{LOG}", env=env)
    tree = git(root, "write-tree", env=env)
    head = git(root, "rev-parse", "HEAD")
    commit = git(root, "commit-tree", tree, "-p", head, "-m", "run")
    git(root, "update-ref", "HEAD", commit, head)


def hash_and_deflate(root: Path) -> None:
    data = (root / LOG).read_bytes()
    raw = b"blob %d\0" % len(data) + data
    hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    zlib.compress(raw, 1)


def one_process(root: Path) -> None:
    git(root, "--version")


VARIANTS: list[tuple[str, Callable[[Path], None]]] = [
    ("git commit -- log", porcelain),
    ("looseCompression=0", uncompressed),
    ("plumbing (6 processes)", plumbing),
    ("floor: SHA-1 + deflate in-process", hash_and_deflate),
    ("floor: one git process", one_process),
]


def cpu_seconds() -> float:
    mine, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def measure(root: Path, variant: Callable[[Path], None], repeat: int) -> str:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeat):
        with (root / LOG).open("ab") as handle:
            handle.write(lines(3))
        cpu, start = cpu_seconds(), time.perf_counter()
        variant(root)
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_seconds() - cpu)
    return f"{statistics.median(walls) * 1000:.0f} / {statistics.median(cpus) * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[0.3, 3.0, 30.0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(f"median of {args.repeat}, wall / CPU ms; Python {sys.version.split()[0]}, {version}")
    print("| log | " + " | ".join(name for name, _ in VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    with tempfile.TemporaryDirectory(dir=os.environ.get("GASP_BENCH_DIR")) as scratch:
        for size in args.sizes:
            cells = [
                measure(repository(Path(scratch), size), variant, args.repeat)
                for _, variant in VARIANTS
            ]
            print(f"| {size:g} MB | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
