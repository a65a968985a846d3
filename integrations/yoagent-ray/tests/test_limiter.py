"""The limiter's bookkeeping, driven directly (the actor's code is plain asyncio)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any

import pytest

from yoagent.ray import LimiterStats, ProviderLimit, RateLimiterActor


def limiter(**limits: ProviderLimit) -> RateLimiterActor:
    return RateLimiterActor(limits)


async def started(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """``coro`` running in a task of its own, given a moment to get going."""
    task = asyncio.ensure_future(coro)
    await asyncio.sleep(0.01)
    return task


async def test_requests_beyond_the_limit_wait_in_order_until_a_lease_is_released() -> None:
    actor = limiter(openai=ProviderLimit(max_concurrent=2))
    await actor.acquire("openai", "a:0")
    await actor.acquire("openai", "b:0")
    third = await started(actor.acquire("openai", "c:0"))
    fourth = await started(actor.acquire("openai", "d:0"))
    assert not third.done() and not fourth.done()

    actor.release("openai", "a:0")
    await asyncio.sleep(0.01)

    assert third.done() and not fourth.done()
    assert actor.stats()["openai"].in_use == 2
    actor.release("openai", "b:0")
    await asyncio.sleep(0.01)
    assert fourth.done()
    assert actor.stats()["openai"] == LimiterStats(granted=4, waited=2, peak=2, in_use=2)


async def test_a_provider_without_a_limit_is_never_held() -> None:
    actor = limiter(openai=ProviderLimit(max_concurrent=1))
    for number in range(5):
        await asyncio.wait_for(actor.acquire("anthropic", f"x:{number}"), 1)
    assert "anthropic" not in actor.stats()


async def test_a_waiter_that_gives_up_leaves_the_queue_without_taking_a_slot() -> None:
    actor = limiter(openai=ProviderLimit(max_concurrent=1))
    await actor.acquire("openai", "a:0")
    gone = await started(actor.acquire("openai", "b:0"))
    waiting = await started(actor.acquire("openai", "c:0"))

    actor.release("openai", "b:0")  # b's run was cancelled while it waited
    actor.release("openai", "a:0")
    await asyncio.sleep(0.01)

    assert gone.cancelled()
    assert waiting.done() and not waiting.cancelled()
    assert actor.stats()["openai"].in_use == 1


async def test_a_release_that_arrives_before_its_acquire_frees_it_at_once() -> None:
    actor = limiter(openai=ProviderLimit(max_concurrent=1))
    actor.release("openai", "a:0")
    await asyncio.wait_for(actor.acquire("openai", "a:0"), 1)
    assert actor.stats()["openai"].in_use == 0


async def test_releasing_a_holder_frees_all_its_leases_held_or_awaited() -> None:
    actor = limiter(openai=ProviderLimit(max_concurrent=2), groq=ProviderLimit(max_concurrent=1))
    await actor.acquire("openai", "dead/t1/1:0")
    await actor.acquire("groq", "dead/t1/1:1")
    await actor.acquire("openai", "live/t2/1:0")
    stuck = await started(actor.acquire("openai", "dead/t1/1:2"))
    other = await started(actor.acquire("openai", "live/t3/1:0"))

    assert actor.release_holder("dead/t1/1") == 3
    await asyncio.sleep(0.01)

    assert stuck.cancelled()
    assert other.done() and not other.cancelled()
    assert actor.stats()["openai"].in_use == 2
    assert actor.stats()["groq"].in_use == 0
    assert actor.release_holder("dead/t1/10") == 0  # a prefix of the name is not the holder


async def test_requests_per_second_spaces_the_starts() -> None:
    actor = limiter(openai=ProviderLimit(requests_per_second=20))
    began = time.monotonic()
    for number in range(5):
        await actor.acquire("openai", f"a:{number}")
        actor.release("openai", f"a:{number}")
    assert time.monotonic() - began >= 4 / 20 * 0.9


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ({"max_concurrent": 0}, "max_concurrent must be at least 1"),
        ({"requests_per_second": 0.0}, "requests_per_second must be a positive number"),
        ({"requests_per_second": float("nan")}, "requests_per_second must be a positive"),
    ],
)
def test_a_nonsensical_limit_is_refused(limit: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProviderLimit(**limit)
