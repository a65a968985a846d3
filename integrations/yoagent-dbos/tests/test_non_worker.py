"""A process launched with ``worker=False`` takes no run, not even a recovered one.

DBOS re-enqueues a dead worker's runs on its internal queue, which every launched process
polls; a process of the same application version but without the run's agent (a web
server answering approvals, say) would take the run, fail to start it, and keep it PENDING
under its own executor id, where no worker would ever take it again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbos import DBOS
from dbos_helpers import pairs, result, wait_until_waiting, watching, workers
from durable_fixtures import durable
from scripted_server import ModelServer

from yoagent.core import Allow
from yoagent.dbos import DurableRuntime, RunQueue, get_run

OTHER = RunQueue("other-runs")


async def workflow_status(run_id: str) -> tuple[str, str | None, str | None]:
    status = await DBOS.get_workflow_status_async(run_id)
    assert status is not None
    return status.status, status.executor_id, status.app_version


async def test_a_non_worker_leaves_recovered_runs_to_the_workers(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    with workers(database_url, server, tmp_path) as group:
        worker = group.spawn("w1", "start", str(tmp_path), *pairs({"held": "approve held"}))
        with watching(database_url):
            await wait_until_waiting("held")
            *_, version = await workflow_status("held")
        group.kill(worker)
        # A client deployed beside the workers, with their application version.
        client = DurableRuntime(
            database_url,
            executor_id="client",
            application_version=version,
            worker=False,
            recover_after=None,
        )
        with client:
            # What a live worker's watch does for a silent one: re-enqueue its runs.
            recover = DBOS._recover_pending_workflows  # pyright: ignore[reportPrivateUsage]
            assert len(await asyncio.to_thread(recover, ["w1"])) == 1
            for _ in range(30):  # three times the internal queue's polling interval
                await asyncio.sleep(0.1)
                assert await workflow_status("held") == ("ENQUEUED", "w1", version)

            restarted = group.spawn("w2", "wait", str(tmp_path), "held")
            await wait_until_waiting("held")
            assert (await workflow_status("held"))[:2] == ("PENDING", "w2")
            await (await get_run("held")).resume(Allow())
            await group.finish(restarted)

    messages = result(tmp_path / "held.json")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    assert "guarded 1" in messages[2]["content"][0]["text"]


async def test_a_worker_takes_runs_only_from_the_queues_of_its_own_agents(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    """Another application on the same database, same name and application version, whose
    queue this process's agents do not use: its queued runs are left to its own workers."""
    runs = {"queued-1": "approve one", "queued-2": "approve two"}
    with workers(database_url, server, tmp_path) as group:
        await group.finish(group.spawn("client", "enqueue", *pairs(runs)))
        with watching(database_url):
            *_, version = await workflow_status("queued-1")
        other = durable(queue=OTHER)  # an agent of this process, on a queue of its own
        with DurableRuntime(
            database_url, executor_id="tests", application_version=version, recover_after=None
        ):
            assert other.queue is OTHER
            for _ in range(30):  # three times the queue's polling interval
                await asyncio.sleep(0.1)
                for run_id in runs:
                    assert (await workflow_status(run_id))[0] == "ENQUEUED"
            restarted = group.spawn("w1", "wait", str(tmp_path), *runs)
            for run_id in runs:
                await wait_until_waiting(run_id)
                await (await get_run(run_id)).resume(Allow())
            await group.finish(restarted)

    for run_id in runs:
        messages = result(tmp_path / f"{run_id}.json")["messages"]
        assert messages[-1]["content"][0]["text"] == "done"
