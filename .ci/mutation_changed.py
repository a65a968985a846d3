"""The packages of mutants.toml with a mutated module changed since a revision, as JSON.

    uv run python .ci/mutation_changed.py origin/main

The pull-request mutation workflow's plan: one ``.ci/mutation.py <package>
--changed-since REV`` job per package listed; a package with more than
``mutation.MAX_CHANGED`` changed modules is not listed (the weekly whole run covers it).
"""

from __future__ import annotations

import json
import sys
import tomllib

from mutation import MAX_CHANGED, PLAN, changed_files, changed_modules, load_target


def changed_packages(since: str, most: int = MAX_CHANGED) -> list[str]:
    """The packages with 1 to ``most`` mutated modules changed since ``since`` (more are
    left to the weekly whole run: no job is started for them)."""
    changed = changed_files(since)
    tables = tomllib.loads(PLAN.read_text("utf-8"))
    counts = {name: len(changed_modules(load_target(name), changed)) for name in tables}
    return [name for name, count in counts.items() if 0 < count <= most]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: {sys.argv[0]} REV")
    print(json.dumps(changed_packages(sys.argv[1])))
