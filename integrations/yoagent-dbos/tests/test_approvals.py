"""Approvals in one process: the wait, its timeout, and the answers that are refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anyio
import pytest
from durable_fixtures import calls_then_text, defer, durable

from yoagent.core import Allow, Deny, Modify, ResumeError, tool
from yoagent.dbos import (
    DurableAgent,
    DurableRuntime,
    RunNotFoundError,
    RunNotWaitingError,
    RunStatus,
    get_run,
)

ran: list[int] = []


@tool
async def guarded(n: int) -> str:
    """Needs a person's yes."""
    ran.append(n)
    return f"guarded {n}"


@pytest.fixture
def url(tmp_path: Path) -> str:
    ran.clear()
    return f"sqlite:///{tmp_path / 'system.sqlite'}"


def guarded_agent(**options: Any) -> DurableAgent:
    """A durable agent whose model calls ``guarded`` once, each call held for approval."""
    script = calls_then_text(("guarded", {"n": 1}))
    return durable([guarded], script=script, settings=defer("guarded"), **options)


async def waiting(run_id: str) -> None:
    with anyio.fail_after(10):
        run = await get_run(run_id)
        while True:
            if await run.status() is RunStatus.WAITING:
                return
            await asyncio.sleep(0.02)  # the state is in the database: poll it


async def test_an_answer_is_taken_once_and_a_second_one_is_refused(url: str) -> None:
    agent = guarded_agent()
    with DurableRuntime(url):
        run = await agent.start("go", run_id="r1")
        await waiting("r1")
        assert (await run.pending()).call_ids == ["call_0"]  # type: ignore[union-attr]
        await run.resume({"call_0": Modify({"n": 7})})
        with pytest.raises(RunNotWaitingError, match="run 'r1' is not waiting for approval"):
            await run.resume(Deny("changed my mind"))
        result = await run.result()

    assert ran == [7]
    assert result.messages[2].text == "guarded 7"  # pyright: ignore[reportAttributeAccessIssue]
    assert result.messages[-1].text == "done"  # pyright: ignore[reportAttributeAccessIssue]


async def test_decisions_that_do_not_fit_are_refused_and_nothing_is_sent(url: str) -> None:
    agent = guarded_agent()
    with DurableRuntime(url):
        run = await agent.start("go", run_id="r1")
        await waiting("r1")
        with pytest.raises(ResumeError, match="no held tool call has the id 'nope'"):
            await run.resume({"nope": Allow()})
        with pytest.raises(ResumeError, match="no decision for the held tool calls"):
            await run.resume({})
        assert await run.status() is RunStatus.WAITING  # still waiting: nothing was sent
        await run.resume(Allow())
        await run.result()

    assert ran == [1]


async def test_an_unknown_or_finished_run_cannot_be_resumed(url: str) -> None:
    agent = durable(script=calls_then_text())
    with DurableRuntime(url):
        with pytest.raises(RunNotFoundError, match="no durable run has the id 'nope'"):
            await get_run("nope")
        with pytest.raises(RunNotFoundError):
            await agent.resume("nope", Allow())
        run = await agent.start("go", run_id="done")
        await run.result()
        with pytest.raises(RunNotWaitingError, match="it has finished"):
            await run.resume(Allow())


async def test_a_running_run_that_does_not_wait_refuses_an_answer(url: str) -> None:
    release = asyncio.Event()

    @tool
    async def slow() -> str:
        """Takes a while."""
        await release.wait()
        return "slow"

    agent = durable([slow], script=calls_then_text(("slow", {})))
    with DurableRuntime(url):
        run = await agent.start("go", run_id="r1")
        with anyio.fail_after(10):
            while True:
                if await run.status() is RunStatus.RUNNING:
                    break
                await asyncio.sleep(0.02)  # the state is in the database: poll it
        with pytest.raises(RunNotWaitingError, match="it is running, not paused for approval"):
            await run.resume(Allow())
        release.set()
        await run.result()


async def test_an_approval_nobody_answers_times_out_as_the_policy_says(url: str) -> None:
    denied = guarded_agent(approval_timeout=0.3)
    stopped = guarded_agent(approval_timeout=0.3, on_approval_timeout=None)
    with DurableRuntime(url):
        result = await denied.run("go", run_id="denied")
        left = await stopped.run("go", run_id="stopped")

    assert ran == []
    held = result.messages[2]
    assert held.is_error and "no one answered the approval in time" in held.text  # pyright: ignore[reportAttributeAccessIssue]
    assert result.messages[-1].text == "done"  # pyright: ignore[reportAttributeAccessIssue]
    assert left.pending is not None and left.pending.call_ids == ["call_0"]


async def test_two_answers_racing_for_one_wait_are_taken_once(url: str) -> None:
    agent = guarded_agent()
    with DurableRuntime(url):
        run = await agent.start("go", run_id="r1")
        await waiting("r1")
        answers = await asyncio.gather(
            run.resume({"call_0": Modify({"n": 2})}),
            run.resume({"call_0": Modify({"n": 3})}),
            return_exceptions=True,
        )
        await run.result()

    refused = [a for a in answers if isinstance(a, RunNotWaitingError)]
    assert len(refused) == 1 and "its approval (round 0) was answered already" in str(refused[0])
    assert ran in ([2], [3])  # the answer that got through, once


async def test_a_message_that_does_not_fit_is_refused_by_the_run_which_waits_again(
    url: str,
) -> None:
    """Past the sender's check (a message sent to the wait directly), the run refuses
    decisions that do not fit, loses nothing, and announces a new wait."""
    from dbos import DBOS

    from yoagent.dbos._approval import PENDING_EVENT, encode, read_announcement, topic

    agent = guarded_agent()
    with DurableRuntime(url):
        run = await agent.start("go", run_id="r1")
        await waiting("r1")
        await DBOS.send_async("r1", encode({"nope": Allow()}), topic(0))
        with anyio.fail_after(10):
            while True:
                value = await DBOS.get_event_async("r1", PENDING_EVENT, timeout_seconds=0)
                announced = read_announcement(value)
                if announced is not None and announced.round == 1:
                    break
                await asyncio.sleep(0.02)  # the state is in the database: poll it
        await run.resume(Allow())
        result = await run.result()

    assert ran == [1]
    assert result.messages[-1].text == "done"  # pyright: ignore[reportAttributeAccessIssue]
