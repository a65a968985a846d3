"""What ``yoagent --version`` prints: every installed yoagent distribution and its version.

The packages are versioned independently, so a bug report needs each one's version, not
only the CLI's.
"""

from __future__ import annotations

import re
from importlib.metadata import distributions


def installed_versions() -> list[tuple[str, str]]:
    """``(name, version)`` of each installed ``yoagent`` / ``yoagent-*`` distribution, by name.

    When a distribution is installed twice on the path, the first one found wins, as it
    does for imports.
    """
    found: dict[str, str] = {}
    for distribution in distributions():
        name = re.sub(r"[-_.]+", "-", distribution.name or "").lower()
        if name == "yoagent" or name.startswith("yoagent-"):
            found.setdefault(name, distribution.version)
    return sorted(found.items())


def version_text() -> str:
    """One ``name version`` line per installed yoagent distribution."""
    lines = [f"{name} {version}" for name, version in installed_versions()]
    return "\n".join(lines) or "yoagent: no installed yoagent distribution (a source tree?)"
