"""Skill frontmatter on PyYAML: a real SKILL.md, the largest frontmatter allowed, and hostile ones.

Each case is parsed by the skills reader (``parse_frontmatter``) on libyaml's loader and on
the pure-Python fallback; the figure is the median wall time of ``--repeat`` runs and the
tracemalloc peak of one. For comparison, plain ``yaml.safe_load`` on the alias bomb: it
builds the value cheaply (aliases are shared references) but anything that walks it
(pydantic, ``json.dumps``, a repr) visits every leaf: the walk is timed at 6 levels
(1.1 × 10**7 leaves) and grows tenfold per level.
Run: ``uv run python benchmarks/skills_frontmatter.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from yoagent.core import SkillError, _skill_frontmatter
from yoagent.core._skill_frontmatter import MAX_FRONTMATTER_CHARS, parse_frontmatter

ROOT = Path(__file__).resolve().parents[1]


def billion_laughs(levels: int) -> str:
    lines = ["lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*lol{level - 1}"] * 10)
        lines.append(f"lol{level}: &lol{level} [{refs}]")
    return "\n".join(lines) + "\n"


def within_cap(unit: str, prefix: str = "", suffix: str = "") -> str:
    """``prefix`` + as many ``unit``s as fit in the frontmatter cap + ``suffix``."""
    room = MAX_FRONTMATTER_CHARS - 100 - len(prefix) - len(suffix)
    return prefix + unit * (room // len(unit)) + suffix


def cases() -> dict[str, str]:
    flow = (MAX_FRONTMATTER_CHARS - 100) // 2
    return {
        "the project's SKILL.md": (ROOT / "skills" / "yoagent" / "SKILL.md").read_text(),
        "64 KiB: 2,700 metadata keys": "---\nname: a\ndescription: d\nmetadata:\n"
        + "".join(f"  key-{number:04d}: some value\n" for number in range(2_700))
        + "---\n",
        "64 KiB: one plain scalar": "---\nname: a\n"
        + within_cap("word ", "description: ", "\n")
        + "---\n",
        "64 KiB: a flow list of 21k items": "---\n"
        + within_cap("x, ", "tools: [", "x]\n")
        + "---\n",
        "alias bomb (9 levels)": f"---\n{billion_laughs(9)}---\n",
        f"flow nesting {flow:,} deep": f"---\nmetadata: {'[' * flow}{']' * flow}\n---\n",
        "block nesting 300 deep": "---\n"
        + "".join(" " * level + "a:\n" for level in range(300))
        + "---\n",
    }


def measure(parse: Callable[[], object], repeat: int) -> tuple[float, int, str]:
    times: list[float] = []
    outcome = ""
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            parse()
            outcome = "read"
        except SkillError as error:
            outcome = f"refused: {str(error)[:60]}"
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    with contextlib.suppress(SkillError):
        parse()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak, outcome


def leaves(value: Any) -> int:
    if isinstance(value, list):
        return sum(leaves(item) for item in value)
    if isinstance(value, dict):
        return sum(leaves(item) for item in value.values())
    return 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    loaders = {"libyaml": _skill_frontmatter._Loader, "python": _skill_frontmatter._PythonLoader}
    print("| case | loader | time | peak memory | outcome |")
    print("|---|---|---|---|---|")
    for name, text in cases().items():
        for label, loader in loaders.items():
            _skill_frontmatter._Loader = loader
            seconds, peak, outcome = measure(lambda text=text: parse_frontmatter(text), args.repeat)
            figures = f"{seconds * 1000:.2f} ms | {peak / 1024:.0f} KiB"
            print(f"| {name} | {label} | {figures} | {outcome} |")
    started = time.perf_counter()
    value = yaml.load(billion_laughs(9), Loader=yaml.CSafeLoader)
    built = time.perf_counter() - started
    small = yaml.load(billion_laughs(6), Loader=yaml.CSafeLoader)
    started = time.perf_counter()
    count = leaves(small)
    walked = time.perf_counter() - started
    print()
    print(
        f"plain yaml.safe_load (libyaml), alias bomb of 9 levels: built in {built * 1000:.2f} ms "
        f"({len(value)} keys); walking 6 levels ({count:,} leaves) took {walked:.2f} s, "
        f"so 9 levels (1000 times as many) would take ≈ {walked * 1000 / 60:.0f} min"
    )


if __name__ == "__main__":
    main()
