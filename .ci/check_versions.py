"""Every requirement between workspace packages admits the version the workspace holds.

    uv run python .ci/check_versions.py

uv resolves workspace members to their folders whatever the ranges say, so bumping
yoagent-core to 0.2.0 while yoagent-providers still asks for ``yoagent-core<0.2`` locks
and syncs without a word here, and breaks for the first user who installs from PyPI.
This check fails on exactly that. Exit status 1 when any range misses, with one line each.
"""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version
from workspace import ROOT, internal_requirements, packages


def problems(root: Path = ROOT) -> list[str]:
    """One line per internal requirement that excludes the workspace's version."""
    members = packages(root)
    versions = {member.name: Version(member.version) for member in members}
    found: list[str] = []
    for member in members:
        for requirement in internal_requirements(member, members):
            current = versions[canonicalize_name(requirement.name)]
            if not requirement.specifier.contains(current, prereleases=True):
                found.append(
                    f"{member.relative}/pyproject.toml: {member.name} requires "
                    f"'{requirement}', but the workspace's {requirement.name} is {current}"
                )
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    count = len(packages())
    print(f"internal version ranges: {count} packages, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
