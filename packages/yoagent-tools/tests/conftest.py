"""Fixtures for yoagent-tools' tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import Layout
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


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


@pytest.fixture
def real_home_file() -> Iterator[Path]:
    """A name in the real home folder that no test run leaves behind."""
    path = Path.home() / f".yoagent-sandbox-test-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)
