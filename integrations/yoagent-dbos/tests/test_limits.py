"""Limits kept in the database: request rates per provider, budgets across runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from durable_fixtures import MODEL, calls_then_text, durable

from yoagent.core import CostConfig, tool
from yoagent.core.extension import AGENT_STOPPED_PREFIX
from yoagent.dbos import DbosError, DurableRuntime, ProviderLimit, RunQueue, SharedBudget
from yoagent.dbos._store import Store


@tool
async def noop(n: int) -> str:
    """Does nothing."""
    return str(n)


def test_a_provider_limit_needs_a_provider_and_a_bound() -> None:
    with pytest.raises(ValueError, match="needs max_concurrent or requests_per_second"):
        ProviderLimit("mock")
    with pytest.raises(ValueError, match="max_concurrent must be >= 1"):
        ProviderLimit("mock", max_concurrent=0)
    with pytest.raises(ValueError, match="requests_per_second must be > 0"):
        ProviderLimit("mock", requests_per_second=float("nan"))
    with pytest.raises(ValueError, match="must name a provider"):
        ProviderLimit("", max_concurrent=1)


async def test_requests_per_second_spaces_the_requests(tmp_path: Path) -> None:
    limit = ProviderLimit("mock", requests_per_second=2)
    agent = durable([noop], script=calls_then_text(("noop", {"n": 1})), limits=[limit])
    with DurableRuntime(f"sqlite:///{tmp_path / 'system.sqlite'}"):
        started = time.monotonic()
        for run_id in ("a", "b"):  # four requests: the third waits for the second's second
            await agent.run("go", run_id=run_id)
        elapsed = time.monotonic() - started
    assert elapsed >= 0.9


def admitted(store: Store, per_second: float, times: list[float]) -> list[float]:
    """The waits ``take_request`` answers at each of ``times`` (0.0: admitted)."""
    return [round(store.take_request("p", per_second, now=at), 3) for at in times]


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    with DurableRuntime(database_url) as runtime:  # creates a PostgreSQL database
        yield runtime.store


def test_half_a_request_per_second_is_one_in_any_two_seconds(store: Store) -> None:
    # The second waits for the first to leave its two seconds.
    waits = admitted(store, 0.5, [100.0, 100.5, 101.9, 102.0, 102.1])
    assert waits == [0.0, 1.5, 0.1, 0.0, 1.9]


def test_one_and_a_half_per_second_is_three_in_two_seconds(store: Store) -> None:
    times = [100.0 + i / 30 for i in range(61)]  # every 1/30 s for two seconds
    waits = admitted(store, 1.5, times)
    starts = [at for at, wait in zip(times, waits, strict=True) if wait == 0.0]
    assert len(starts) == 3  # not four: 1.5/s is not 2/s
    assert starts[0] == 100.0 and starts[1] >= 100.0 + 2 / 3 - 1e-9


def test_two_per_second_is_two_in_any_second(store: Store) -> None:
    assert admitted(store, 2, [100.0, 100.1, 100.2, 101.05]) == [0.0, 0.0, 0.8, 0.0]


async def test_a_shared_budget_stops_later_runs_once_spent(tmp_path: Path) -> None:
    priced = replace(MODEL, cost=CostConfig(input=1000.0, output=1000.0))
    budget = SharedBudget("team", limit_usd=0.02)  # one reply costs 10 * 1000e-6 + 5 * 1000e-6
    agent = durable(script=calls_then_text(text="spent"), model=priced, budgets=[budget])
    with DurableRuntime(f"sqlite:///{tmp_path / 'system.sqlite'}"):
        first = await agent.run("one", run_id="one")
        second = await agent.run("two", run_id="two")
        third = await agent.run("three", run_id="three")

    assert first.messages[-1].text == "spent"  # pyright: ignore[reportAttributeAccessIssue]
    assert second.messages[-1].text == "spent"  # pyright: ignore[reportAttributeAccessIssue]
    stopped = third.messages[-1]
    assert stopped.role == "user"
    assert stopped.text.startswith(AGENT_STOPPED_PREFIX)  # pyright: ignore[reportAttributeAccessIssue]
    assert "budget reached ($0.0300 of $0.02 spent across runs, ledger 'team')" in stopped.text  # pyright: ignore[reportAttributeAccessIssue]


def test_a_run_queue_refuses_bounds_below_one() -> None:
    with pytest.raises(ValueError, match=r"RunQueue\.worker_concurrency must be >= 1, got 0"):
        RunQueue("q", worker_concurrency=0)
    with pytest.raises(ValueError, match="needs a name"):
        RunQueue("")


async def test_runs_go_only_to_queues_the_runtime_knows(tmp_path: Path) -> None:
    agent = durable(script=calls_then_text())
    with DurableRuntime(f"sqlite:///{tmp_path / 'system.sqlite'}"):
        with pytest.raises(DbosError, match="has no queue"):
            await agent.enqueue("go")
        with pytest.raises(DbosError, match="run queue 'stray' is unknown to the runtime"):
            await agent.enqueue("go", queue=RunQueue("stray"))
