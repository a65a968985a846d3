"""Running code beside a workflow without its being recorded, and the event-loop check."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ._errors import UnsupportedLoopError

T = TypeVar("T")


async def outside_workflow(work: Callable[[], Awaitable[T]]) -> T:
    """``work()`` in a task of its own with no DBOS context: what it reads is not recorded
    as a step, and a workflow it starts is a top-level one (not a child numbered by the
    order in which parallel calls happened to reach DBOS)."""

    async def run() -> T:
        return await work()

    return await asyncio.create_task(run(), context=contextvars.Context())


def require_asyncio(what: str) -> None:
    """Raise :class:`UnsupportedLoopError` unless called under asyncio (DBOS runs its
    workflows as asyncio tasks and waits with asyncio's thread pool)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise UnsupportedLoopError(
            f"{what} needs asyncio: DBOS runs workflows as asyncio tasks, and no asyncio "
            "event loop runs here (trio?). Run the durable part of the program with "
            "asyncio: asyncio.run(main()) or anyio.run(main, backend='asyncio')"
        ) from None
