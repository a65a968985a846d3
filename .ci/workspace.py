"""The workspace's packages, found from their pyproject.toml files.

Every check in .ci/ asks this module which packages exist (``packages/*`` and
``integrations/*`` folders holding a pyproject.toml), so a new package is checked the day
it appears, with no list to update. Run it to see what it finds:

    uv run python .ci/workspace.py            # one line per package
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
MEMBER_GLOBS = ("packages/*/pyproject.toml", "integrations/*/pyproject.toml")
# What pyright leaves out of a source tree on its own: hidden folders and byte-code caches.
_SKIPPED_PARTS = ("__pycache__",)


@dataclass(frozen=True)
class Package:
    """One workspace member, as its pyproject.toml describes it."""

    folder: Path
    table: dict[str, Any]

    @property
    def name(self) -> NormalizedName:
        return canonicalize_name(self.table["project"]["name"])

    @property
    def version(self) -> str:
        return str(self.table["project"]["version"])

    @property
    def relative(self) -> str:
        """The folder relative to the workspace root, e.g. ``packages/yoagent-core``."""
        return self.folder.relative_to(self.folder.parent.parent).as_posix()

    @cached_property
    def requirements(self) -> list[Requirement]:
        """Runtime requirements, optional ones included."""
        project = self.table["project"]
        raw = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            raw.extend(extra)
        return [Requirement(text) for text in raw]

    @property
    def test_group(self) -> list[str]:
        """The ``test`` dependency group: what the package's own tests need besides it."""
        return list(self.table.get("dependency-groups", {}).get("test", []))

    @property
    def classifiers(self) -> list[str]:
        return list(self.table["project"].get("classifiers", []))

    @property
    def tests(self) -> Path | None:
        tests = self.folder / "tests"
        return tests if tests.is_dir() else None

    def source_files(self) -> list[Path]:
        """Every Python file under ``src/`` that a type checker must see."""
        src = self.folder / "src"
        if not src.is_dir():
            return []
        return sorted(
            path
            for pattern in ("*.py", "*.pyi")
            for path in src.rglob(pattern)
            if not any(
                part.startswith(".") or part in _SKIPPED_PARTS
                for part in path.relative_to(src).parts
            )
        )


_XDIST_OPTIONS = {"-n": 2, "--dist": 2, "--numprocesses": 2}


def pytest_options(root: Path = ROOT) -> dict[str, Any]:
    """The workspace's ``[tool.pytest.ini_options]`` for a run outside the workspace's venv
    (one package alone, mutmut's copy): ``testpaths`` dropped (they name the workspace's
    folders) and the pytest-xdist options taken out of ``addopts`` (those runs have no
    xdist, and mutmut runs its tests one process at a time)."""
    workspace = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    options: dict[str, Any] = dict(workspace["tool"]["pytest"]["ini_options"])
    options.pop("testpaths", None)
    addopts: list[str] = list(options.get("addopts", []))
    kept: list[str] = []
    index = 0
    while index < len(addopts):
        width = _XDIST_OPTIONS.get(addopts[index], 1)
        if width == 1:
            kept.append(addopts[index])
        index += width
    options["addopts"] = kept
    return options


def packages(root: Path = ROOT) -> list[Package]:
    """Every workspace member under ``root``, sorted by folder."""
    found: list[Package] = []
    for pattern in MEMBER_GLOBS:
        for pyproject in sorted(root.glob(pattern)):
            table = tomllib.loads(pyproject.read_text("utf-8"))
            if "project" not in table:
                raise SystemExit(f"{pyproject}: no [project] table")
            found.append(Package(pyproject.parent, table))
    return found


def internal_requirements(package: Package, members: list[Package]) -> list[Requirement]:
    """The requirements of ``package`` that name another workspace member."""
    names = {member.name for member in members}
    return [r for r in package.requirements if canonicalize_name(r.name) in names]


def closure(package: Package, members: list[Package]) -> list[Package]:
    """``package`` and every member it needs, directly or not, in dependency order."""
    by_name = {member.name: member for member in members}
    ordered: list[Package] = []
    seen: set[str] = set()

    def visit(current: Package) -> None:
        if current.name in seen:
            return
        seen.add(current.name)
        for requirement in internal_requirements(current, members):
            visit(by_name[canonicalize_name(requirement.name)])
        ordered.append(current)

    visit(package)
    return ordered


def main() -> int:
    members = packages()
    for member in members:
        needs = ", ".join(p.name for p in closure(member, members)[:-1]) or "-"
        print(f"{member.name:24} {member.version:10} {member.relative:32} needs: {needs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
