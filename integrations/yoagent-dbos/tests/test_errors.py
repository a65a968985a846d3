"""Bad input gets a clear error naming what was wrong: databases, event loops."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
import trio
from durable_fixtures import calls_then_text, durable

from yoagent.dbos import DatabaseError, DbosError, DurableRuntime, UnsupportedLoopError, get_run


def test_an_unreachable_database_is_named_without_its_password() -> None:
    url = "postgresql://someone:s3cret@127.0.0.1:1/nowhere"  # nothing listens on port 1
    started = time.monotonic()
    with pytest.raises(DatabaseError) as caught:
        DurableRuntime(url).launch()
    message = str(caught.value)
    assert message.startswith(
        "cannot use the system database postgresql://someone:***@127.0.0.1:1/nowhere: "
    )
    assert "s3cret" not in message
    assert time.monotonic() - started < 30


def test_a_sqlite_file_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing-folder' / 'system.sqlite'}"
    with pytest.raises(DatabaseError, match=r"missing-folder/system\.sqlite: .*unable to open"):
        DurableRuntime(url).launch()


def test_a_database_written_by_a_newer_version_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    with DurableRuntime(url):
        pass
    with sqlite3.connect(tmp_path / "system.sqlite") as db:
        db.execute("UPDATE yoagent_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(
        DatabaseError, match=r"newer yoagent-dbos .*schema 99; this version knows 1"
    ):
        DurableRuntime(url).launch()
    with DurableRuntime(f"sqlite:///{tmp_path / 'other.sqlite'}"):  # nothing was left running
        pass


def test_a_durable_run_under_trio_is_refused_with_the_reason(tmp_path: Path) -> None:
    agent = durable(script=calls_then_text())

    async def main() -> None:
        with pytest.raises(UnsupportedLoopError, match="needs asyncio"):
            await agent.start("go")
        with pytest.raises(UnsupportedLoopError, match="needs asyncio"):
            await get_run("any")

    with DurableRuntime(f"sqlite:///{tmp_path / 'system.sqlite'}"):
        trio.run(main)


def test_a_dbos_that_cannot_keep_a_non_worker_from_taking_runs_is_refused_at_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dbos._dbos as dbos_module

    monkeypatch.setattr(dbos_module, "_get_or_create_dbos_registry", lambda: object())
    url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    with pytest.raises(DbosError, match="worker=False"):
        DurableRuntime(url, worker=False, recover_after=None).launch()
    assert not (tmp_path / "system.sqlite").exists()  # refused before DBOS started


def test_a_non_worker_launch_that_fails_half_way_leaves_the_next_worker_taking_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dbos._dbos as dbos_module
    from dbos._utils import INTERNAL_QUEUE_NAME

    from yoagent.dbos import _store

    def broken(self: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    with monkeypatch.context() as patched:
        patched.setattr(_store.Store, "prepare", broken)
        with pytest.raises(DatabaseError, match="disk I/O error"):
            DurableRuntime(url, worker=False, recover_after=None).launch()
    with DurableRuntime(url, recover_after=None):
        registry = dbos_module._get_or_create_dbos_registry()  # pyright: ignore[reportPrivateUsage]
        internal = registry.internal_queue_map[INTERNAL_QUEUE_NAME]
        assert internal._worker_concurrency is None  # pyright: ignore[reportPrivateUsage]
