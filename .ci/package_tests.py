"""Run each package's tests with only that package and its declared dependencies installed.

    uv build --all-packages --out-dir dist/
    uv run python .ci/package_tests.py --dist dist/ [--collect-only] [PACKAGE ...]

For each package (default: every workspace package; one with no ``tests/`` folder is only
installed and imported), in a fresh virtual environment, with nothing of the workspace on
the path:

1. install the package's wheel and the wheels of the yoagent packages it needs (from
   ``--dist``), plus its third-party dependencies and its ``test`` dependency group at
   the versions in uv.lock (``uv export``);
2. import every ``yoagent.<name>`` those wheels ship, and run ``uv pip check``;
3. unpack the package's sdist and run its tests from there, so a test that reaches for
   another package or for a file of the repository outside the package fails here. A
   package whose tests hold ``tests/npm/package-lock.json`` (real peers in Node, such as
   yoagent-mcp's MCP servers) gets ``npm ci`` there first when npm is on the path; without
   npm, the tests needing them skip with their reason.

``--collect-only`` stops at collecting the tests (imports, fixtures, test files in the
sdist): the quick proof .ci/run makes; the GitHub job of each package runs them all.
The tests run under the workspace's pytest settings (``[tool.pytest.ini_options]`` of the
root pyproject.toml) with the package's own ``tests/`` on the path. Corpus-backed tests
skip (``../shared`` is not beside the unpacked sdist); the workspace run covers them.
Exit status 1 when any package fails, with the failing packages named at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from packaging.utils import parse_sdist_filename, parse_wheel_filename
from workspace import ROOT, Package, closure, packages, pytest_options

_BIN = "Scripts" if os.name == "nt" else "bin"
_NPM_QUIET = ("--no-audit", "--no-fund", "--loglevel=error")


def _find(dist: Path, package: Package, suffix: str) -> Path:
    for path in sorted(dist.glob(f"*{suffix}")):
        if suffix == ".whl":
            name, version, *_ = parse_wheel_filename(path.name)
        else:
            name, version = parse_sdist_filename(path.name)
        if name == package.name and str(version) == package.version:
            return path
    raise SystemExit(f"{dist}: no {suffix} of {package.name} {package.version}")


def pytest_ini(root: Path = ROOT) -> str:
    """The workspace's pytest settings as a pytest.ini for one unpacked package."""
    options = pytest_options(root)
    options["pythonpath"] = ["tests"]  # the package's own helpers, nothing of its siblings
    lines = ["[pytest]"]
    for key, value in options.items():
        if isinstance(value, list):
            lines.append(f"{key} =")
            lines.extend(f"    {item}" for item in value)
        else:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def _subpackages(wheels: list[Path]) -> list[str]:
    """The ``yoagent.<name>`` packages the wheels ship."""
    found: set[str] = set()
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            found.update(
                "yoagent." + name.split("/")[1]
                for name in archive.namelist()
                if name.startswith("yoagent/") and name.endswith("/__init__.py")
            )
    return sorted(found)


def npm_peers(tests: Path) -> Path | None:
    """The folder of a package's Node test peers (``tests/npm`` with a lock file), if any."""
    folder = tests / "npm"
    return folder if (folder / "package-lock.json").is_file() else None


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> bool:
    print(f"$ {' '.join(command)}", flush=True)
    return subprocess.run(command, cwd=cwd, env=env, check=False).returncode == 0


def check_package(
    package: Package, members: list[Package], dist: Path, work: Path, *, collect_only: bool
) -> bool:
    """Install ``package`` alone in a fresh venv under ``work`` and run its tests."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    venv = work / "venv"
    python = venv / _BIN / "python"
    requirements = work / "requirements.txt"
    wheels = [_find(dist, member, ".whl") for member in closure(package, members)]
    groups = ["--group", "test"] if package.test_group else []
    export = f"--package {package.name} --no-default-groups --no-emit-workspace --no-hashes"
    steps = [
        ["uv", "venv", "--quiet", "--python", sys.executable, str(venv)],
        ["uv", "export", "--frozen", "--quiet", *export.split(), *groups, "-o", str(requirements)],
        ["uv", "pip", "install", "--quiet", "--python", str(python), "-r", str(requirements)]
        + [str(wheel) for wheel in wheels],
        ["uv", "pip", "check", "--quiet", "--python", str(python)],
    ]
    for step in steps:
        if not _run(step, ROOT, env):
            return False
    imports = "; ".join(f"import {name}" for name in _subpackages(wheels)) or "pass"
    if not _run([str(python), "-I", "-c", imports], work, env):
        return False
    if package.tests is None:
        print(f"{package.name}: installed and imported; it has no tests of its own")
        return True
    with tarfile.open(_find(dist, package, ".tar.gz")) as sdist:
        sdist.extractall(work / "sdist", filter="data")
    (unpacked,) = (work / "sdist").iterdir()
    if not (unpacked / "tests").is_dir():
        print(f"{package.name}: its sdist has no tests/ folder")
        return False
    (unpacked / "pytest.ini").write_text(pytest_ini(), "utf-8")
    peers = npm_peers(unpacked / "tests")
    if peers is not None and not collect_only:
        npm = shutil.which("npm")
        if npm is None:
            print(f"{package.name}: npm is not on the path; the tests needing {peers} skip")
        elif not _run([npm, "ci", "--prefix", str(peers), *_NPM_QUIET], work, env):
            return False
    command = [str(python), "-m", "pytest", "tests"]
    command += ["--collect-only", "-qq"] if collect_only else ["-q"]  # -qq: counts per file
    return _run(command, unpacked, env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("names", nargs="*", help="packages to test (default: all)")
    parser.add_argument("--dist", type=Path, required=True, help="the built wheels and sdists")
    parser.add_argument(
        "--collect-only", action="store_true", help="install, import and collect; run no test"
    )
    args = parser.parse_args(argv)
    members = packages()
    by_name = {member.name: member for member in members}
    unknown = [name for name in args.names if name not in by_name]
    if unknown:
        raise SystemExit(f"not workspace packages: {', '.join(unknown)}")
    chosen = [by_name[name] for name in args.names] if args.names else members
    failed: list[str] = []
    for package in chosen:
        print(f"\n--- {package.name}: alone in a fresh venv", flush=True)
        work = Path(tempfile.mkdtemp(prefix=f"{package.name}-"))
        try:
            dist = args.dist.resolve()
            if not check_package(package, members, dist, work, collect_only=args.collect_only):
                failed.append(package.name)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\npackages alone: {len(chosen) - len(failed)} of {len(chosen)} passed", end="")
    print(f"; failed: {', '.join(failed)}" if failed else "")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
