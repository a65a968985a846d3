"""The GitHub job matrix of per-package tests: which packages a change can break.

    uv run python .ci/affected.py                   # every package (a push, a manual run)
    uv run python .ci/affected.py --base <sha>      # only those a pull request can break

A package is tested when a file changed under its own folder or the folder of a yoagent
package it needs (directly or not), or a workspace file (pyproject.toml, uv.lock, LICENSE,
.github/, .ci/). That is enough because each package's tests run from its unpacked sdist
with nothing else of the repository beside them (.ci/package_tests.py): a test that used
another file would fail there. Each package runs on Python 3.11, 3.12 and 3.13 on Linux,
and on macOS too when its classifiers promise it (``Operating System :: MacOS``).

Prints ``matrix=<json>`` (a GitHub ``strategy.matrix``) and ``any=true|false`` for
``$GITHUB_OUTPUT``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from workspace import ROOT, Package, closure, packages

PYTHONS = ("3.11", "3.12", "3.13")
WORKSPACE_FILES = ("pyproject.toml", "uv.lock", "LICENSE")
WORKSPACE_FOLDERS = (".github/", ".ci/")


def changed_files(base: str) -> list[str]:
    """The files a pull request changes: ``git diff base...HEAD``."""
    diff = subprocess.run(
        ["git", "diff", "--name-only", f"{base}...HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in diff.stdout.splitlines() if line]


def affected(members: list[Package], changed: list[str] | None) -> list[Package]:
    """The packages ``changed`` can break (all of them when ``changed`` is None)."""
    if changed is None or any(
        path in WORKSPACE_FILES or path.startswith(WORKSPACE_FOLDERS) for path in changed
    ):
        return members

    def touched(package: Package) -> bool:
        return any(
            path.startswith(member.relative + "/")
            for member in closure(package, members)
            for path in changed
        )

    return [package for package in members if touched(package)]


def matrix(chosen: list[Package]) -> dict[str, Any]:
    """One job per package, Python version and operating system."""
    include: list[dict[str, str]] = []
    for package in chosen:
        systems = ["ubuntu-latest"]
        if "Operating System :: MacOS" in package.classifiers:
            systems.append("macos-latest")
        include.extend(
            {"package": package.name, "python": python, "os": system}
            for system in systems
            for python in PYTHONS
        )
    return {"include": include}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base", default="", help="the pull request's base commit")
    args = parser.parse_args(argv)
    chosen = affected(packages(), changed_files(args.base) if args.base else None)
    print(f"matrix={json.dumps(matrix(chosen))}")
    print(f"any={'true' if chosen else 'false'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
