"""The durable runtime: DBOS launched on one system database, and the workers' watch.

With no configuration the system database is the SQLite file ``yoagent.sqlite`` in the
working folder; a PostgreSQL URL (given, or in ``DBOS_SYSTEM_DATABASE_URL``) shares it
between machines. DBOS is one per process: one runtime at a time.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, cast

from sqlalchemy.engine import make_url

import dbos._dbos as _dbos_module
from dbos import DBOS, DBOSConfig

from ._errors import DatabaseError, DbosError
from ._queues import declared
from ._store import Store

logger = logging.getLogger("yoagent.dbos")

DEFAULT_DATABASE_URL = "sqlite:///yoagent.sqlite"
"""The system database with no configuration: ``yoagent.sqlite`` in the working folder."""
DATABASE_URL_VARIABLE = "DBOS_SYSTEM_DATABASE_URL"

_current: DurableRuntime | None = None


def display_url(database_url: str) -> str:
    """``database_url`` fit to show: its password hidden."""
    try:
        return make_url(database_url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy reads: show its scheme only
        return database_url.split("://", 1)[0] + "://…"


class DurableRuntime:
    """DBOS on one system database, for this process's durable agents.

    Build every :class:`~yoagent.dbos.DurableAgent` first (DBOS needs their workflows
    before it starts), then :meth:`launch` — or use the runtime as a context manager.
    Launching recovers this worker's unfinished runs (from before a crash or a restart).

    ``executor_id`` names this worker; give each worker sharing a database its own
    (the default, ``"local"``, suits one worker). A worker takes runs from the queues of
    its agents only; ``worker=False`` makes a process that starts, watches and answers
    runs but takes none, not even a recovered one: the runs it started and left unfinished
    are re-enqueued when it launches again, and a worker (same agents, same application
    version) finishes them. With
    ``recover_after`` set, the
    workers on one database watch each other: one silent for that many seconds is taken
    for dead, and one of the others recovers its unfinished runs.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        name: str = "yoagent",
        executor_id: str | None = None,
        application_version: str | None = None,
        recover_after: float | None = 30.0,
        heartbeat: float = 5.0,
        polling_interval: float = 0.1,
        log_level: str = "WARNING",
        worker: bool = True,
    ) -> None:
        self.database_url = (
            database_url or os.environ.get(DATABASE_URL_VARIABLE) or DEFAULT_DATABASE_URL
        )
        if recover_after is not None and recover_after <= heartbeat:
            raise ValueError(
                f"recover_after ({recover_after}) must be longer than heartbeat ({heartbeat})"
            )
        self.name = name
        self.executor_id = executor_id
        self.application_version = application_version
        self.recover_after = recover_after
        self.heartbeat = heartbeat
        self.polling_interval = polling_interval
        self.log_level = log_level
        self.worker = worker
        self._store: Store | None = None
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None

    @property
    def store(self) -> Store:
        """The package's tables (launched runtimes only)."""
        if self._store is None:
            raise DbosError("the durable runtime is not launched: call launch() first")
        return self._store

    def launch(self) -> None:
        """Start DBOS on the system database and recover this worker's unfinished runs.
        :class:`DatabaseError` names the database (never its password) when it cannot be
        used."""
        global _current
        if _current is not None:
            raise DbosError("a durable runtime is running already: one per process")
        if self.recover_after is not None:
            _recovery()  # before anything starts: a DBOS without it is refused here
        if not self.worker:  # likewise
            _internal_queue_registry()
            _internal_queue_name()
        shown = display_url(self.database_url)
        config: DBOSConfig = {
            "name": self.name,
            "system_database_url": self.database_url,
            "log_level": self.log_level,
            "notification_listener_polling_interval_sec": self.polling_interval,
        }
        if self.executor_id is not None:
            config["executor_id"] = self.executor_id
        if self.application_version is not None:
            config["application_version"] = self.application_version
        store = Store(self.database_url)
        try:
            store.use_wal()
            DBOS(config=config)
            # Only the queues of this process's agents: a run taken from another
            # application's queue could not start here, and would stay pending for good.
            DBOS.listen_queues([queue.name for queue in declared()] if self.worker else [])
            if not self.worker:
                _take_nothing_from_the_internal_queue()
            DBOS.launch()
            store.prepare()  # after DBOS, which creates a PostgreSQL database
        except Exception as error:
            DBOS.destroy()
            _release_the_internal_queue()  # a worker launched next must take runs again
            store.close()
            if isinstance(error, DatabaseError):
                raise
            raise DatabaseError(
                f"cannot use the system database {shown}: {_reason(error)}"
            ) from None
        self._store = store
        _current = self
        try:
            # In a thread of its own: DBOS refuses its blocking calls on a running loop's.
            with ThreadPoolExecutor(1) as pool:
                pool.submit(_register_queues).result()
        except Exception as error:
            self.shutdown()
            raise DatabaseError(f"cannot register the run queues: {_reason(error)}") from None
        if self.recover_after is not None:
            self._stop.clear()
            self._watch = threading.Thread(
                target=self._watch_workers, name="yoagent-dbos-workers", daemon=True
            )
            self._watch.start()

    def shutdown(self) -> None:
        """Stop DBOS (runs still going stop with it and are recovered at the next launch,
        or by another worker)."""
        global _current
        self._stop.set()
        if self._watch is not None:
            self._watch.join()
            self._watch = None
        if _current is self:
            DBOS.destroy()
            _release_the_internal_queue()
            _release_the_loop_executor()
            _current = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def _watch_workers(self) -> None:
        """Beat this worker's heart; recover the runs of workers whose heart stopped."""
        store = self._store
        assert store is not None
        assert self.recover_after is not None
        me = DBOS.executor_id
        while not self._stop.is_set():
            try:
                store.heartbeat(me)
                self._recover_silent(store, me, self.recover_after)
            except Exception:
                logger.exception("the workers' watch failed; retrying")
            self._stop.wait(self.heartbeat)

    @staticmethod
    def _recover_silent(store: Store, me: str, recover_after: float) -> None:
        """Claim the workers silent for ``recover_after`` seconds and recover their runs;
        when the recovery fails, their claim is given back (the next watch retries)."""
        dead = store.claim_dead(me, recover_after)
        if not dead:
            return
        logger.warning("recovering the runs of silent workers %s", dead)
        try:
            _recovery()(dead)
        except BaseException:
            store.unclaim(dead)
            raise

    def __enter__(self) -> DurableRuntime:
        self.launch()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.shutdown()

    async def __aenter__(self) -> DurableRuntime:
        self.launch()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.shutdown()


def _recovery() -> Callable[[list[str]], object]:
    """DBOS's own recovery call for dead executors (what its Conductor calls: it
    re-enqueues their pending workflows, idempotently). Private to DBOS: a version
    without it is refused with :class:`DbosError`, not met at the first silent worker."""
    recover: Callable[[list[str]], object] | None = getattr(
        DBOS, "_recover_pending_workflows", None
    )
    if not callable(recover):
        raise DbosError(
            "this version of dbos has no DBOS._recover_pending_workflows, which recovering a "
            "silent worker's runs needs: install the dbos version yoagent-dbos declares, or "
            "launch with recover_after=None"
        )
    return recover


def _internal_queue_name() -> str:
    """The name of DBOS's internal queue (private to DBOS)."""
    from dbos import _utils

    name: Any = getattr(_utils, "INTERNAL_QUEUE_NAME", None)
    if not isinstance(name, str):
        raise DbosError(
            "this version of dbos does not name its internal queue, which keeping a "
            "worker=False process from taking recovered runs needs: install the dbos "
            "version yoagent-dbos declares"
        )
    return name


def _internal_queue_registry() -> Any:
    """DBOS's in-process registry of its own queues (private to DBOS, which builds it with
    its first ``DBOS(...)``): a version without it is refused with :class:`DbosError`, at
    the launch of a ``worker=False`` runtime."""
    registry: Any = getattr(_dbos_module, "_get_or_create_dbos_registry", lambda: None)()
    if not isinstance(getattr(registry, "internal_queue_map", None), dict) or not callable(
        getattr(registry, "_register_internal_queue", None)
    ):
        raise DbosError(
            "this version of dbos has no registry of internal queues, which keeping a "
            "worker=False process from taking recovered runs needs: install the dbos "
            "version yoagent-dbos declares"
        )
    return registry


def _take_nothing_from_the_internal_queue() -> None:
    """Make this process take no run from DBOS's internal queue, which every launched
    process polls whatever ``listen_queues`` says: DBOS re-enqueues a dead worker's runs
    there, and a process without their agents would take one, fail to start it, and keep
    it pending under its own executor id, out of every worker's reach. A worker
    concurrency of 0 makes each poll of this process claim nothing."""
    registry, name = _internal_queue_registry(), _internal_queue_name()
    registry.internal_queue_map.pop(name, None)
    registry._register_internal_queue(name, worker_concurrency=0)


def _release_the_internal_queue() -> None:
    """Forget the internal queue of a stopped runtime (DBOS's registry outlives it): the
    next launch in this process makes it anew, taking runs again if it is a worker."""
    registry: Any = getattr(_dbos_module, "_dbos_global_registry", None)
    queues: Any = getattr(registry, "internal_queue_map", None)
    from dbos import _utils

    name: Any = getattr(_utils, "INTERNAL_QUEUE_NAME", None)
    if isinstance(queues, dict) and isinstance(name, str):
        cast("dict[str, Any]", queues).pop(name, None)


def _release_the_loop_executor() -> None:
    """Give the running event loop a thread pool of its own again, when its default
    executor can no longer take work. DBOS makes its pool the default executor of the loop
    of its first asynchronous call and shuts that pool down with DBOS: without this,
    ``asyncio.to_thread`` — and every new connection's address lookup — fails on that loop
    for the rest of its life. Probed, not inspected: uvloop keeps the executor private."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # shut down from a thread without a loop: nothing to give back
        return
    try:
        loop.run_in_executor(None, _nothing)
    except RuntimeError:  # "cannot schedule new futures after shutdown"
        loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix="asyncio"))


def _nothing() -> None:
    return None


def _register_queues() -> None:
    """Declare the queues of this process's durable agents to DBOS."""
    for queue in declared():
        limiter: Any = None
        if queue.limit is not None:
            limiter = {"limit": queue.limit, "period": queue.period}
        DBOS.register_queue(
            queue.name,
            worker_concurrency=queue.worker_concurrency,
            global_concurrency=queue.concurrency,
            limiter=limiter,
            polling_interval_sec=queue.polling_interval,
        )


def current_runtime() -> DurableRuntime:
    """The launched runtime; :class:`DbosError` when none is."""
    if _current is None:
        raise DbosError(
            "no durable runtime is launched: start one first "
            "(with DurableRuntime(database_url) as runtime: ...)"
        )
    return _current


def _reason(error: BaseException) -> str:
    """The first line of what went wrong, without the SQL and the library's links."""
    original: Any = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()
    return text[0] if text else type(error).__name__
