"""Fixtures for yoagent-core's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from core_helpers import Recorder

from yoagent.core.support import ChildProcess


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def spawned() -> Iterator[list[ChildProcess]]:
    """Children a test started: killed and released at its end, whatever happened."""
    children: list[ChildProcess] = []
    yield children
    for child in children:
        child.kill()
        child.release()
