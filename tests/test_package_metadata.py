"""What every workspace member's ``pyproject.toml`` needs beyond what the built files show."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MEMBERS = sorted(
    path.parent
    for path in [
        *REPO.glob("packages/*/pyproject.toml"),
        *REPO.glob("integrations/*/pyproject.toml"),
    ]
)


def test_the_workspace_has_members() -> None:
    assert len(MEMBERS) >= 8


@pytest.mark.parametrize("member", MEMBERS, ids=lambda path: path.name)
def test_a_reinstall_from_a_clone_rebuilds_when_the_code_changed(member: Path) -> None:
    """uv keys its cached build of a local folder on ``pyproject.toml`` alone unless told
    otherwise: ``uv tool install`` after a ``git pull`` would install the old code."""
    config = tomllib.loads((member / "pyproject.toml").read_text(encoding="utf-8"))
    keys = config.get("tool", {}).get("uv", {}).get("cache-keys", [])
    files = {key.get("file") for key in keys if isinstance(key, dict)}
    assert {"pyproject.toml", "src/**/*.py"} <= files, f"{member.name}: [tool.uv] cache-keys"
    # Every other kind of file under src/ ships too (prices.json): its pattern is a key.
    # (Not src/**/*: the __pycache__ files a run writes would rebuild it every time.)
    shipped = {
        path.suffix
        for path in (member / "src").rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and path.name != "py.typed"
    }
    assert {f"src/**/*{suffix}" for suffix in shipped} <= files, member.name
