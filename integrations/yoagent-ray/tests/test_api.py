"""What a batch refuses before it starts, the report's arithmetic, and the import rule."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading

import pytest
from ray_factories import chat_agent

from yoagent.core import Agent, SessionStats, Usage
from yoagent.ray import AgentTask, Batch, BatchReport, ErrorKinds, TaskError, TaskResult, _batch


def task(task_id: str) -> AgentTask:
    return AgentTask(id=task_id, prompt="hello", data={"url": "http://127.0.0.1:9/v1"})


def locked_agent(lock: object, task: AgentTask) -> Agent:
    return chat_agent(task)


def test_task_ids_must_be_unique() -> None:
    with pytest.raises(ValueError, match="task id 'a' appears twice"):
        Batch([task("a"), task("b"), task("a")], chat_agent)


def test_tasks_must_be_agent_tasks() -> None:
    with pytest.raises(TypeError, match=r"tasks\[1\] must be an AgentTask, got str"):
        Batch([task("a"), "b"], chat_agent)  # type: ignore[list-item]


def test_a_factory_that_cannot_be_pickled_is_refused_with_the_reason() -> None:
    unpicklable = functools.partial(locked_agent, threading.Lock())
    with pytest.raises(TypeError, match="the factory cannot be sent to Ray workers"):
        Batch([task("a")], unpicklable)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": float("inf")}, "timeout must be a positive number"),
        ({"max_retries": -1}, "max_retries must not be negative"),
        ({"limits": {"x": object()}, "limiter": object()}, "not both"),
    ],
)
def test_nonsensical_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Batch([task("a")], chat_agent, **options)  # type: ignore[arg-type]


def test_a_batch_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_batch.ray, "is_initialized", lambda: False)
    batch = Batch([task("a")], chat_agent)
    with pytest.raises(RuntimeError, match=r"call ray.init\(\) before the batch"):
        list(batch)
    with pytest.raises(RuntimeError, match="a batch runs once"):
        list(batch)


def test_the_report_adds_results_up() -> None:
    report = BatchReport(total=3)
    spent = SessionStats(usage=Usage(input=10, output=2), cost_usd=0.5, turns=1)
    report.add(TaskResult(task_id="a", stats=spent))
    failure = TaskError(ErrorKinds.TIMEOUT, "too slow")
    report.add(TaskResult(task_id="b", stats=spent, error=failure, attempts=3))

    assert (report.succeeded, report.failed, report.finished, report.retries) == (1, 1, 2, 2)
    assert report.errors == {"b": failure}
    assert report.stats.usage == Usage(input=20, output=4)
    assert report.stats.cost_usd == pytest.approx(1.0)
    assert report.summary().startswith("2/3 finished: 1 ok, 1 failed; 20 in / 4 out tokens, $1.0")
    assert str(failure) == "timeout: too slow"


def test_importing_yoagent_core_never_imports_ray() -> None:
    code = "import sys, yoagent.core; assert 'ray' not in sys.modules, 'ray was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_stderr_progress_line_redraws_in_place_and_ends_with_the_batch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = BatchReport(total=4, succeeded=1, failed=1, wall_seconds=3.2)
    _batch._stderr_progress(report)
    report.succeeded = 3
    _batch._stderr_progress(report)
    err = capsys.readouterr().err
    assert err == (
        "\r[###############...............] 2/4 ok 1 failed 1 3s"
        "\r[##############################] 4/4 ok 3 failed 1 3s\n"
    )


def test_a_retried_attempts_spend_is_counted_with_the_tasks_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An attempt that spent tokens and then hit a 429 was paid for: its spend stays in the
    task's stats and the report, not only the last attempt's (driver logic alone, with Ray's
    calls replaced, so no cluster is needed)."""
    batch_module = _batch

    class Ref:
        def __init__(self, value: TaskResult) -> None:
            self.value = value

    def run(factory: object, task: AgentTask, *, attempt: int, **_: object) -> Ref:
        stats = SessionStats()
        stats.record_turn(Usage(input=1000, output=100), 0.5)
        error = TaskError("rate_limited", "429", True) if attempt == 1 else None
        return Ref(TaskResult(task_id=task.id, stats=stats, error=error, attempts=attempt))

    class Method:
        remote = staticmethod(run)

    class Actor:
        run = Method()

    class Pool:
        def __init__(self) -> None:
            self.actors = [Actor()]
            self.capacity = 8

        def close(self) -> None:
            pass

    api = batch_module.ray
    monkeypatch.setattr(api, "is_initialized", lambda: True)
    monkeypatch.setattr(api, "put", lambda value: value)
    monkeypatch.setattr(api, "wait", lambda refs, **_: (refs, []))
    monkeypatch.setattr(api, "get", lambda ref, **_: ref.value)
    monkeypatch.setattr(batch_module, "retry_delay", lambda attempt: 0.0)

    batch = Batch([AgentTask(id="t", prompt="p")], _unused_factory, pool=Pool(), max_retries=2)  # type: ignore[arg-type]
    (result,) = list(batch)
    assert result.error is None and result.attempts == 2
    assert result.stats.total_usage().input == 2000
    assert batch.report.stats.total_usage().input == 2000
    assert batch.report.stats.total_cost_usd() == pytest.approx(1.0)
    assert batch.report.retries == 1


def _unused_factory(task: object) -> object:
    raise AssertionError("the workers are replaced: no agent is built")
