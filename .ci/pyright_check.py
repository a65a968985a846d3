"""pyright (strict, per the root pyproject.toml) over every package's ``src/``, and proof
that it really looked at them.

    uv run python .ci/pyright_check.py [WORKSPACE]

pyright reports "0 errors" when its ``include`` patterns match nothing, so a passing run
says nothing by itself. This runs ``pyright --outputjson``, prints its findings, and fails
when it has errors or when it analysed fewer files than the ``src/`` trees of the
workspace's packages hold (counted here, so a new package is counted the day it appears).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from workspace import ROOT, packages


def expected_files(root: Path = ROOT) -> int:
    """How many Python files the workspace's ``src/`` trees hold."""
    return sum(len(package.source_files()) for package in packages(root))


def verdict(report: dict[str, Any], expected: int) -> list[str]:
    """What is wrong with a pyright JSON report, one line each (nothing: it passed)."""
    summary = report.get("summary", {})
    analysed = int(summary.get("filesAnalyzed", 0))
    errors = int(summary.get("errorCount", 0))
    wrong: list[str] = []
    if errors:
        wrong.append(f"pyright found {errors} error(s)")
    if analysed < expected:
        wrong.append(
            f"pyright analysed {analysed} file(s) but the packages' src/ trees hold {expected}: "
            "its include patterns in pyproject.toml miss some (pyright does not expand "
            "`packages/*/src`; use `packages/**/src`)"
        )
    return wrong


def _show(diagnostic: dict[str, Any], root: Path) -> str:
    start = diagnostic.get("range", {}).get("start", {})
    where = diagnostic.get("file", "?")
    with contextlib.suppress(ValueError):  # a file outside the workspace keeps its path
        where = Path(where).relative_to(root).as_posix()
    line, column = int(start.get("line", 0)) + 1, int(start.get("character", 0)) + 1
    rule = f" ({diagnostic['rule']})" if diagnostic.get("rule") else ""
    return (
        f"{where}:{line}:{column} - {diagnostic.get('severity')}: {diagnostic.get('message')}{rule}"
    )


def check(root: Path = ROOT) -> int:
    """Run pyright in ``root``, print its findings and the verdict; the exit status."""
    ran = subprocess.run(
        ["pyright", "--outputjson"], cwd=root, capture_output=True, text=True, check=False
    )
    try:
        report: dict[str, Any] = json.loads(ran.stdout)
    except json.JSONDecodeError:
        print(ran.stdout + ran.stderr)
        print(f"pyright did not produce a JSON report (exit status {ran.returncode})")
        return 1
    for diagnostic in report.get("generalDiagnostics", []):
        print(_show(diagnostic, root))
    expected = expected_files(root)
    summary = report.get("summary", {})
    print(
        f"pyright {report.get('version', '?')}: {summary.get('filesAnalyzed', 0)} of "
        f"{expected} src/ files analysed, {summary.get('errorCount', 0)} error(s), "
        f"{summary.get('warningCount', 0)} warning(s)"
    )
    wrong = verdict(report, expected)
    if ran.returncode not in (0, 1):  # 1 = errors found; anything else: pyright itself failed
        wrong.append(f"pyright exited with status {ran.returncode}: {ran.stderr.strip()}")
    for line in wrong:
        print(f"FAILED: {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
