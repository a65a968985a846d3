"""Several workers on one PostgreSQL database: a killed worker's runs are finished by
another, and a provider's request limit holds across workers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbos import DBOS
from dbos_helpers import TIMEOUT, Postgres, watching, workers
from scripted_server import ModelServer

from yoagent.dbos import RunStatus, get_run


async def finished(run_ids: list[str]) -> None:
    """Wait until every run finished (queued runs included)."""
    for _ in range(int(TIMEOUT / 0.1)):
        states = [await (await get_run(run_id)).status() for run_id in run_ids]
        if all(state is RunStatus.FINISHED for state in states):
            return
        assert RunStatus.FAILED not in states, states
        await asyncio.sleep(0.1)
    raise AssertionError(f"the runs did not finish: {states}")


async def executors(run_ids: list[str]) -> list[str]:
    """The worker running (or that ran) each run."""
    statuses = [await DBOS.get_workflow_status_async(run_id) for run_id in run_ids]
    return [status.executor_id for status in statuses if status is not None]


async def exists(run_ids: list[str]) -> None:
    for _ in range(int(TIMEOUT / 0.05)):
        try:
            for run_id in run_ids:
                await get_run(run_id)
            return
        except LookupError:
            await asyncio.sleep(0.05)


async def test_the_runs_of_a_killed_worker_are_finished_by_the_other(
    postgres: Postgres, server: ModelServer, tmp_path: Path
) -> None:
    database = postgres.database()
    prompts = {f"job{i}": f"effects 1 job{i}" for i in range(4)}
    holds = [server.hold(prompt, turn=0, chunks=2) for prompt in prompts.values()]
    runs = [f"{run_id}={prompt}" for run_id, prompt in prompts.items()]
    with workers(database, server, tmp_path) as group, watching(database):
        doomed = group.spawn("a", "serve", "-", *runs)  # two runs each: worker_concurrency 2
        group.spawn("b", "serve", "-")
        for hold in holds:
            await group.held(hold)
        assert sorted(await executors(list(prompts))) == ["a", "a", "b", "b"]
        group.kill(doomed)
        server.release()  # b's own two replies go on; a's are gone with it

        await finished(list(prompts))  # b took a's two runs over once a fell silent
        assert await executors(list(prompts)) == ["b"] * 4

    assert sorted(group.effect_lines()) == sorted(f"{run_id}:call_0" for run_id in prompts)
    assert dict(server.completed) == {
        **{(prompt, 0): 1 for prompt in prompts.values()},
        **{(prompt, 1): 1 for prompt in prompts.values()},
    }


async def test_a_provider_limit_holds_across_two_workers(
    postgres: Postgres, server: ModelServer, tmp_path: Path
) -> None:
    server.set_limit(1)  # a second request in flight gets a 429
    for limited in (False, True):
        database = postgres.database()
        runs = [f"r{i}=slow {limited} {i}" for i in range(6)]
        limit = "1" if limited else "-"
        folder = tmp_path / str(limited)
        folder.mkdir()
        with workers(database, server, folder) as group, watching(database):
            group.spawn("a", "serve", limit, *runs[:3])
            group.spawn("b", "serve", limit, *runs[3:])
            await exists([run.split("=")[0] for run in runs])
            await finished([run.split("=")[0] for run in runs])
        if limited:
            assert server.rejected == 0, "the limit let two requests through at once"
            assert server.peak == 1
        else:
            assert server.rejected > 0, "the control run never tripped the server's limit"
            server.set_limit(1)
