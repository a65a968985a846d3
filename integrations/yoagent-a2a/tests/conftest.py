"""Fixtures for yoagent-a2a's tests: the scripted model server, and the A2A agent on it."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from a2a_model_server import ModelServer
from a2a_testing import Ends, agent_factory, free_port, serve

from yoagent.a2a import MemoryHistoryStore, a2a_app


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the A2A SDK runs on asyncio


@pytest.fixture(scope="session")
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def ends() -> Ends:
    return Ends()


@pytest.fixture
def history() -> MemoryHistoryStore:
    return MemoryHistoryStore()


@pytest.fixture
def a2a_url(model_server: ModelServer, ends: Ends, history: MemoryHistoryStore) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    app = anyio.run(
        lambda: a2a_app(
            agent_factory(model_server.url, ends),
            name="weather-agent",
            description="Knows the weather.",
            url=url,
            store=history,
        )
    )
    with serve(app, port):
        yield url
