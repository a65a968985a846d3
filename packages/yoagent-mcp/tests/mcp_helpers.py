"""Helpers for yoagent-mcp's tests: where the test servers are, free ports, the process table."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

TESTS = Path(__file__).resolve().parent
PY_SERVER = TESTS / "servers" / "py_server.py"
RAW_SERVER = TESTS / "servers" / "raw_server.py"
NPM = TESTS / "npm"
EVERYTHING = (
    NPM / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
LOOPBACK_SHIM = NPM / "loopback.cjs"
SECRET_PATH = "sk-live-path0123456789"
"""A key in the HTTP test server's endpoint path."""


def py_server_argv(*extra: str) -> list[str]:
    """The argv of the Python SDK test server over stdio."""
    return [sys.executable, str(PY_SERVER), "stdio", *extra]


def node() -> str:
    """The node binary, or skip the test saying why there is none."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed: server-everything cannot run")
    return found


def everything_script() -> str:
    """server-everything's entry point, or skip (it is installed by `npm ci` in tests/npm)."""
    if not EVERYTHING.is_file():
        pytest.skip(f"server-everything is not installed: run `npm ci --prefix {NPM}`")
    return str(EVERYTHING)


def free_port() -> int:
    """A loopback TCP port nobody listens on, picked below the kernel's ephemeral range
    (``yoagent.testing.free_port``'s twin: this package's tests also run alone, without
    yoagent-testing) (32768 and up): no ``bind(0)`` and no outgoing connection elsewhere can take it
    between this probe and the server's own bind, as they can a port the kernel chose."""
    for _ in range(200):
        port = random.randrange(20_000, 32_768)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:  # in use (or lingering): try another
                continue
            return port
    raise RuntimeError("no free loopback port between 20000 and 32767")


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Block until something accepts connections on ``port`` (fail if ``process`` died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the test server exited with {process.returncode} before listening")
        with socket.socket() as probe:
            probe.settimeout(0.5)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {timeout} s")


def processes_with(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line contains ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def wait_until_gone(marker: str, timeout: float = 10.0) -> list[int]:
    """Wait for every process carrying ``marker`` to go; the pids still there after ``timeout``."""
    deadline = time.monotonic() + timeout
    left = processes_with(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = processes_with(marker)
    return left


@asynccontextmanager
async def py_server_streams() -> AsyncGenerator[Any]:
    """The SDK's own stdio client to the Python test server: its read and write streams.

    ``errlog`` is given at each call: the SDK's default is the ``sys.stderr`` of when it
    was imported, which a test session that has ended (mutmut runs several in one
    process) closed."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    parameters = StdioServerParameters(command=sys.executable, args=[str(PY_SERVER), "stdio"])
    async with stdio_client(parameters, errlog=sys.stderr) as streams:
        yield streams


class WrappedStream:
    """A stream of the SDK's transport, seen by a transport of the tests' own that wraps it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class WrappedReadStream(WrappedStream):
    """A read stream whose every item goes through :meth:`seen`, which may end the stream
    (``anyio.EndOfStream``)."""

    def seen(self, item: Any) -> Any:
        return item

    async def receive(self) -> Any:
        return self.seen(await self.inner.receive())

    def __aiter__(self) -> WrappedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
