"""The timing loop both sides of ``dbos_overhead.py`` use (no dependencies: the pydantic-ai
side runs in a Python of its own)."""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

WARM_UP = 2


async def timed(run: Callable[[str], Awaitable[object]], turns: int, repeat: int) -> float:
    """Median seconds of one run of ``turns`` tool turns (``effects <turns> <fresh id>``),
    over ``repeat`` runs after :data:`WARM_UP` more."""
    samples: list[float] = []
    for index in range(repeat + WARM_UP):
        prompt = f"effects {turns} {uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        await run(prompt)
        if index >= WARM_UP:
            samples.append(time.perf_counter() - started)
    return statistics.median(samples)
