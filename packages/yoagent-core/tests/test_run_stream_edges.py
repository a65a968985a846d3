"""RunStream at its edges: misuse refused in these words, the run's task named, a run
that ended never aborted on the way out, and events left unread not handed out after the
block."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import anyio
import pytest

from yoagent.core._run_stream import RunStream
from yoagent.core._types.events import AgentEvent, AgentStart, TurnStart
from yoagent.core._types.messages import AgentMessage


def stream_of(*events: AgentEvent, names: list[str] | None = None) -> tuple[RunStream, list[str]]:
    aborts: list[str] = []

    async def produce(emit: Callable[[AgentEvent], None]) -> list[AgentMessage]:
        if names is not None:
            names.append(anyio.get_current_task().name or "")
        for event in events:
            emit(event)
        return []

    return RunStream(produce, lambda: aborts.append("abort")), aborts


async def test_iterating_without_entering_is_refused_in_these_words() -> None:
    stream, _ = stream_of()
    with pytest.raises(RuntimeError) as caught:
        await stream.__anext__()
    assert str(caught.value) == "iterate the stream inside `async with` (or with `async for`)"


async def test_entering_twice_is_refused_in_these_words() -> None:
    stream, _ = stream_of()
    async with stream:
        with pytest.raises(RuntimeError) as caught:
            await stream.__aenter__()
    assert str(caught.value) == "this stream was already started; call stream() again"


async def test_the_run_goes_on_in_a_task_named_for_it() -> None:
    names: list[str] = []
    stream, _ = stream_of(names=names)
    async with stream as events:
        _ = [event async for event in events]
    assert names == ["yoagent run"]


async def test_a_run_read_to_its_end_is_not_aborted_on_the_way_out() -> None:
    stream, aborts = stream_of(AgentStart(), TurnStart(turn=1))
    async with stream as events:
        seen = [event async for event in events]
    assert seen == [AgentStart(), TurnStart(turn=1)]
    assert aborts == []


async def test_events_left_unread_are_not_handed_out_after_the_block() -> None:
    stream, _ = stream_of(AgentStart(), TurnStart(turn=1), TurnStart(turn=2))
    async with stream as events:
        assert await events.__anext__() == AgentStart()
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


async def test_a_native_cancel_of_the_body_cancels_the_run_with_it() -> None:
    """One ``Task.cancel()`` (asyncio's own, delivered once) while the body waits: the
    cancellation is handed to the run's task group, which cancels a run that ignores
    ``abort``, and the block ends cancelled at once."""
    started = anyio.Event()

    async def produce(emit: Callable[[AgentEvent], None]) -> list[AgentMessage]:
        started.set()
        await anyio.sleep_forever()
        return []

    async def consume() -> None:
        async with RunStream(produce, lambda: None):
            await anyio.sleep_forever()

    task = asyncio.get_running_loop().create_task(consume())
    await started.wait()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2)
    if not done:  # the run was left running: stop it for good before failing
        task.cancel()
        await asyncio.wait({task}, timeout=2)
    assert task in done
    assert task.cancelled()
