"""Batches on a real local Ray cluster against the scripted model server."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from model_server import COMPLETION_TOKENS, PROMPT_TOKENS, ModelServer
from ray_factories import bash_agent, chat_agent, raising_agent
from yoagent.core import AssistantMessage, RetryConfig, SessionStats, TextContent, Usage
from yoagent.ray import (
    AgentTask,
    Batch,
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
    tasks = [AgentTask(id=f"t{i}", prompt=f"hello {i}", data={"url": server.url}) for i in range(200)]

    results, report = run_batch(tasks, chat_agent, pool=pool, concurrency=16)

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
