"""The SSE reader on hostile streams: one 64 MiB event, and a gzip bomb (issue 10.6).

Before: a 64 MiB event took 15 s (the buffer was re-copied per chunk: quadratic) and
0.5 MB of gzip inflated to 3.1 GB in memory. Each case is fed in 64 KiB chunks, as a
socket delivers it; time is wall clock, memory is tracemalloc's peak over the run (the
input itself excluded). Run: ``uv run python benchmarks/sse_limits.py``.
"""

from __future__ import annotations

import gzip
import time
import tracemalloc
from collections.abc import AsyncIterator

import anyio

from yoagent.core import ProviderError
from yoagent.providers import StreamLimits
from yoagent.providers._body import bounded_body
from yoagent.providers._sse import SseReader

MIB = 1024 * 1024
CHUNK = 64 * 1024


def big_event(size: int) -> tuple[float, int, int]:
    """Seconds, peak bytes and data length for one ``size``-byte event."""
    body = b"data: " + b"x" * size + b"\n\n"
    reader = SseReader(StreamLimits(max_event_bytes=size + MIB))
    tracemalloc.start()
    started = time.perf_counter()
    length = 0
    for start in range(0, len(body), CHUNK):
        for event in reader.feed(body[start : start + CHUNK]):
            length = len(event.data)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak, length


async def bomb(inflated: int, cap: int) -> tuple[int, float, int, str]:
    """Compressed size, seconds, peak bytes and the outcome for a gzip bomb."""
    compressed = gzip.compress(b"\n" * inflated, compresslevel=9)

    async def raw() -> AsyncIterator[bytes]:
        for start in range(0, len(compressed), CHUNK):
            yield compressed[start : start + CHUNK]

    reader = SseReader()
    tracemalloc.start()
    started = time.perf_counter()
    outcome = "read to the end"
    try:
        async for piece in bounded_body(raw(), "gzip", StreamLimits(max_body_bytes=cap)):
            reader.feed(piece)
    except ProviderError as error:
        outcome = error.message
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return len(compressed), elapsed, peak, outcome


def main() -> None:
    print("| case | time | peak memory | result |")
    print("|---|---|---|---|")
    for size in (16 * MIB, 64 * MIB):
        elapsed, peak, length = big_event(size)
        print(
            f"| one {size // MIB} MiB event | {elapsed:.2f} s | {peak / MIB:.0f} MiB | "
            f"dispatched, {length // MIB} MiB of data |"
        )
    for inflated, cap in ((3 * 1024 * MIB, 256 * MIB), (3 * 1024 * MIB, 64 * MIB)):
        size, elapsed, peak, outcome = anyio.run(bomb, inflated, cap)
        print(
            f"| gzip bomb: {size / MIB:.1f} MiB inflating to {inflated // MIB} MiB, "
            f"cap {cap // MIB} MiB | {elapsed:.2f} s | {peak / MIB:.1f} MiB | {outcome} |"
        )


if __name__ == "__main__":
    main()
