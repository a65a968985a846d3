"""The package's own tables in the system database: spend ledgers, request limits, and
the workers' heartbeats. DBOS keeps runs and steps; these keep what is shared by runs.

Tables are named ``yoagent_*`` beside DBOS's own, in the same database (the same file on
SQLite). ``yoagent_meta`` holds the schema version: a database written by a newer version
of this package is refused rather than misread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from contextlib import contextmanager, suppress
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, OperationalError

from ._errors import DatabaseError

SCHEMA_VERSION = 1
"""The version of the ``yoagent_*`` tables this code reads and writes."""

_metadata = sa.MetaData()
_meta = sa.Table(
    "yoagent_meta",
    _metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(256), nullable=False),
)
_spend = sa.Table(
    "yoagent_spend",
    _metadata,
    sa.Column("ledger", sa.String(256), primary_key=True),
    sa.Column("run_id", sa.String(512), primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),
    sa.Column("usd", sa.Float, nullable=False),
    sa.Column("tokens", sa.BigInteger, nullable=False),
)
_requests = sa.Table(
    "yoagent_requests",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("provider", sa.String(256), nullable=False, index=True),
    sa.Column("at", sa.Float, nullable=False),
)
_leases = sa.Table(
    "yoagent_leases",
    _metadata,
    sa.Column("lease_id", sa.String(64), primary_key=True),
    sa.Column("provider", sa.String(256), nullable=False, index=True),
    sa.Column("expires_at", sa.Float, nullable=False),
)
_locks = sa.Table(
    "yoagent_locks",
    _metadata,
    sa.Column("name", sa.String(256), primary_key=True),
)
_workers = sa.Table(
    "yoagent_workers",
    _metadata,
    sa.Column("executor_id", sa.String(256), primary_key=True),
    sa.Column("seen_at", sa.Float, nullable=False),
)


def engine_url(database_url: str) -> str:
    """The SQLAlchemy URL of a DBOS system database URL (DBOS speaks psycopg 3)."""
    for prefix in ("postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url.removeprefix(prefix)
    return database_url


def rate_window(per_second: float) -> tuple[int, float]:
    """The rate ``per_second`` as (``n`` requests, in any window of so many seconds)."""
    count = max(1, math.floor(per_second))
    return count, count / per_second


class Store:
    """The ``yoagent_*`` tables of one database. Synchronous: call from a thread."""

    def __init__(self, database_url: str) -> None:
        self.engine = sa.create_engine(engine_url(database_url), pool_pre_ping=True)
        self.sqlite = self.engine.dialect.name == "sqlite"

    def use_wal(self) -> None:
        """Switch a SQLite file to write-ahead logging (kept in the file; before DBOS opens
        it): a commit then syncs once, and readers in other processes do not wait for
        writers. Nothing for PostgreSQL."""
        if not self.sqlite:
            return
        try:
            with self.engine.connect() as c:
                c.exec_driver_sql("PRAGMA journal_mode=WAL")
        except OperationalError as error:
            if "locked" not in str(error):
                raise  # no file there, no folder, no permission: say so
            # Another process has the file open in the old mode: it keeps working as it is.

    def prepare(self) -> None:
        """Create the tables (once), or refuse a database a newer version wrote."""
        with self._serialized("yoagent.schema") as c:
            _metadata.create_all(c)
            found = c.execute(
                sa.select(_meta.c.value).where(_meta.c.key == "schema_version")
            ).scalar()
            if found is None:
                c.execute(sa.insert(_meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
            elif int(found) > SCHEMA_VERSION:
                raise DatabaseError(
                    f"the database was written by a newer yoagent-dbos (its yoagent_* tables "
                    f"are at schema {found}; this version knows {SCHEMA_VERSION}): upgrade "
                    "yoagent-dbos, or use another database"
                )

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _serialized(self, name: str) -> Generator[sa.Connection]:
        """A transaction that holds the lock ``name`` until it commits (every worker on
        the database waits for it): SQLite's write lock, or a row lock on PostgreSQL."""
        with self.engine.begin() as c:
            if self.sqlite:
                c.execute(sa.text("BEGIN IMMEDIATE"))
            else:
                if sa.inspect(c).has_table("yoagent_locks"):
                    self._lock_row(c, name)
                else:  # the first preparation: one transaction-level advisory lock
                    c.execute(sa.text("SELECT pg_advisory_xact_lock(7305516131)"))
            yield c

    @staticmethod
    def _lock_row(c: sa.Connection, name: str) -> None:
        from sqlalchemy.dialects.postgresql import insert

        c.execute(insert(_locks).values(name=name).on_conflict_do_nothing())
        c.execute(sa.select(_locks.c.name).where(_locks.c.name == name).with_for_update())

    # --- spend ledgers ------------------------------------------------------------------------

    def record_spend(self, ledger: str, run_id: str, step: int, usd: float, tokens: int) -> None:
        """Add one reply's spend to ``ledger`` (the same run and step count once)."""
        with self.engine.begin() as c:
            exists = c.execute(
                sa.select(_spend.c.step).where(
                    _spend.c.ledger == ledger, _spend.c.run_id == run_id, _spend.c.step == step
                )
            ).first()
            if exists is None:
                with suppress(IntegrityError):  # a racing writer counted it
                    c.execute(
                        sa.insert(_spend).values(
                            ledger=ledger, run_id=run_id, step=step, usd=usd, tokens=tokens
                        )
                    )

    def spent(self, ledger: str) -> tuple[float, int]:
        """Dollars and tokens ``ledger`` holds."""
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(
                    sa.func.coalesce(sa.func.sum(_spend.c.usd), 0.0),
                    sa.func.coalesce(sa.func.sum(_spend.c.tokens), 0),
                ).where(_spend.c.ledger == ledger)
            ).one()
        return float(row[0]), int(row[1])

    # --- request limits -----------------------------------------------------------------------

    def take_request(self, provider: str, per_second: float, *, now: float | None = None) -> float:
        """Count one request of ``provider`` if the rate ``per_second`` allows it now
        (``now``: a ``time.time()``, the clock by default): 0.0, else the seconds to wait
        before asking again. The rate is kept as at most ``n`` requests in any window of
        ``n / per_second`` seconds, ``n`` its whole part (at least 1): 2/s is two in any
        second, 1.5/s one in any 2/3 s, 0.5/s one in any two seconds."""
        count, window = rate_window(per_second)
        now = time.time() if now is None else now
        with self._serialized(f"rate:{provider}") as c:
            recent = (
                c.execute(
                    sa.select(_requests.c.at)
                    .where(_requests.c.provider == provider, _requests.c.at > now - window)
                    .order_by(_requests.c.at)
                )
                .scalars()
                .all()
            )
            if len(recent) < count:
                c.execute(sa.insert(_requests).values(provider=provider, at=now))
                c.execute(
                    sa.delete(_requests).where(
                        _requests.c.provider == provider,
                        _requests.c.at < now - max(60.0, window),
                    )
                )
                return 0.0
            # The request that leaves the window first, making room for this one.
            return max(0.001, recent[len(recent) - count] + window - now)

    def take_lease(self, provider: str, lease_id: str, limit: int, ttl: float) -> bool:
        """Hold one of ``limit`` request slots of ``provider`` for ``ttl`` seconds."""
        now = time.time()
        with self._serialized(f"lease:{provider}") as c:
            held = c.execute(
                sa.select(sa.func.count())
                .select_from(_leases)
                .where(_leases.c.provider == provider, _leases.c.expires_at > now)
            ).scalar_one()
            if held >= limit:
                return False
            c.execute(sa.delete(_leases).where(_leases.c.expires_at <= now))
            c.execute(
                sa.insert(_leases).values(
                    lease_id=lease_id, provider=provider, expires_at=now + ttl
                )
            )
            return True

    def renew_lease(self, lease_id: str, ttl: float) -> None:
        with self.engine.begin() as c:
            c.execute(
                sa.update(_leases)
                .where(_leases.c.lease_id == lease_id)
                .values(expires_at=time.time() + ttl)
            )

    def release_lease(self, lease_id: str) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(_leases).where(_leases.c.lease_id == lease_id))

    # --- workers ------------------------------------------------------------------------------

    def heartbeat(self, executor_id: str) -> None:
        """Say ``executor_id`` is alive now."""
        now = time.time()
        with self.engine.begin() as c:
            updated = c.execute(
                sa.update(_workers).where(_workers.c.executor_id == executor_id).values(seen_at=now)
            ).rowcount
            if not updated:
                c.execute(sa.insert(_workers).values(executor_id=executor_id, seen_at=now))

    def claim_dead(self, executor_id: str, dead_after: float) -> list[str]:
        """The workers silent for ``dead_after`` seconds, claimed by ``executor_id`` (their
        rows go: no other worker claims them too; :meth:`unclaim` gives them back)."""
        cutoff = time.time() - dead_after
        with self._serialized("workers") as c:
            dead: list[Any] = list(
                c.execute(
                    sa.select(_workers.c.executor_id).where(
                        _workers.c.seen_at < cutoff, _workers.c.executor_id != executor_id
                    )
                ).scalars()
            )
            if dead:
                c.execute(sa.delete(_workers).where(_workers.c.executor_id.in_(dead)))
        return [str(name) for name in dead]

    def unclaim(self, executor_ids: list[str]) -> None:
        """Give back the claim on ``executor_ids`` (their recovery failed): each is silent
        again, for the next watch to claim, unless it came back meanwhile."""
        with self._serialized("workers") as c:
            back = set(
                c.execute(
                    sa.select(_workers.c.executor_id).where(
                        _workers.c.executor_id.in_(executor_ids)
                    )
                ).scalars()
            )
            for name in executor_ids:
                if name not in back:
                    c.execute(sa.insert(_workers).values(executor_id=name, seen_at=0.0))
