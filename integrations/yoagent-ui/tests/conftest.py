"""Fixtures for yoagent-ui's tests: the scripted model server, and the endpoints on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ui_model_server import ModelServer
from ui_testing import Ends
from web_testing import browser, screenshots, web  # noqa: F401  (the browser tests' fixtures)

from yoagent.ui import MemoryThreadStore


@pytest.fixture(scope="session")
def model_server() -> Iterator[ModelServer]:
    """One scripted Chat Completions server for the whole session."""
    with ModelServer() as server:
        yield server


@pytest.fixture
def ends() -> Ends:
    """Records how each run of the test's agents ended."""
    return Ends()


@pytest.fixture
def store() -> MemoryThreadStore:
    """The test endpoint's thread store."""
    return MemoryThreadStore()
