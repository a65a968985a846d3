"""One local Ray cluster for the whole suite (starting one takes seconds), and one
scripted model server on loopback for its workers to call."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Under `uv run`, Ray would start each worker through `uv run` in a copy of the working
# folder; the tests want workers on this very interpreter and environment.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")

import ray
from model_server import ModelServer

from yoagent.ray import WorkerPool

TESTS = Path(__file__).parent


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """``ray.init(num_cpus=2)``, with this folder importable on the workers."""
    paths = [str(TESTS), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}},
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def server(model_server: ModelServer) -> ModelServer:
    """The shared server with its counts reset and no limit."""
    model_server.reset()
    return model_server


@pytest.fixture(scope="session")
def pool(ray_cluster: None) -> Iterator[WorkerPool]:
    """Two worker actors shared by the tests (starting workers takes seconds), on half a
    CPU each so a test may start a pool of its own beside them."""
    with WorkerPool(2, slots=16, worker_options={"num_cpus": 0.5}) as workers:
        yield workers
