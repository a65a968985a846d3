"""Approvals and resume at their edges: what a hook judging a call sees, why a queued call
waits, and what a resume refuses (pinned from a mutation run of ``yoagent.core._loop``'s
``approval``, ``held`` and ``resume``: docs/mutation.md)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from core_helpers import call, held_placeholder, text_reply, tool_reply

from yoagent.core import (
    Agent,
    Allow,
    Defer,
    Deny,
    MockProvider,
    ModelConfig,
    ResumeError,
    ToolCallRequest,
    ToolDecision,
    ToolExecution,
    ToolResultMessage,
    UserMessage,
    tool,
)


class Ran:
    """A ``delete`` and a ``read`` tool that log their runs; the first call of the one
    named ``slow`` sets ``started`` and then waits to be cancelled."""

    def __init__(self, slow: str = "") -> None:
        self.log: list[tuple[str, str]] = []
        self.started = anyio.Event()

        async def run(name: str, path: str) -> str:
            if name == slow and not self.started.is_set():
                self.started.set()
                await anyio.sleep(30)
            self.log.append((name, path))
            return f"{name} {path}"

        @tool
        async def delete(path: str) -> str:
            """Delete a file."""
            return await run("delete", path)

        @tool
        async def read(path: str) -> str:
            """Read a file."""
            return await run("read", path)

        self.tools = [delete, read]


def sequential_agent(ran: Ran, *replies: Any) -> Agent:
    return Agent.from_provider(
        MockProvider(list(replies)),
        ModelConfig.mock(),
        tools=ran.tools,
        tool_middleware=[defer_deletes],
        tool_execution=ToolExecution.SEQUENTIAL,
    )


def delete_delete_read() -> Any:
    return tool_reply(
        call("delete", "c1", path="a"), call("delete", "c2", path="b"), call("read", "c3", path="c")
    )


def result_of(agent: Agent, call_id: str) -> ToolResultMessage:
    return next(
        m for m in agent.messages if isinstance(m, ToolResultMessage) and m.tool_call_id == call_id
    )


async def cancelled_from_outside(ran: Ran, run: Callable[[], Awaitable[Any]]) -> None:
    """``run()``, its task cancelled (not aborted through the agent) once a call began."""
    async with anyio.create_task_group() as group:

        async def go() -> None:
            await run()

        group.start_soon(go)
        with anyio.fail_after(10):
            await ran.started.wait()
        group.cancel_scope.cancel()


def defer_deletes(request: ToolCallRequest) -> ToolDecision:
    return Defer("deletes wait") if request.tool_name == "delete" else Allow()


async def test_a_hook_judging_a_call_sees_the_history_and_the_runs_prompts() -> None:
    seen: list[ToolCallRequest] = []

    def watch(request: ToolCallRequest) -> ToolDecision:
        seen.append(request)
        return defer_deletes(request)

    ran = Ran()
    reply = tool_reply(call("read", "c1", path="a"), call("delete", "c2", path="b"))
    agent = Agent.from_provider(
        MockProvider([reply, text_reply("done")]),
        ModelConfig.mock(),
        tools=ran.tools,
        tool_middleware=[watch],
    )
    await agent.prompt("tidy up")
    first, second = seen
    assert (first.tool_call_id, first.tool_name, first.arguments) == ("c1", "read", {"path": "a"})
    assert (second.tool_call_id, second.tool_name) == ("c2", "delete")
    for request in seen:
        assert isinstance(request.messages, tuple)
        assert [m.role for m in request.messages] == ["user", "assistant"]
        assert request.messages[-1].content == reply.content
        assert request.run_prompts == ("tidy up",)
        assert request.user_request() == "tidy up"

    await agent.resume({"c2": Allow()})
    again = seen[-1]
    assert again.tool_call_id == "c2"
    # On the resume the hook sees the paused history (the held placeholder included).
    assert [m.role for m in again.messages] == ["user", "assistant", "tool_result", "tool_result"]
    assert again.user_request() == "tidy up"
    assert ran.log == [("read", "a"), ("delete", "b")]


async def test_a_call_queued_behind_two_deferred_ones_names_both() -> None:
    ran = Ran()
    reply = tool_reply(
        call("delete", "c1", path="a"), call("delete", "c2", path="b"), call("read", "c3", path="c")
    )
    agent = Agent.from_provider(
        MockProvider([reply, text_reply("done")]),
        ModelConfig.mock(),
        tools=ran.tools,
        tool_middleware=[defer_deletes],
        tool_execution=ToolExecution.BATCHED,
        batch_size=2,
    )
    await agent.prompt("go")
    pending = agent.pending
    assert pending is not None
    assert [(c.tool_call_id, c.queued, c.reason) for c in pending.calls] == [
        ("c1", False, "deletes wait"),
        ("c2", False, "deletes wait"),
        (
            "c3",
            True,
            "queued behind c1, c2, held for approval: the calls of this reply run in order",
        ),
    ]
    assert pending.calls[2].arguments == {"path": "c"}
    assert pending.calls[2].decided_arguments is None
    assert ran.log == []


# --- calls a batch never began ------------------------------------------------------------


async def test_a_call_after_an_aborted_one_is_answered_cancelled_not_held() -> None:
    ran = Ran(slow="read")
    reply = tool_reply(call("read", "c1", path="a"), call("read", "c2", path="b"))
    agent = sequential_agent(ran, reply, text_reply("never"))

    async def prompt_then_abort() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(agent.prompt, "go")
            with anyio.fail_after(10):
                await ran.started.wait()
            agent.abort()

    await prompt_then_abort()
    assert result_of(agent, "c2").text == "Tool execution cancelled."
    assert result_of(agent, "c2").is_error
    assert agent.pending is None
    assert ran.log == []


async def test_a_queued_call_the_caller_allowed_carries_its_own_arguments_when_it_waits_again() -> (
    None
):
    ran = Ran()
    agent = sequential_agent(ran, delete_delete_read(), text_reply("done"))
    await agent.prompt("go")
    # c2 is judged on this resume and deferred: c3, allowed, has to wait behind it again
    await agent.resume({"c1": Allow(), "c3": Allow()})
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c2", "c3"]
    queued = pending.calls[1]
    assert queued.queued and queued.decided_arguments == {"path": "c"}
    assert [c.needs_decision for c in pending.calls] == [True, False]
    await agent.resume({"c2": Deny("keep b")})
    assert ran.log == [("delete", "a"), ("read", "c")]


async def test_a_resume_cancelled_from_outside_answers_denials_and_keeps_allowed_calls_held() -> (
    None
):
    ran = Ran(slow="delete")
    agent = sequential_agent(ran, delete_delete_read(), text_reply("done"))
    await agent.prompt("go")
    await cancelled_from_outside(
        ran, lambda: agent.resume({"c1": Allow(), "c2": Deny("not b"), "c3": Allow()})
    )
    assert result_of(agent, "c1").text == "Tool execution cancelled."
    assert result_of(agent, "c2").text == "Tool call denied: not b"
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c3"]
    assert pending.calls[0].decided_arguments == {"path": "c"}
    await agent.resume({})  # c3 was allowed already
    assert ran.log == [("read", "c")]
    assert agent.messages[-1].text == "done"


# --- what a resume refuses ------------------------------------------------------------------


async def test_the_resume_errors_say_exactly_what_is_wrong() -> None:
    ran = Ran()
    agent = sequential_agent(ran, delete_delete_read(), text_reply("done"))
    with pytest.raises(ResumeError) as nothing:
        await agent.resume(Allow())
    assert str(nothing.value) == (
        "nothing to resume: no tool call of the latest reply is held for approval "
        "(the run did not pause, or it was resumed already)"
    )
    await agent.prompt("go")
    with pytest.raises(ResumeError) as not_a_mapping:
        await agent.resume(["c1"])  # type: ignore[arg-type]
    assert str(not_a_mapping.value) == (
        "decisions must map held call ids to Allow, Deny or Modify, or be one Allow or "
        "Deny for every held call; got list"
    )
    with pytest.raises(ResumeError) as unknown:
        await agent.resume({"c9": Allow()})
    assert str(unknown.value) == "no held tool call has the id 'c9' (held: c1, c2, c3)"
    assert ran.log == []


async def test_a_repeated_held_id_is_refused_saying_how_many_calls_share_it() -> None:
    reply = tool_reply(*(call("delete", "d", path=p) for p in ("a", "b", "c")))
    held = held_placeholder("d", "delete", "delete a?", path="a")
    ran = Ran()
    agent = Agent.from_provider(
        MockProvider([text_reply("done")], validate=False),
        ModelConfig.mock(),
        tools=ran.tools,
        messages=[UserMessage.from_text("go"), reply, held],
    )
    message = (
        "the history cannot be resumed: the latest reply repeats the held tool call id 'd' "
        "(3 calls), so one decision would answer more than one call (a new prompt goes on "
        "past the held calls)"
    )
    with pytest.raises(ResumeError, match=f"^{re.escape(message)}$"):
        await agent.resume(Allow())
    assert ran.log == []
