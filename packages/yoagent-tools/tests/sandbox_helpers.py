"""Helpers for the command sandbox tests: which mechanisms run here, and file-tree snapshots."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from yoagent.tools.command_sandbox import CommandSandbox, SandboxUnavailableError


def _why_not(mechanism: str) -> str | None:
    try:
        CommandSandbox("read-only", mechanisms=[mechanism]).resolve()  # type: ignore[list-item]
    except SandboxUnavailableError as error:
        return str(error)
    return None


def mechanism_expected(mechanism: str) -> str | None:
    """Why ``mechanism`` must work here (so its tests fail rather than skip), or ``None``.

    ``.ci/run`` sets ``YOAGENT_REQUIRE_SANDBOX``: it installs bubblewrap, and the project's
    machines have Landlock and unprivileged user namespaces. A machine that restricts user
    namespaces (Ubuntu 24.04's AppArmor default) skips, saying why.
    """
    if mechanism == "seatbelt":
        return "this is macOS" if sys.platform == "darwin" else None
    if sys.platform.startswith("linux") and os.environ.get("YOAGENT_REQUIRE_SANDBOX"):
        return "YOAGENT_REQUIRE_SANDBOX is set"
    return None


def mechanism_param(mechanism: str) -> object:
    """``mechanism`` as a parameter, skipped only where it neither works nor is expected."""
    reason = _why_not(mechanism)
    skip = reason is not None and mechanism_expected(mechanism) is None
    return pytest.param(
        mechanism,
        marks=pytest.mark.skipif(skip, reason=f"{mechanism} unavailable here: {reason}"),
    )


LINUX_MECHANISMS = [mechanism_param("landlock"), mechanism_param("bubblewrap")]
"""Both Linux mechanisms, for ``@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)``."""


def snapshot(*roots: Path) -> dict[str, str]:
    """Every path under ``roots`` with what it is: a file's content, a link's target, ``dir``."""
    seen: dict[str, str] = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            seen[str(root)] = "missing"
            continue
        for folder, dirs, files in os.walk(root):
            seen[folder] = "dir"
            for name in [*dirs, *files]:
                path = Path(folder, name)
                if path.is_symlink():
                    seen[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_file():
                    seen[str(path)] = path.read_text(errors="replace")
    return seen


def copy_confinement_step(into: Path) -> Path:
    """A world-readable copy of the confinement step, for a run as another user."""
    from yoagent.tools import _confine

    target = into / "_confine.py"
    shutil.copyfile(_confine.__file__, target)
    target.chmod(0o644)
    return target
