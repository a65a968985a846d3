"""The README's install of the ``yoagent`` command from a clone works: ``uv tool install``
of ``integrations/yoagent`` (the command with every library) or of
``integrations/yoagent-cli`` (the command alone), each into a tool folder of its own. uv
finds the sibling packages through the workspace, which ``pip install`` of the same
folder cannot (they are not on an index yet)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pytest
from install_helpers import install, links_into, run

from yoagent.gasp import NewGoal, Recorder

REPO = Path(__file__).resolve().parents[1]
LIBRARIES = (
    "yoagent-core",
    "yoagent-providers",
    "yoagent-tools",
    "yoagent-pricing",
    "yoagent-mcp",
    "yoagent-decision",
    "yoagent-gasp",
    "yoagent-ui",  # `yoagent web`
    "yoagent-testing",  # the web run viewer reads cassettes
)

pytestmark = [
    pytest.mark.install,
    pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH"),
]


@dataclass(frozen=True)
class Installed:
    """A ``uv tool install`` of one folder of the clone: where it put things."""

    folder: str
    tools: Path
    bin_dir: Path
    env: dict[str, str]

    def command(self, name: str) -> Path:
        return self.bin_dir / (f"{name}.exe" if os.name == "nt" else name)


@pytest.fixture(scope="module", params=["integrations/yoagent", "integrations/yoagent-cli"])
def installed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Installed:
    """The README's install (``integrations/yoagent``) and the command alone, once each."""
    folder: str = request.param
    root = tmp_path_factory.mktemp("tool")
    tools, bin_dir = root / "tools", root / "bin"
    env = {"UV_TOOL_DIR": str(tools), "UV_TOOL_BIN_DIR": str(bin_dir), "UV_NO_CONFIG": "1"}
    uv = shutil.which("uv")
    assert uv is not None
    install([uv, "tool", "install", str(REPO / folder)], what=folder, cwd=root, env=env)
    return Installed(folder, tools, bin_dir, env)


DISTRIBUTIONS = {
    "integrations/yoagent": ("yoagent", "yoagent-cli", *LIBRARIES),
    "integrations/yoagent-cli": ("yoagent-cli", *LIBRARIES),
}


def test_uv_tool_install_from_a_clone_gives_a_working_yoagent(
    installed: Installed, tmp_path: Path
) -> None:
    distributions = DISTRIBUTIONS[installed.folder]
    tools, env = installed.tools, installed.env
    command = installed.command("yoagent")
    ran = run([str(command), "--version"], timeout=60, cwd=tmp_path, env=env)

    assert ran.returncode == 0, ran.stderr
    assert sorted(ran.stdout.splitlines()) == sorted(
        f"{name} {version(name)}" for name in distributions
    )
    assert command.resolve().is_relative_to(tools)  # the tool's own venv, not the workspace's
    assert links_into(tools, REPO) == []  # copies: the clone can move or go


def test_the_documented_yoagent_gasp_check_exists_after_the_documented_install(
    installed: Installed, tmp_path: Path
) -> None:
    """docs/cli.md says to check a ``--record`` repository with ``yoagent-gasp check``;
    ``uv tool install`` links only the named distribution's own scripts, and only
    yoagent-gasp declared this one (issue 27)."""
    repo = tmp_path / "agent-log"
    Recorder.init(repo, "yoagent", NewGoal("a session"))
    command = installed.command("yoagent-gasp")
    assert command.exists(), f"{installed.folder} installs no yoagent-gasp command"
    checked = run([str(command), "check", str(repo)], timeout=120, cwd=tmp_path, env=installed.env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "GASP conformance check" in checked.stdout
    assert command.resolve().is_relative_to(installed.tools)
