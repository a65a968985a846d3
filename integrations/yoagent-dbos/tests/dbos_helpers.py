"""Helpers of the crash tests: worker processes, and this process watching them."""

from __future__ import annotations

import asyncio
import glob
import json
import os
import pwd
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scripted_server import ModelServer

from yoagent.dbos import DurableRuntime, RunNotFoundError, RunStatus, get_run


class Postgres:
    """A PostgreSQL server of the session; :meth:`database` names a fresh database on it
    (DBOS creates it on first use)."""

    def __init__(self, port: int) -> None:
        self.port = port

    def database(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/yoagent_{uuid.uuid4().hex[:12]}"


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, or Debian's newest."""
    found = shutil.which("pg_ctl")
    if found is not None and shutil.which("initdb") is not None:
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    """A loopback TCP port nobody listens on, picked below the kernel's ephemeral range
    (32768 and up): no ``bind(0)`` and no outgoing connection elsewhere can take it
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


@contextmanager
def postgres_server() -> Iterator[Postgres]:
    """A PostgreSQL server of its own on a free loopback port, in a temporary folder, as
    the ``postgres`` user when running as root (initdb refuses root); stopped at the end."""
    bin_dir = postgres_bin()
    assert bin_dir is not None, "PostgreSQL is not installed"
    as_user: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="yoagent-dbos-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = folder / "data", folder / "server.log"
    port = _free_port()

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, timeout=120)

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust")
        options = (
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200"
        )
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        yield Postgres(port)
    finally:
        subprocess.run(
            [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


WORKER = Path(__file__).with_name("dbos_worker.py")
TIMEOUT = 60.0


class Workers:
    """Worker processes of one test (each killed at the end if still running)."""

    def __init__(self, database: str, server: ModelServer, folder: Path) -> None:
        self.database = database
        self.server = server
        self.folder = folder
        self.effects = folder / "effects.txt"
        self.effects.touch()
        self.processes: list[subprocess.Popen[bytes]] = []

    def spawn(self, executor: str, *action: str) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{executor}-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen(
            [
                sys.executable,
                str(WORKER),
                self.database,
                self.server.url,
                executor,
                str(self.effects),
                *action,
            ],
            cwd=self.folder,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    async def finish(self, process: subprocess.Popen[bytes]) -> None:
        code = await asyncio.to_thread(process.wait, TIMEOUT)
        if code != 0:
            raise AssertionError(f"worker exited {code}:\n{self.logs()}")

    async def held(self, event: threading.Event) -> None:
        """Wait until a worker reached the hold ``event`` stands for."""
        if not await asyncio.to_thread(event.wait, TIMEOUT):
            raise AssertionError(f"no worker reached the hold:\n{self.logs()}")

    def logs(self) -> str:
        """The end of what the workers printed."""
        return "\n".join(p.read_text() for p in sorted(self.folder.glob("*.log")))[-4000:]

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        process.kill()  # SIGKILL: no cleanup of any kind
        process.wait(TIMEOUT)

    def effect_lines(self) -> list[str]:
        return self.effects.read_text().splitlines()

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(TIMEOUT)


@contextmanager
def workers(database: str, server: ModelServer, folder: Path) -> Iterator[Workers]:
    running = Workers(database, server, folder)
    try:
        yield running
    finally:
        running.close()


def result(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def without_timestamps(data: Any) -> Any:
    """JSON data without the wall-clock fields a recovered run stamps anew."""
    if isinstance(data, dict):
        items: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
        return {k: without_timestamps(v) for k, v in items.items() if k != "timestamp"}
    if isinstance(data, list):
        return [without_timestamps(v) for v in data]  # pyright: ignore[reportUnknownVariableType]
    return data


def other_database(database: str) -> str:
    """A second, empty database beside ``database`` (a sibling file, or another database
    on the same PostgreSQL server)."""
    if database.startswith("sqlite:///"):
        return database.removesuffix(".sqlite") + "-other.sqlite"
    return database.rsplit("/", 1)[0] + "/yoagent_" + uuid.uuid4().hex[:12]


@contextmanager
def uncrashed(
    database: str, runs: dict[str, str], folder: Path
) -> Iterator[Callable[[], Awaitable[dict[str, dict[str, Any]]]]]:
    """The runs ``{run id: prompt}`` with nobody interrupting them, in a worker of their
    own on their own server and database, going on beside the test; the context gives the
    coroutine waiting for their results (by run id)."""
    folder.mkdir()
    with ModelServer() as server, workers(other_database(database), server, folder) as group:
        process = group.spawn("control", "start", str(folder), *pairs(runs))

        async def finished() -> dict[str, dict[str, Any]]:
            await group.finish(process)
            return {run_id: result(folder / f"{run_id}.json") for run_id in runs}

        yield finished


def pairs(runs: dict[str, str]) -> list[str]:
    """``{run id: prompt}`` as the worker's ``RUN=PROMPT`` arguments."""
    return [f"{run_id}={prompt}" for run_id, prompt in runs.items()]


@contextmanager
def watching(database: str) -> Iterator[DurableRuntime]:
    """A runtime in this process that takes no queued runs (the workers do)."""
    with DurableRuntime(database, executor_id="tests", worker=False, recover_after=None) as runtime:
        yield runtime


async def wait_until_waiting(run_id: str) -> None:
    for _ in range(int(TIMEOUT / 0.05)):
        try:
            if await (await get_run(run_id)).status() is RunStatus.WAITING:
                return
        except RunNotFoundError:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never waited for approval")
