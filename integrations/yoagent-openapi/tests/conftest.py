"""Fixtures: the loopback Petstore (``server``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from openapi_testing import PetstoreServer


@pytest.fixture
def server() -> Iterator[PetstoreServer]:
    with PetstoreServer() as server:
        yield server
