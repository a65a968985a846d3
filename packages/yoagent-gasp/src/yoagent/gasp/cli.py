"""``yoagent-gasp``: the command line. ``yoagent-gasp check <repo> [--fixture]`` runs the
seven conformance checks; exit 0 when conformant, 1 when not, 2 on a usage error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from .checks import run_all


def _version() -> str:
    try:
        return version("yoagent-gasp")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yoagent-gasp", description="GASP agent repositories: conformance checks."
    )
    parser.add_argument("--version", action="version", version=f"yoagent-gasp {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="run the seven GASP conformance checks on an agent repository",
        description="Run the seven GASP conformance checks. Exit 0: conformant; 1: not; 2: usage.",
    )
    check.add_argument(
        "repo", help="the agent repository (check a fresh clone: restore is a clone)"
    )
    check.add_argument(
        "--fixture", action="store_true", help="also assert the Part VI fixture graph facts"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``yoagent-gasp`` console script; returns the exit code."""
    args = _parser().parse_args(argv)  # exits 2 on a usage error, 0 for --help
    print(f"yoagent-gasp {_version()} — GASP conformance check of {args.repo}")
    failed = False
    for report in run_all(args.repo, fixture=args.fixture):
        print(f"[{'PASS' if report.passed else 'FAIL'}] check {report.number} — {report.name}")
        for note in report.notes:
            print(f"       note: {note}")
        for failure in report.failures:
            print(f"       {failure}")
        failed = failed or not report.passed
    if failed:
        return 1
    print("conformant: all checks passed")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
