"""Batches on a real local Ray cluster against the scripted model server."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import ray
from model_server import COMPLETION_TOKENS, PROMPT_TOKENS, ModelServer
from ray_factories import bash_agent, chat_agent, raising_agent

from yoagent.core import AssistantMessage, RetryConfig, SessionStats, TextContent, Usage
from yoagent.ray import (
    AgentTask,
    Batch,
    BatchReport,
    ErrorKinds,
    ProviderLimit,
    TaskResult,
    WorkerPool,
    rate_limiter,
    run_batch,
)


def reply_text(messages: list[object]) -> str:
    last = messages[-1]
    assert isinstance(last, AssistantMessage)
    return "".join(block.text for block in last.content if isinstance(block, TextContent))


def test_200_runs_each_get_a_result_and_the_report_is_their_sum(
    pool: WorkerPool, server: ModelServer
) -> None:
    tasks = [
        AgentTask(id=f"t{i}", prompt=f"hello {i}", data={"url": server.url}) for i in range(200)
    ]

    seen: list[int] = []

    def progress(report: BatchReport) -> None:
        seen.append(report.finished)

    results, report = run_batch(tasks, chat_agent, pool=pool, concurrency=16, progress=progress)

    assert seen == list(range(1, 201))  # called once per result, as it arrived

    assert sorted(r.task_id for r in results) == sorted(t.id for t in tasks)
    for result in results:
        assert result.ok, result.error
        assert reply_text(result.messages) == f"echo: hello {result.task_id[1:]}"
        assert result.attempts == 1
    summed = SessionStats()
    for result in results:
        summed.merge(result.stats)
    assert report.stats == summed
    assert report.stats.usage == Usage(input=200 * PROMPT_TOKENS, output=200 * COMPLETION_TOKENS)
    assert report.stats.turns == 200
    assert (report.total, report.succeeded, report.failed, report.cancelled) == (200, 200, 0, 0)
    assert report.errors == {}
    assert server.requests == 200


def test_failures_are_reported_per_task_and_only_retryable_ones_are_retried(
    pool: WorkerPool, server: ModelServer
) -> None:
    url = {"url": server.url, "retry": RetryConfig.none()}
    tasks = [
        AgentTask(id="fine", prompt="hello", data=url),
        AgentTask(id="broken", prompt="hello", data=url),  # the factory raises
        AgentTask(id="rejected", prompt="fail", data=url),  # HTTP 400: not retryable
        AgentTask(id="slow", prompt="slow 120", data=url),  # outlives the timeout
        AgentTask(id="flaky-once", prompt="flaky once 1", data=url),  # 429, then fine
        AgentTask(id="flaky-always", prompt="flaky always 99", data=url),
    ]
    batch = Batch(tasks, raising_agent, pool=pool, timeout=10, max_retries=2)
    finished_before: dict[str, int] = {}
    results: dict[str, TaskResult] = {}
    for result in batch:
        finished_before[result.task_id] = batch.report.finished - 1
        results[result.task_id] = result

    assert set(results) == {t.id for t in tasks}
    assert finished_before["slow"] == len(tasks) - 1  # streamed: the others came first
    report = batch.report
    assert (report.succeeded, report.failed, report.cancelled) == (2, 4, 0)
    errors = report.errors
    assert set(errors) == {"broken", "rejected", "slow", "flaky-always"}
    assert errors["broken"].kind == ErrorKinds.EXCEPTION
    assert "ValueError: cannot build an agent for broken" in errors["broken"].message
    assert errors["rejected"].kind == "api"
    assert not errors["rejected"].retryable
    assert errors["slow"].kind == ErrorKinds.TIMEOUT
    assert errors["flaky-always"].kind == "rate_limited"
    assert errors["flaky-always"].retryable
    attempts = {task_id: result.attempts for task_id, result in results.items()}
    assert attempts == {
        "fine": 1,
        "broken": 1,
        "rejected": 1,
        "slow": 1,
        "flaky-once": 2,
        "flaky-always": 3,
    }
    assert server.flaky == {"once": 2, "always": 3}
    assert report.retries == 1 + 2
    assert reply_text(results["flaky-once"].messages) == "ok"
    # A failed run still carries what it did: the prompt and the failed reply.
    assert [m.role for m in results["rejected"].messages] == ["user", "assistant"]


def storm(server: ModelServer, count: int) -> list[AgentTask]:
    """``count`` runs whose requests each hold the server for a moment, sent with no
    retries of their own, so any 429 fails the run."""
    data = {"url": server.url, "retry": RetryConfig.none()}
    return [AgentTask(id=f"s{i}", prompt="slow 0.3", data=data) for i in range(count)]


def test_a_429_storm_is_held_under_the_providers_limit_by_the_shared_limiter(
    pool: WorkerPool, server: ModelServer
) -> None:
    server.reset(max_concurrent=2)
    limiter = rate_limiter({"scripted": ProviderLimit(max_concurrent=2)})

    results, report = run_batch(
        storm(server, 16), chat_agent, pool=pool, concurrency=16, limiter=limiter, max_retries=0
    )

    assert report.succeeded == 16, report.errors
    assert server.rejected == 0
    assert server.peak <= 2
    # Releases are sent without waiting (a run being cancelled cannot await one): the
    # last may still be on its way to the limiter when the batch returns.
    deadline = time.monotonic() + 10
    stats = ray.get(limiter.stats.remote())["scripted"]
    while stats.in_use and time.monotonic() < deadline:
        time.sleep(0.05)
        stats = ray.get(limiter.stats.remote())["scripted"]
    assert (stats.granted, stats.peak, stats.in_use) == (16, 2, 0)
    assert stats.waited > 0
    assert len(results) == 16
    ray.kill(limiter)


def test_without_the_limiter_the_same_storm_trips_the_providers_429s(
    pool: WorkerPool, server: ModelServer
) -> None:
    """The control for the test above: the storm is real."""
    server.reset(max_concurrent=2)

    _, report = run_batch(storm(server, 16), chat_agent, pool=pool, concurrency=16, max_retries=0)

    assert server.peak > 2
    assert server.rejected > 0
    assert report.failed == server.rejected
    assert {error.kind for error in report.errors.values()} == {"rate_limited"}


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie awaiting its parent counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    return not state.stdout.strip().startswith("Z") and bool(state.stdout.strip())


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def sleepers(server: ModelServer, folder: Path, count: int) -> list[AgentTask]:
    """Runs whose one tool call starts ``sleep 300`` and writes its pid to a file."""
    return [
        AgentTask(
            id=f"sleeper{i}",
            prompt=f"bash echo $$ > {folder}/sleeper{i}.pid; exec sleep 300",
            data={"url": server.url},
        )
        for i in range(count)
    ]


def started_pids(folder: Path, count: int) -> list[int]:
    files = [folder / f"sleeper{i}.pid" for i in range(count)]
    assert wait_for(lambda: all(f.exists() and f.read_text().strip() for f in files), 120)
    return [int(f.read_text()) for f in files]


def test_a_cancelled_batch_cancels_its_running_agents_and_leaves_no_process_behind(
    ray_cluster: None, server: ModelServer, tmp_path: Path
) -> None:
    workers = WorkerPool(1, slots=4, worker_options={"num_cpus": 0.5})
    worker_pids = workers.pids()
    queued = [AgentTask(id=f"q{i}", prompt="hello", data={"url": server.url}) for i in range(3)]
    batch = Batch(
        [*sleepers(server, tmp_path, 2), *queued], bash_agent, pool=workers, concurrency=2
    )
    pids: list[int] = []

    def cancel_once_started() -> None:
        pids.extend(started_pids(tmp_path, 2))
        batch.cancel()

    canceller = threading.Thread(target=cancel_once_started)
    canceller.start()
    results = list(batch)
    canceller.join()

    assert results == []
    assert (batch.report.cancelled, batch.report.finished) == (5, 0)
    assert len(pids) == 2
    assert wait_for(lambda: not any(alive(pid) for pid in pids), 10)  # the tools' processes
    workers.close()
    assert wait_for(lambda: not any(alive(pid) for pid in worker_pids), 30)  # the workers'


def test_leaving_the_iteration_early_cancels_the_rest(
    pool: WorkerPool, server: ModelServer, tmp_path: Path
) -> None:
    quick = AgentTask(id="quick", prompt="hello", data={"url": server.url})
    batch = Batch([*sleepers(server, tmp_path, 1), quick], bash_agent, pool=pool)
    pids: list[int] = []
    for result in batch:
        assert result.task_id == "quick"
        pids = started_pids(tmp_path, 1)
        break
    assert wait_for(lambda: not any(alive(pid) for pid in pids), 10)
    assert (batch.report.succeeded, batch.report.cancelled) == (1, 1)


def test_a_worker_killed_mid_run_is_retried_and_its_result_appears_once(
    pool: WorkerPool, server: ModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "killed-once"
    # The first attempt kills its own worker process; the retry finds the marker.
    command = f"test -e {marker} || {{ touch {marker}; kill -9 $PPID; sleep 60; }}; echo fine"
    tasks = [
        AgentTask(id="victim", prompt=f"bash {command}", data={"url": server.url}),
        AgentTask(id="bystander", prompt="hello", data={"url": server.url}),
    ]

    results = list(Batch(tasks, bash_agent, pool=pool, max_retries=2))

    assert sorted(r.task_id for r in results) == ["bystander", "victim"]
    victim = next(r for r in results if r.task_id == "victim")
    assert victim.ok, victim.error
    assert victim.attempts == 2
    assert reply_text(victim.messages) == "done"
    assert marker.exists()
