"""Crash tests: real worker processes killed with SIGKILL, on SQLite and on PostgreSQL.

A killed run is recovered by the restarted worker (or, on PostgreSQL, by another one); it
finishes with each tool's side effect counted once, the scripted server counting each
completed request once, and the same messages as a run nobody interrupted.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ModelServer

WORKER = Path(__file__).with_name("worker.py")
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
            [sys.executable, str(WORKER), self.database, self.server.url, executor,
             str(self.effects), *action],
            cwd=self.folder,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    async def finish(self, process: subprocess.Popen[bytes]) -> None:
        code = await asyncio.to_thread(process.wait, TIMEOUT)
        if code != 0:
            logs = "\n".join(p.read_text() for p in sorted(self.folder.glob("*.log")))
            raise AssertionError(f"worker exited {code}:\n{logs[-4000:]}")

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


async def held(event: Any) -> None:
    assert await asyncio.to_thread(event.wait, TIMEOUT), "the worker never reached the hold"


def result(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


async def uncrashed(group: Workers, prompt: str) -> dict[str, Any]:
    """The messages of ``prompt`` run to its end with no crash (the server's counts are
    reset afterwards)."""
    out = group.folder / "control.json"
    await group.finish(group.spawn("control", "start", "control", prompt, str(out)))
    group.server.completed.clear()
    group.effects.write_text("")
    return result(out)


async def test_worker_killed_after_a_tool_call_is_recovered_without_repeating_it(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    prompt = "effects 2 after-tool"
    with workers(database_url, server, tmp_path) as group:
        control = await uncrashed(group, prompt)
        hold = server.hold(prompt, turn=1, chunks=2)  # the request after the first tool call
        out = tmp_path / "run.json"
        worker = group.spawn("w1", "start", "r1", prompt, str(out))
        await held(hold)
        assert group.effect_lines() == ["r1:call_0"]  # the tool ran and its step was written
        group.kill(worker)

        await group.finish(group.spawn("w1", "wait", "r1", str(out)))

    assert group.effect_lines() == ["r1:call_0", "r1:call_1"]  # each once
    assert dict(server.completed) == {(prompt, 0): 1, (prompt, 1): 1, (prompt, 2): 1}
    assert result(out) == control


async def test_worker_killed_mid_stream_is_recovered_with_the_reply_asked_again(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    prompt = "effects 1 mid-stream"
    with workers(database_url, server, tmp_path) as group:
        control = await uncrashed(group, prompt)
        hold = server.hold(prompt, turn=0, chunks=3)  # the first reply, half streamed
        out = tmp_path / "run.json"
        worker = group.spawn("w1", "start", "r1", prompt, str(out))
        await held(hold)
        group.kill(worker)
        assert group.effect_lines() == []
        assert not server.completed

        await group.finish(group.spawn("w1", "wait", "r1", str(out)))

    assert group.effect_lines() == ["r1:call_0"]
    assert dict(server.completed) == {(prompt, 0): 1, (prompt, 1): 1}
    assert result(out) == control
