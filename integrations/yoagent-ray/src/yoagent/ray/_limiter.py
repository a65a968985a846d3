"""A cluster-wide limit on model requests per provider: one Ray actor every worker asks.

Each model request (not each task: a run makes several) takes a lease from the actor
before it goes out and returns it when the reply is complete, so however many workers
and nodes a batch spreads over, a provider sees at most ``max_concurrent`` requests at
once and no more than ``requests_per_second`` new ones. Leases are named by the attempt
that took them, so the driver frees everything an attempt held when it ends, even when
its worker died holding some.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yoagent.ray._ray_api as _ray_api
from yoagent.core import AssistantMessage
from yoagent.core.provider import DeltaSink, StreamConfig, StreamProvider


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderLimit:
    """How hard a batch may press one provider: at most ``max_concurrent`` requests in
    flight and ``requests_per_second`` new requests, across the whole cluster. ``None``
    leaves that side unbounded."""

    max_concurrent: int | None = None
    requests_per_second: float | None = None

    def __post_init__(self) -> None:
        if self.max_concurrent is not None and self.max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, got {self.max_concurrent}")
        rate = self.requests_per_second
        if rate is not None and not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"requests_per_second must be a positive number, got {rate}")


@dataclass(frozen=True, slots=True)
class LimiterStats:
    """What one provider's limit has seen: leases granted, how many had to wait, the
    most held at once, and how many are held now."""

    granted: int
    waited: int
    peak: int
    in_use: int


@dataclass(slots=True)
class _Provider:
    limit: ProviderLimit
    held: set[str] = field(default_factory=set[str])
    waiting: deque[tuple[str, asyncio.Future[None]]] = field(
        default_factory=deque[tuple[str, "asyncio.Future[None]"]]
    )
    next_start: float = 0.0
    granted: int = 0
    waited: int = 0
    peak: int = 0

    def has_room(self) -> bool:
        cap = self.limit.max_concurrent
        return cap is None or len(self.held) < cap

    def grant(self, lease: str) -> None:
        self.held.add(lease)
        self.granted += 1
        self.peak = max(self.peak, len(self.held))

    def wake(self) -> None:
        while self.waiting and self.has_room():
            lease, waiter = self.waiting.popleft()
            if not waiter.done():
                self.grant(lease)
                waiter.set_result(None)


class RateLimiterActor:
    """The actor's code (run it through :func:`rate_limiter`). Single-threaded asyncio:
    every method runs on the actor's one event loop, so no locks are needed."""

    def __init__(self, limits: Mapping[str, ProviderLimit]) -> None:
        self._providers = {name: _Provider(limit) for name, limit in limits.items()}
        self._released_early: set[str] = set()

    async def acquire(self, provider: str, lease: str) -> None:
        """Return once ``lease`` may send a request to ``provider`` (at once for a
        provider without a limit)."""
        state = self._providers.get(provider)
        if state is None:
            return
        if lease in self._released_early:  # its holder gave up before the call arrived
            self._released_early.discard(lease)
            return
        if state.has_room() and not state.waiting:
            state.grant(lease)
        else:
            state.waited += 1
            waiter = asyncio.get_running_loop().create_future()
            state.waiting.append((lease, waiter))
            await waiter
        rate = state.limit.requests_per_second
        if rate is not None:
            now = time.monotonic()
            start = max(now, state.next_start)
            state.next_start = start + 1.0 / rate
            if start > now:
                await asyncio.sleep(start - now)

    def release(self, provider: str, lease: str) -> None:
        """Give ``lease`` back (or withdraw it while it still waits)."""
        state = self._providers.get(provider)
        if state is None:
            return
        if lease in state.held:
            state.held.discard(lease)
        elif not self._withdraw(state, lease):
            self._released_early.add(lease)
        state.wake()

    def release_holder(self, holder: str) -> int:
        """Free every lease named ``holder:...`` (an attempt that ended, or died, holding
        or awaiting some); returns how many there were."""
        prefix = f"{holder}:"
        freed = 0
        for state in self._providers.values():
            mine = {lease for lease in state.held if lease.startswith(prefix)}
            state.held -= mine
            freed += len(mine)
            for lease, _ in list(state.waiting):
                if lease.startswith(prefix) and self._withdraw(state, lease):
                    freed += 1
            state.wake()
        self._released_early = {x for x in self._released_early if not x.startswith(prefix)}
        return freed

    def stats(self) -> dict[str, LimiterStats]:
        """Per provider: leases granted, waits, peak and current use."""
        return {
            name: LimiterStats(state.granted, state.waited, state.peak, len(state.held))
            for name, state in self._providers.items()
        }

    @staticmethod
    def _withdraw(state: _Provider, lease: str) -> bool:
        for entry in state.waiting:
            if entry[0] == lease:
                state.waiting.remove(entry)
                entry[1].cancel()
                return True
        return False


_RemoteLimiter = _ray_api.remote_class(RateLimiterActor, num_cpus=0, max_restarts=-1)


def rate_limiter(
    limits: Mapping[str, ProviderLimit], *, name: str | None = None, namespace: str | None = None
) -> Any:
    """Start the limiter actor for ``limits`` (keyed by ``ModelConfig.provider``, e.g.
    ``"openai"``) and return its handle. With ``name``, an actor of that name already
    running is reused, so several batches (or drivers) share one limit."""
    options: dict[str, Any] = {}
    if name is not None:
        options = {"name": name, "namespace": namespace, "get_if_exists": True}
    return _RemoteLimiter.options(**options).remote(dict(limits))


class LimitedProvider:
    """A provider whose every request first takes a lease from the limiter actor."""

    def __init__(self, inner: StreamProvider, limiter: Any, provider: str, holder: str) -> None:
        self.inner = inner
        self._limiter = limiter
        self._provider = provider
        self._holder = holder
        self._numbers = itertools.count()

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Stream through the wrapped provider once a lease is granted."""
        lease = f"{self._holder}:{next(self._numbers)}"
        try:
            await self._limiter.acquire.remote(self._provider, lease)
            return await self.inner.stream(config, sink)
        finally:
            # Fire and forget: awaiting here would fail when the run is being cancelled.
            self._limiter.release.remote(self._provider, lease)

    async def aclose(self) -> None:
        """Close the wrapped provider's resources, if it has any."""
        close: Callable[[], Awaitable[object]] | None = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
