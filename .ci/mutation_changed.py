"""The packages of mutants.toml with a mutated module changed since a revision, as JSON.

    uv run python .ci/mutation_changed.py origin/main

The pull-request mutation workflow's plan: one ``.ci/mutation.py <package>
--changed-since REV`` job per package listed.
"""

from __future__ import annotations

import json
import sys
import tomllib

from mutation import PLAN, changed_files, changed_modules, load_target


def changed_packages(since: str) -> list[str]:
    changed = changed_files(since)
    tables = tomllib.loads(PLAN.read_text("utf-8"))
    return [name for name in tables if changed_modules(load_target(name), changed)]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: {sys.argv[0]} REV")
    print(json.dumps(changed_packages(sys.argv[1])))
