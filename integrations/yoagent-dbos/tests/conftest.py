"""Fixtures: the scripted model server, a SQLite database per test, and one real
PostgreSQL server for the session (Debian's ``postgresql`` binaries, started here on a
free loopback port; as the ``postgres`` user when the tests run as root). Without the
binaries the PostgreSQL tests skip, saying so (and fail where ``YOAGENT_DBOS_REQUIRE_POSTGRES``
is set, as ``.ci/run`` does)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbos_helpers import Postgres, postgres_bin, postgres_server
from scripted_server import ModelServer


@pytest.fixture(scope="session", autouse=True)
def dbos_console_on_this_sessions_stderr() -> None:
    """DBOS's console handler keeps the stream it was made with: the stderr one pytest
    session captured. A second session in the same process (mutmut runs several) would find
    it closed, and ``DBOS()`` fails flushing it: point it at this session's."""
    for handler in logging.getLogger("dbos").handlers:
        if handler.name == "__dbos_console_log_handler__" and isinstance(
            handler, logging.StreamHandler
        ):
            handler.stream = sys.stderr  # not setStream, which flushes the closed one


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    if postgres_bin() is None:
        reason = (
            "PostgreSQL is not installed (no initdb/pg_ctl on PATH or in "
            "/usr/lib/postgresql/*/bin): apt-get install postgresql"
        )
        if os.environ.get("YOAGENT_DBOS_REQUIRE_POSTGRES"):  # .ci/run installs it
            pytest.fail(reason)
        pytest.skip(reason)
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The system database of one test: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'system.sqlite'}"
    postgres: Postgres = request.getfixturevalue("postgres")
    return postgres.database()
