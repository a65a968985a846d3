"""Mutation-test one package per the plan in mutants.toml, and compare its score.

    uv run python .ci/mutation.py yoagent-core [--dry-run] [--summary FILE] [--strict]
    uv run python .ci/mutation.py yoagent-core --only 'yoagent.core._support.scrub*'

mutmut 3 reads its settings from ``[tool.mutmut]`` in the working directory's
pyproject.toml and runs the tests from a ``mutants/`` copy of it. So the package is staged
in ``.mutation/<package>/`` (its src/ and tests/, and a generated pyproject.toml carrying
the ``[tool.mutmut]`` table and the workspace's pytest settings); that folder sits at the
same depth as ``packages/<package>`` so tests that look for ``../shared`` still find it.

``--recheck`` re-runs only the mutants that survived the last run staged in
``.mutation/<package>/``, against the package's tests as they are now (copied in again;
mutmut finds the new tests and which mutants they reach): the score it reports is the
"after" score of a triage, from mutmut's own verdicts (the survivors and the mutants no
test reached; mutmut maps only *new* tests to the code they run, so a test edited to
reach more code is not seen: give the triage's tests new names). It refuses when a
``.py`` file of the package's ``src/`` changed since that run.

``--changed-since REV`` mutates the package's modules whose files changed since ``REV``
(``git diff REV...HEAD``: what a pull request changed), at most ``--max-changed`` of them
(10; more are left to the weekly whole run); none changed is a run of nothing, exit 0.
``.ci/mutation_changed.py REV`` lists the packages such a run has work in.

``--only PATTERN`` (repeatable) mutates a slice of the package: the modules whose dotted
name matches a pattern (``fnmatch``: ``yoagent.tools.sandbox``, ``yoagent.core._support.*``),
handed to mutmut as its ``only_mutate`` file list. The whole test folder still runs, so a
slice's score is the score those modules have in the full run. The summary holds one row
per module besides the total.

A package's ``slow_tests`` (pytest node ids in mutants.toml, each with its reason) are
left out of every pytest run of its mutation runs (``--deselect``, through mutmut's
``pytest_add_cli_args``): mutmut runs every test that reaches a mutant, so a few tests that
wait seconds of real time can make each of a package's thousands of mutants cost that much.
A mutant only they would kill then survives (or, reached by no other test, counts as reached
by none): the score can only come out lower. The normal suite still runs them.

A package with ``own_pid_namespace = true`` in mutants.toml (its code signals processes:
the process runner's reaper kills what it finds in ``/proc``) is run in a PID namespace of
its own (``unshare --pid --fork --mount-proc``, with ``--map-current-user`` when not root):
a mutant that turns "kill the processes marked with this id" into "kill every process but
those" then reaches only the run's own processes, not the machine's. Where no such
namespace can be made, the run is refused.

Exit status: 1 when mutmut fails, which includes the package's tests failing on the
unmutated code; 0 otherwise, with a score under ``min_score`` reported as a warning
(``--strict`` makes it an error).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from workspace import pytest_options

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "mutants.toml"
STAGING = ROOT / ".mutation"
MAX_CHANGED = 10
"""``--changed-since``: more changed modules than this in one package are left to the
weekly whole run (a pull request's job stays short)."""


@dataclass(frozen=True)
class Target:
    """One package's entry in mutants.toml."""

    package: str
    root: Path  # the package folder, relative to the repository root
    paths_to_mutate: tuple[Path, ...]  # relative to the package folder
    tests: tuple[Path, ...]  # relative to the package folder
    do_not_mutate: tuple[str, ...]
    min_score: float
    slow_tests: tuple[str, ...] = ()  # pytest node ids, relative to the package folder
    own_pid_namespace: bool = False  # its mutants may signal any process: run them apart


def _relative_to_package(package: str, key: str, paths: list[str]) -> tuple[Path, list[Path]]:
    roots: set[Path] = set()
    inside: list[Path] = []
    for raw in paths:
        parts = Path(raw).parts
        marker = "src" if key == "paths_to_mutate" else "tests"
        if marker not in parts:
            raise SystemExit(f"mutants.toml [{package}] {key}: {raw!r} is not under a {marker}/")
        cut = parts.index(marker)
        roots.add(Path(*parts[:cut]))
        inside.append(Path(*parts[cut:]))
    if len(roots) != 1:
        raise SystemExit(f"mutants.toml [{package}] {key}: paths span several packages {roots}")
    return roots.pop(), inside


def load_target(package: str, plan: Path = PLAN) -> Target:
    """Read and check ``package``'s table in mutants.toml."""
    tables: dict[str, Any] = tomllib.loads(plan.read_text("utf-8"))
    if package not in tables:
        raise SystemExit(f"{package!r} is not in {plan.name}; it has: {', '.join(tables)}")
    table: dict[str, Any] = tables[package]
    missing = {"paths_to_mutate", "tests", "min_score"} - table.keys()
    if missing:
        raise SystemExit(f"mutants.toml [{package}] lacks {', '.join(sorted(missing))}")
    score = float(table["min_score"])
    if not 0.0 <= score <= 1.0:
        raise SystemExit(f"mutants.toml [{package}] min_score {score} is not between 0 and 1")
    src_root, mutate = _relative_to_package(package, "paths_to_mutate", table["paths_to_mutate"])
    tests_root, tests = _relative_to_package(package, "tests", table["tests"])
    if src_root != tests_root:
        raise SystemExit(f"mutants.toml [{package}]: src and tests are in different packages")
    slow_tests = tuple(table.get("slow_tests", []))
    for node in slow_tests:
        problem = _missing_test(ROOT / src_root, node)
        if problem is not None:
            raise SystemExit(f"mutants.toml [{package}] slow_tests: {node!r} {problem}")
    own_pid_namespace = table.get("own_pid_namespace", False)
    if not isinstance(own_pid_namespace, bool):
        raise SystemExit(f"mutants.toml [{package}] own_pid_namespace is true or false")
    return Target(
        package=package,
        root=src_root,
        paths_to_mutate=tuple(mutate),
        tests=tuple(tests),
        do_not_mutate=tuple(table.get("do_not_mutate", [])),
        min_score=score,
        slow_tests=slow_tests,
        own_pid_namespace=own_pid_namespace,
    )


def _missing_test(package_dir: Path, node: str) -> str | None:
    """Why ``node`` (``tests/test_x.py::test_name``) names no test of the package, or
    ``None``: a test renamed or deleted must not leave a stale exclusion behind."""
    path, separator, name = node.partition("::")
    if not separator or not name or "::" in name:
        return "is not a test node id (tests/<file>.py::<test function>)"
    file = package_dir / path
    if not file.is_file():
        return f"names no file ({path} is missing)"
    function = re.escape(name.split("[", 1)[0])
    if not re.search(rf"^(async )?def {function}\(", file.read_text("utf-8"), re.MULTILINE):
        return f"names no test function of {path}"
    return None


def modules(target: Target, root: Path | None = None) -> dict[str, str]:
    """Every module mutmut may mutate in the package: dotted name -> path relative to the
    package folder (``yoagent.core._support.scrub`` -> ``src/yoagent/core/_support/scrub.py``),
    ``do_not_mutate`` left out."""
    found: dict[str, str] = {}
    package_dir = (root or ROOT) / target.root
    for entry in target.paths_to_mutate:
        for path in sorted((package_dir / entry).rglob("*.py")):
            relative = path.relative_to(package_dir).as_posix()
            if any(fnmatchcase(relative, pattern) for pattern in target.do_not_mutate):
                continue
            dotted = path.relative_to(package_dir / "src").with_suffix("").parts
            if dotted[-1] == "__init__":
                dotted = dotted[:-1]
            found[".".join(dotted)] = relative
    return found


def select_modules(target: Target, patterns: list[str], root: Path | None = None) -> list[str]:
    """The files (relative to the package folder) of the modules matching ``patterns``;
    a pattern that matches no module of the package is an error, not an empty run."""
    available = modules(target, root)
    chosen: set[str] = set()
    for pattern in patterns:
        matched = [path for name, path in available.items() if fnmatchcase(name, pattern)]
        if not matched:
            raise SystemExit(
                f"--only {pattern!r} matches no module of {target.package} "
                f"(dotted names such as {next(iter(available), 'yoagent.<name>.<module>')!r})"
            )
        chosen.update(matched)
    return sorted(chosen)


def changed_files(since: str, root: Path | None = None) -> list[str]:
    """Files (relative to the repository root) added, changed or renamed since ``since``
    on this branch (``git diff since...HEAD``: from their merge base)."""
    listed = subprocess.run(
        ["git", "diff", "--name-only", "--diff-filter=AMR", f"{since}...HEAD"],
        cwd=root or ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [line for line in listed.splitlines() if line]


def changed_modules(target: Target, changed: list[str], root: Path | None = None) -> list[str]:
    """The files (relative to the package folder) of the package's mutated modules among
    ``changed`` (paths relative to the repository root)."""
    prefix = target.root.as_posix() + "/"
    inside = {path.removeprefix(prefix) for path in changed if path.startswith(prefix)}
    return sorted(f for f in modules(target, root or ROOT).values() if f in inside)


def _toml_value(value: Any) -> str:
    # Strings, booleans, numbers and lists of them: their JSON spelling is valid TOML.
    return json.dumps(value)


def _staged_path(target: Target, entry: Path) -> str:
    if entry.is_relative_to(target.root):
        return entry.relative_to(target.root).as_posix()
    return (ROOT / entry).as_posix()


def staged_pyproject(target: Target, only: list[str] | None = None) -> str:
    """The pyproject.toml of the staging folder: mutmut's settings and pytest's; ``only``
    (files relative to the package folder) narrows what mutmut mutates."""
    options = pytest_options()
    # pythonpath entries are relative to the workspace root: the package's own folders map
    # to their staged copies, any other folder stays where it is.
    options["pythonpath"] = [
        _staged_path(target, Path(entry)) for entry in options.get("pythonpath", [])
    ]
    mutmut = {
        "source_paths": [p.as_posix() for p in target.paths_to_mutate],
        "pytest_add_cli_args_test_selection": [p.as_posix() for p in target.tests],
        "do_not_mutate": list(target.do_not_mutate),
    }
    if only:
        mutmut["only_mutate"] = list(only)
    if target.slow_tests:
        mutmut["pytest_add_cli_args"] = [
            arg for node in target.slow_tests for arg in ("--deselect", node)
        ]
    lines = [f"# Generated by .ci/mutation.py for {target.package}; do not edit.", ""]
    for section, values in (("tool.mutmut", mutmut), ("tool.pytest.ini_options", options)):
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in values.items())
        lines.append("")
    return "\n".join(lines)


# The namespace's first process: it runs the command as its child and reaps the orphans the
# namespace hands it, which mutmut, as that first process, would take for its own workers
# (and stop on). A first process gets only the signals it handles: it passes SIGTERM and
# SIGHUP on to the command (a terminal's SIGINT reaches the command itself). Its exit status
# is the command's (128 + the signal that ended it).
_NAMESPACE_INIT = """\
import os, signal, sys
child = os.fork()
if child == 0:
    for number in (signal.SIGPIPE, signal.SIGXFSZ):  # as subprocess leaves them
        signal.signal(number, signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
signal.signal(signal.SIGINT, signal.SIG_IGN)
for number in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(number, lambda number, frame: os.kill(child, number))
while True:
    pid, status = os.wait()
    if pid == child:
        code = os.waitstatus_to_exitcode(status)
        sys.exit(code if code >= 0 else 128 - code)
"""


def pid_namespace_prefix() -> list[str]:
    """The command prefix that runs a program in a PID namespace of its own, with its own
    ``/proc`` (a user namespace mapping the current user to itself when not root), under a
    small first process that reaps orphans."""
    # --kill-child: the namespace ends with unshare (subprocess kills it on Ctrl-C).
    prefix = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if os.geteuid() != 0:
        prefix.insert(1, "--map-current-user")
    return [*prefix, sys.executable, "-c", _NAMESPACE_INIT]


def check_pid_namespace(prefix: list[str]) -> str | None:
    """Why ``prefix`` cannot isolate a run here, else ``None``."""
    if sys.platform != "linux" or shutil.which(prefix[0]) is None:
        return "PID namespaces need Linux and util-linux's unshare"
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import os; print(os.getppid())"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0 or probe.stdout.strip() != "1":
        said = probe.stderr.strip().splitlines()[-1:] or [f"exit status {probe.returncode}"]
        return f"`{' '.join(prefix[:-3])}` failed: {said[0]}"
    return None


def mutmut_command(max_children: int | None, *, isolated: bool = False) -> list[str]:
    """The mutmut invocation, run from the staging folder (``isolated``: in a PID namespace
    of its own)."""
    command = [sys.executable, "-m", "mutmut", "run"]
    if max_children is not None:
        command += ["--max-children", str(max_children)]
    return [*pid_namespace_prefix(), *command] if isolated else command


def stage(target: Target, folder: Path, only: list[str] | None = None) -> None:
    """Copy the package's src/ and tests into ``folder`` and write its pyproject.toml."""
    if folder.exists():
        shutil.rmtree(folder)  # a fresh run: no stale mutants or cached verdicts
    folder.mkdir(parents=True)
    package_dir = ROOT / target.root
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(package_dir / "src", folder / "src", ignore=ignore)
    for tests in target.tests:
        if not (package_dir / tests).is_dir():
            raise SystemExit(f"{target.package}: no test folder {target.root / tests}")
        shutil.copytree(package_dir / tests, folder / tests, ignore=ignore)
    (folder / "pyproject.toml").write_text(staged_pyproject(target, only), "utf-8")


def refresh_tests(target: Target, folder: Path) -> None:
    """Copy the package's test folders into the staging ``folder`` again (tests deleted
    since are gone from it too); mutmut copies them on into its ``mutants/`` tree."""
    package_dir = ROOT / target.root
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for tests in target.tests:
        shutil.rmtree(folder / tests, ignore_errors=True)
        # mutmut copies the tests into mutants/ without deleting: a deleted test would run on
        shutil.rmtree(folder / "mutants" / tests, ignore_errors=True)
        shutil.copytree(package_dir / tests, folder / tests, ignore=ignore)


def changed_sources(target: Target, folder: Path, root: Path | None = None) -> list[str]:
    """The files (relative to the package folder) of ``src/`` that differ between the
    package and its staged copy, or exist on one side only."""
    package_src, staged_src = (root or ROOT) / target.root / "src", folder / "src"

    def files(base: Path) -> dict[str, bytes]:
        return {
            path.relative_to(base).as_posix(): path.read_bytes()
            for path in base.rglob("*.py")
            if "__pycache__" not in path.parts
        }

    now, staged = files(package_src), files(staged_src)
    return sorted(
        f"src/{name}" for name in now.keys() | staged.keys() if now.get(name) != staged.get(name)
    )


_OPEN = frozenset({"survived", "no tests"})
"""mutmut's verdicts that count against the score and a new test may change."""


def survivors(folder: Path, files: dict[str, str]) -> list[str]:
    """The names of the mutants the run staged in ``folder`` left standing (survived, or
    reached by no test), in the modules ``files`` (dotted name -> file relative to the
    package folder)."""
    from mutmut.stats import status_by_exit_code  # the dev dependency's own reading

    names: list[str] = []
    for relative in files.values():
        meta = folder / "mutants" / f"{relative}.meta"
        if not meta.is_file():
            continue
        codes: dict[str, int | None] = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
        names.extend(sorted(k for k, code in codes.items() if status_by_exit_code[code] in _OPEN))
    return names


def _recheck_plan(target: Target, folder: Path, files: list[str] | None) -> list[str]:
    """The survivors ``--recheck`` re-runs; refuses a missing run or a changed source."""
    if not (folder / "mutants").is_dir():
        raise SystemExit(f"--recheck: no run of {target.package} is staged in {folder}")
    changed = changed_sources(target, folder, ROOT)
    if changed:
        shown = ", ".join(changed[:5]) + (", ..." if len(changed) > 5 else "")
        raise SystemExit(
            f"--recheck: {target.package}'s source changed since the staged run ({shown}): "
            "run the package again"
        )
    chosen = {n: f for n, f in modules(target, ROOT).items() if files is None or f in files}
    return survivors(folder, chosen)


def _summed(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for one in counts:
        for key, value in one.items():
            total[key] = total.get(key, 0) + value
    return total


def score_of(stats: dict[str, int]) -> float | None:
    """mutmut's score, (killed + timeout) / (total - skipped); None when nothing was tested."""
    tested = stats.get("total", 0) - stats.get("skipped", 0)
    if tested <= 0:
        return None
    return (stats.get("killed", 0) + stats.get("timeout", 0)) / tested


def read_score(folder: Path) -> tuple[float | None, dict[str, int]]:
    """mutmut's score for the whole run and its counts."""
    subprocess.run([sys.executable, "-m", "mutmut", "export-cicd-stats"], cwd=folder, check=True)
    stats: dict[str, int] = json.loads(
        (folder / "mutants" / "mutmut-cicd-stats.json").read_text("utf-8")
    )
    return score_of(stats), stats


def module_stats(folder: Path, files: dict[str, str]) -> dict[str, dict[str, int]]:
    """Per module (dotted name -> file relative to the package folder), the counts mutmut
    recorded in ``mutants/<file>.meta``, in the keys of its CI/CD stats; a module with no
    mutants (no function bodies) is left out."""
    from mutmut.stats import status_by_exit_code  # the dev dependency's own reading

    found: dict[str, dict[str, int]] = {}
    for name, relative in files.items():
        meta = folder / "mutants" / f"{relative}.meta"
        if not meta.is_file():
            continue
        codes: dict[str, int | None] = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
        if not codes:
            continue
        counts = {"killed": 0, "survived": 0, "no_tests": 0, "timeout": 0, "skipped": 0}
        for code in codes.values():
            status = status_by_exit_code[code].replace(" ", "_")
            counts[status] = counts.get(status, 0) + 1
        counts["total"] = len(codes)
        found[name] = counts
    return found


def _shown(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.1%}"


_COLUMNS = ("killed", "survived", "no_tests", "timeout", "total")


def report(
    target: Target,
    score: float | None,
    stats: dict[str, int],
    summary: Path | None,
    per_module: dict[str, dict[str, int]] | None = None,
    only: list[str] | None = None,
) -> bool:
    """Print the verdict (and append it to the job summary, one row per module); True when
    the score is kept. A slice (``only``) is held to the package's ``min_score`` too."""
    kept = score is not None and score >= target.min_score
    verdict = "kept" if kept else "BELOW THRESHOLD"
    scope = target.package + (f" (only {', '.join(only)})" if only else "")
    print(f"{scope}: mutation score {_shown(score)}, minimum {target.min_score:.0%}: {verdict}")
    print("  " + ", ".join(f"{key} {value}" for key, value in stats.items()))
    for name, counts in (per_module or {}).items():
        caught = counts.get("killed", 0) + counts.get("timeout", 0)  # as the score counts them
        print(f"  {name}: {_shown(score_of(counts))} ({caught}/{counts.get('total', 0)})")
    if not kept and os.environ.get("GITHUB_ACTIONS") == "true":
        print(f"::warning::{scope} mutation score {_shown(score)} < {target.min_score:.0%}")
    if summary is not None:
        rows = [
            ("**total**", score, stats),
            *((f"`{n}`", score_of(c), c) for n, c in (per_module or {}).items()),
        ]
        with summary.open("a", encoding="utf-8") as out:
            out.write(
                f"### Mutation testing: {scope}\n\n"
                f"Minimum {target.min_score:.0%}: {verdict}.\n\n"
                "| module | score | killed | survived | no tests | timeout | mutants |\n"
                "|---|---|---|---|---|---|---|\n"
            )
            for label, row_score, counts in rows:
                cells = " | ".join(str(counts.get(key, 0)) for key in _COLUMNS)
                out.write(f"| {label} | {_shown(row_score)} | {cells} |\n")
            out.write("\n")
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("package", help="a table of mutants.toml, e.g. yoagent-core")
    parser.add_argument("--dry-run", action="store_true", help="print the plan; run nothing")
    parser.add_argument("--summary", type=Path, help="append a Markdown report to this file")
    parser.add_argument("--strict", action="store_true", help="fail when under min_score")
    parser.add_argument("--max-children", type=int, help="mutmut's parallel workers")
    parser.add_argument(
        "--changed-since",
        metavar="REV",
        help="mutate only the modules changed since REV (git diff REV...HEAD)",
    )
    parser.add_argument(
        "--max-changed",
        type=int,
        default=MAX_CHANGED,
        help="with --changed-since: more changed modules than this are left to the weekly run",
    )
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="re-run the last run's survivors against the tests as they are now",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="PATTERN",
        help="mutate only the modules matching this dotted-name pattern (repeatable)",
    )
    args = parser.parse_args(argv)

    target = load_target(args.package)
    only: list[str] | None = args.only
    files = select_modules(target, only) if only else None
    if args.changed_since is not None:
        if only:
            raise SystemExit("--changed-since and --only choose the modules both: give one")
        files = changed_modules(target, changed_files(args.changed_since))
        if not files:
            print(f"{target.package}: no mutated module changed since {args.changed_since}")
            return 0
        if len(files) > args.max_changed:
            print(
                f"{target.package}: {len(files)} modules changed since {args.changed_since}, "
                f"more than --max-changed {args.max_changed}: left to the weekly whole run"
            )
            return 0
        only = files
    folder = STAGING / target.package
    command = mutmut_command(args.max_children, isolated=target.own_pid_namespace)
    if args.dry_run:
        print(f"package:     {target.package} ({target.root})")
        print(
            f"staging:     {folder.relative_to(ROOT)}  (copies src/ and "
            f"{', '.join(p.as_posix() for p in target.tests)})"
        )
        print(f"min_score:   {target.min_score}")
        if files:
            print(f"mutates:     {', '.join(files)}")
        print(f"command:     (cd {folder.relative_to(ROOT)} && {' '.join(command)})")
        print("pyproject.toml:")
        print(staged_pyproject(target, files))
        return 0

    if target.own_pid_namespace:
        problem = check_pid_namespace(pid_namespace_prefix())
        if problem is not None:
            print(
                f"{target.package}: not run: its mutants may signal any process, so it runs "
                f"in a PID namespace of its own, which cannot be made here: {problem}"
            )
            return 1
    if args.recheck:
        names = _recheck_plan(target, folder, files)
        if names:
            refresh_tests(target, folder)
            print(f"{target.package}: re-running {len(names)} survivors", flush=True)
            if subprocess.run([*command, *names], cwd=folder).returncode != 0:
                print(f"{target.package}: mutmut failed (do the tests pass on the code?)")
                return 1
        else:
            print(f"{target.package}: no survivors to re-run")
    else:
        stage(target, folder, files)
        print(f"$ (cd {folder.relative_to(ROOT)} && {' '.join(command)})", flush=True)
        if subprocess.run(command, cwd=folder).returncode != 0:
            print(f"{target.package}: mutmut failed (did the tests fail on the unmutated code?)")
            return 1
    score, stats = read_score(folder)
    per_module = module_stats(folder, modules(target))
    if args.recheck and files:  # the staged run may hold more modules than those asked
        chosen = {name for name, path in modules(target).items() if path in files}
        per_module = {name: counts for name, counts in per_module.items() if name in chosen}
        stats = _summed(per_module.values())
        score = score_of(stats)
    kept = report(target, score, stats, args.summary, per_module, only)
    return 1 if args.strict and not kept else 0


if __name__ == "__main__":
    sys.exit(main())
