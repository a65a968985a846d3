"""The README's install of the ``yoagent`` command from a clone works: ``uv tool install``
of ``integrations/yoagent`` (the command with every library) or of
``integrations/yoagent-cli`` (the command alone), each into a tool folder of its own. uv
finds the sibling packages through the workspace, which ``pip install`` of the same
folder cannot (they are not on an index yet)."""

from __future__ import annotations

import os
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest
from install_helpers import install, links_into, run

REPO = Path(__file__).resolve().parents[1]
LIBRARIES = (
    "yoagent-core",
    "yoagent-providers",
    "yoagent-tools",
    "yoagent-pricing",
    "yoagent-mcp",
    "yoagent-decision",
    "yoagent-gasp",
)

pytestmark = [
    pytest.mark.install,
    pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH"),
]


@pytest.mark.parametrize(
    ("folder", "distributions"),
    [
        ("integrations/yoagent", ("yoagent", "yoagent-cli", *LIBRARIES)),
        ("integrations/yoagent-cli", ("yoagent-cli", *LIBRARIES)),
    ],
)
def test_uv_tool_install_from_a_clone_gives_a_working_yoagent(
    tmp_path: Path, folder: str, distributions: tuple[str, ...]
) -> None:
    tools, bin_dir = tmp_path / "tools", tmp_path / "bin"
    env = {"UV_TOOL_DIR": str(tools), "UV_TOOL_BIN_DIR": str(bin_dir), "UV_NO_CONFIG": "1"}
    uv = shutil.which("uv")
    assert uv is not None
    install([uv, "tool", "install", str(REPO / folder)], what=folder, cwd=tmp_path, env=env)

    command = bin_dir / ("yoagent.exe" if os.name == "nt" else "yoagent")
    ran = run([str(command), "--version"], timeout=60, cwd=tmp_path, env=env)

    assert ran.returncode == 0, ran.stderr
    assert sorted(ran.stdout.splitlines()) == sorted(
        f"{name} {version(name)}" for name in distributions
    )
    assert command.resolve().is_relative_to(tools)  # the tool's own venv, not the workspace's
    assert links_into(tools, REPO) == []  # copies: the clone can move or go
