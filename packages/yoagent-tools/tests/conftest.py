"""Fixtures for yoagent-tools' tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from tools_helpers import make_ctx

from yoagent.core import ToolContext


@pytest.fixture
def ctx() -> ToolContext:
    return make_ctx()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An allowed folder, with a sibling ``outside`` folder holding a secret."""
    inside = tmp_path / "root"
    inside.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    return inside.resolve()
