"""A silent worker's claim: given back when its recovery fails (the runs are never
orphaned), and DBOS's private recovery call checked at launch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS

from yoagent.dbos import DbosError, DurableRuntime


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'system.sqlite'}"


def test_a_failed_recovery_gives_the_claim_back(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    recovered: list[list[str]] = []

    def failing(executor_ids: list[str]) -> Any:
        raise RuntimeError("the database went away")

    def recording(executor_ids: list[str]) -> Any:
        recovered.append(list(executor_ids))
        return []

    with DurableRuntime(url, recover_after=None) as runtime:  # no watch thread: driven here
        store = runtime.store
        store.heartbeat("ghost")
        monkeypatch.setattr(DBOS, "_recover_pending_workflows", failing)
        with pytest.raises(RuntimeError, match="went away"):
            DurableRuntime._recover_silent(store, "me", 0.0)  # pyright: ignore[reportPrivateUsage]
        monkeypatch.setattr(DBOS, "_recover_pending_workflows", recording)
        DurableRuntime._recover_silent(store, "me", 0.0)  # pyright: ignore[reportPrivateUsage]
        assert recovered == [["ghost"]]  # claimed again, and recovered this time
        assert store.claim_dead("me", 0.0) == []  # once


def test_a_worker_back_before_the_claim_is_given_back_keeps_its_heartbeat(url: str) -> None:
    with DurableRuntime(url, recover_after=None) as runtime:
        store = runtime.store
        store.heartbeat("ghost")
        assert store.claim_dead("me", 0.0) == ["ghost"]
        store.heartbeat("ghost")  # it came back
        store.unclaim(["ghost"])
        assert store.claim_dead("me", 60.0) == []  # alive: its fresh heartbeat kept


def test_a_dbos_without_the_recovery_call_is_refused_at_launch(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(DBOS, "_recover_pending_workflows")
    with pytest.raises(DbosError, match=r"no DBOS\._recover_pending_workflows"):
        DurableRuntime(url).launch()
    with DurableRuntime(url, recover_after=None):  # no watch: not needed
        pass
