"""Fixtures for yoagent-core's tests."""

from __future__ import annotations

import pytest
from core_helpers import Recorder


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
