"""Fixtures for yoagent-mcp's tests: real MCP servers started on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from mcp_helpers import (
    LOOPBACK_SHIM,
    PY_SERVER,
    SECRET_PATH,
    everything_script,
    free_port,
    node,
    wait_for_port,
)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(timeout=30)


def _py_http() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(PY_SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(process)


@pytest.fixture
def py_http_url() -> Iterator[str]:
    """The Python SDK test server over Streamable HTTP on loopback (plain ``/mcp`` path),
    behind the gateway of ``servers/py_server.py`` (redirects, statuses, a request count)."""
    yield from _py_http()


@pytest.fixture
def other_py_http_url() -> Iterator[str]:
    """A second such server: another origin (another port) for redirects to go to."""
    yield from _py_http()


@pytest.fixture
def py_http_secret_port() -> Iterator[int]:
    """The same server whose endpoint path holds a key: ``/<SECRET_PATH>/mcp``."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(PY_SERVER), "http", str(port), f"/{SECRET_PATH}/mcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield port
    finally:
        _stop(process)


@pytest.fixture
def everything_http_url() -> Iterator[str]:
    """npm's server-everything over Streamable HTTP, held to loopback by a preload shim."""
    binary, script = node(), everything_script()
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "PORT": str(port)}
    process = subprocess.Popen(
        [binary, "--require", str(LOOPBACK_SHIM), script, "streamableHttp"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(process)
