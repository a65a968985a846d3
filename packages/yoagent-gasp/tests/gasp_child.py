"""A recording agent in a process of its own, for the crash and lease-race tests.

``crash <repo> <marker>``: record a run whose tool writes ``marker`` and then hangs (the
test kills the process there). ``tear <repo>``: record a run, and SIGKILL the process in
the middle of the grouped write holding ``tool.called`` — half of that line is on disk.
``race <repo> <ready> <go>``: open a recorder, write ``ready``, wait for ``go``, record a
run whose tool takes a while, print what happened.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import anyio
from gasp_helpers import CONFIG, calls, text

import yoagent.gasp._appender as appender
from yoagent.core import Agent, MockProvider, tool
from yoagent.gasp import NewGoal, Recorder


def _agent(pause: float, marker: Path | None) -> Agent:
    @tool
    async def work(step: str) -> str:
        """Do some work."""
        if marker is not None:
            await anyio.Path(marker).write_text(step)
        await anyio.sleep(pause)
        return f"did {step}"

    provider = MockProvider([calls(("work", {"step": "one"}), turn=1), text("done")])
    return Agent.from_provider(provider, CONFIG, tools=[work])


async def crash(repo: Path, marker: Path) -> None:
    recorder = Recorder.open(repo, NewGoal("crash mid-run"), worker_id="doomed")
    recording = recorder.recording("run until killed")
    await _agent(3600, marker).prompt("run until killed", on_event=recording)


def _write_then_die(descriptor: int, data: bytes) -> None:
    """The log's write, killed by SIGKILL once it is half-way through ``tool.called``."""
    at = data.find(b'"tool.called"')
    if at < 0:
        os.write(descriptor, data)
        return
    os.write(descriptor, data[: at + 8])
    os.fsync(descriptor)
    os.kill(os.getpid(), signal.SIGKILL)


async def tear(repo: Path) -> None:
    appender.write_all = _write_then_die
    recorder = Recorder.open(repo, NewGoal("crash mid-write"), worker_id="torn")
    async with recorder.recording("die mid-write") as recording:
        await _agent(0, None).prompt("die mid-write", on_event=recording)


def open_and_wait(repo: Path, ready: Path, go: Path) -> Recorder:
    recorder = Recorder.open(repo, NewGoal("race for the lease"))
    ready.write_text("ready")
    while not go.exists():
        time.sleep(0.01)
    return recorder


async def race(recorder: Recorder) -> None:
    forwarded: list[str] = []
    agent = _agent(1.5, None)
    async with recorder.recording("race", forward=lambda e: forwarded.append(e.type)) as rec:
        added = await agent.prompt("race", on_event=rec)
    print(
        json.dumps(
            {
                "run_id": rec.run_id,
                "commit": rec.commit,
                "error": type(rec.error).__name__ if rec.error else None,
                "message": str(rec.error) if rec.error else None,
                "forwarded_end": forwarded[-1] if forwarded else None,
                "run_messages": len(added),
            }
        )
    )


def main(argv: list[str]) -> None:
    if argv[0] == "crash":
        anyio.run(crash, Path(argv[1]), Path(argv[2]))
    elif argv[0] == "tear":
        anyio.run(tear, Path(argv[1]))
    elif argv[0] == "race":
        anyio.run(race, open_and_wait(Path(argv[1]), Path(argv[2]), Path(argv[3])))


if __name__ == "__main__":
    main(sys.argv[1:])
