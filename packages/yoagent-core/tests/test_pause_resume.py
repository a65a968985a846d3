"""Pause and resume: a deferred tool call stops the run with its history whole; a resume,
here or in another process, answers the held calls and goes on."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio
from core_helpers import Recorder, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEnd,
    Allow,
    ApprovalDecision,
    Defer,
    Deny,
    MockProvider,
    ModelConfig,
    Modify,
    PendingApproval,
    PendingCall,
    ResumeError,
    RunEnd,
    RunOutcome,
    RunPaused,
    StopReason,
    SubAgentTool,
    ToolCallRequest,
    ToolContext,
    ToolDecision,
    ToolExecution,
    ToolExecutionEnd,
    ToolResultMessage,
    TurnEnd,
    event_adapter,
    messages_adapter,
    tool,
)
from yoagent.core.context import context_messages
from yoagent.core.extension import (
    CANCELLED_MARKER,
    HELD_RESULT,
    ExtensionMode,
    RunContext,
    RunHooks,
)
from yoagent.core.loop import AgentContext as LoopContext
from yoagent.core.loop import AgentLoopConfig, agent_loop_resume
from yoagent.core.provider import validate_transcript


class Tools:
    """Two tools that count their runs: ``read`` (harmless) and ``delete`` (held)."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []

        @tool
        async def read(path: str) -> str:
            """Read a file."""
            self.ran.append(("read", path))
            return f"contents of {path}"

        @tool
        async def delete(path: str) -> str:
            """Delete a file."""
            self.ran.append(("delete", path))
            return f"deleted {path}"

        self.read = read
        self.delete = delete

    @property
    def all(self) -> list[Any]:
        return [self.read, self.delete]


def defer_deletes(request: ToolCallRequest) -> ToolDecision:
    if request.tool_name == "delete":
        return Defer("deleting needs the user's approval")
    return Allow()


def two_calls() -> Any:
    return tool_reply(call("read", "c1", path="a.txt"), call("delete", "c2", path="b.txt"))


def agent_for(
    provider: MockProvider,
    tools: Tools,
    *,
    middleware: list[Callable[[ToolCallRequest], ToolDecision]] | None = None,
    **options: Any,
) -> Agent:
    return Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=tools.all,
        tool_middleware=middleware if middleware is not None else [defer_deletes],
        **options,
    )


async def paused(tools: Tools, *later: Any, **options: Any) -> tuple[Agent, MockProvider]:
    """An agent whose run on two calls (c1 read, c2 delete) paused on c2."""
    provider = MockProvider([two_calls(), *later])
    agent = agent_for(provider, tools, **options)
    await agent.prompt("tidy up")
    return agent, provider


def sendable(agent: Agent) -> list[Any]:
    return context_messages(agent.messages)


def result_of(messages: Sequence[Any], call_id: str) -> ToolResultMessage:
    """The result answering ``call_id`` in ``messages``."""
    return next(
        m for m in messages if isinstance(m, ToolResultMessage) and m.tool_call_id == call_id
    )


async def aborted_once_started(
    agent: Agent, started: anyio.Event, run: Callable[[], Awaitable[Any]]
) -> None:
    """``run()`` (a run of ``agent``), aborted as soon as ``started`` is set."""
    async with anyio.create_task_group() as group:

        async def abort_when_started() -> None:
            await started.wait()
            agent.abort()

        group.start_soon(abort_when_started)
        with anyio.fail_after(10):
            await run()


# --- the pause --------------------------------------------------------------------------------


async def test_a_deferred_call_pauses_the_run_after_the_allowed_call_ran_once(
    recorder: Recorder,
) -> None:
    tools = Tools()
    provider = MockProvider([two_calls(), text_reply("never sent")])
    agent = agent_for(provider, tools)
    new = await agent.prompt("tidy up", on_event=recorder)

    assert tools.ran == [("read", "a.txt")]
    assert len(provider.requests) == 1  # the model was not asked again
    assert recorder.types[-3:] == ["turn_end", "run_paused", "agent_end"]
    paused_event = recorder.of(RunPaused)[0]
    assert paused_event.pending == agent.pending
    assert agent.pending == PendingApproval(
        calls=(
            PendingCall(
                tool_call_id="c2",
                tool_name="delete",
                arguments={"path": "b.txt"},
                reason="deleting needs the user's approval",
            ),
        )
    )
    # The history is whole: the held call is answered by a placeholder, so any API
    # accepts it as it is.
    reply, read_result, held = new[-3:]
    assert reply.stop_reason is StopReason.TOOL_USE
    assert isinstance(read_result, ToolResultMessage) and read_result.text == "contents of a.txt"
    assert isinstance(held, ToolResultMessage) and held.is_error and held.text == HELD_RESULT
    validate_transcript(sendable(agent))
    turn_end = recorder.of(TurnEnd)[-1]
    assert [r.tool_call_id for r in turn_end.tool_results] == ["c1", "c2"]
    ends = [e.result.tool_call_id for e in recorder.of(ToolExecutionEnd)]
    assert sorted(ends) == ["c1", "c2"]


async def test_a_paused_history_round_trips_through_json_with_what_it_waits_on() -> None:
    tools = Tools()
    agent, _ = await paused(tools)
    stored = messages_adapter.dump_json(agent.messages)
    loaded = messages_adapter.validate_json(stored)
    assert PendingApproval.from_messages(loaded) == agent.pending
    pending = agent.pending
    assert pending is not None
    assert PendingApproval.from_json(pending.to_json()) == pending
    assert pending.call_ids == ["c2"] and pending.get("c2") is not None
    assert pending.get("c1") is None
    event = RunPaused(pending=pending)
    assert event_adapter.validate_json(event_adapter.dump_json(event)) == event
    # A placeholder written before PendingCall had ``decided_arguments`` still reads.
    older = json.loads(stored)
    del older[-1]["details"]["pending_approval"]["decided_arguments"]
    assert PendingApproval.from_messages(messages_adapter.validate_python(older)) == pending


async def test_an_ordinary_history_has_nothing_pending() -> None:
    tools = Tools()
    agent = agent_for(
        MockProvider([tool_reply(call("read", "c1", path="x")), text_reply("ok")]), tools
    )
    assert agent.pending is None
    await agent.prompt("read x")
    assert agent.pending is None
    with pytest.raises(ResumeError, match="nothing to resume"):
        await agent.resume({"c1": Allow()})


async def test_finish_learns_the_run_paused_and_what_it_waits_on() -> None:
    outcomes: list[RunOutcome] = []

    class Hooks(RunHooks):
        async def finish(self, outcome: RunOutcome) -> None:
            outcomes.append(outcome)

    class Watch:
        name = "watch"

        def start_run(self, run: RunContext) -> RunHooks:
            return Hooks()

    tools = Tools()
    provider = MockProvider([two_calls(), text_reply("done")])
    agent = agent_for(provider, tools).with_extension(Watch())
    await agent.prompt("tidy up")
    await agent.resume({"c2": Allow()})
    assert [o.end for o in outcomes] == [RunEnd.PAUSED, RunEnd.COMPLETED]
    assert outcomes[0].pending == PendingApproval.from_messages(outcomes[0].messages)
    assert outcomes[0].pending is not None and outcomes[0].pending.call_ids == ["c2"]
    assert outcomes[1].pending is None


async def waiting_calls_paused_and_resumed() -> tuple[Agent, list[list[str]]]:
    """Three calls that wait (the middle one deferred): who ran after the pause, after the
    resume."""
    ran: list[str] = []

    @tool
    async def slow(label: str) -> str:
        """Takes a while."""
        await anyio.sleep(0.01)
        ran.append(label)
        return label

    def hold_b(request: ToolCallRequest) -> ToolDecision:
        return Defer("b waits") if request.arguments.get("label") == "b" else Allow()

    reply = tool_reply(
        call("slow", "c1", label="a"), call("slow", "c2", label="b"), call("slow", "c3", label="c")
    )
    provider = MockProvider([reply, text_reply("done")])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[slow], tool_middleware=[hold_b]
    )
    await agent.prompt("go")
    assert agent.pending is not None and agent.pending.call_ids == ["c2"]
    validate_transcript(sendable(agent))
    after_pause = sorted(ran)
    await agent.resume({"c2": Allow()})
    return agent, [after_pause, sorted(ran)]


async def test_calls_allowed_beside_a_deferred_one_run_even_when_they_wait() -> None:
    agent, ran = await waiting_calls_paused_and_resumed()
    assert ran == [["a", "c"], ["a", "b", "c"]]
    assert agent.messages[-1].text == "done"


def test_a_pause_and_a_resume_with_waiting_calls_under_trio() -> None:
    agent, ran = trio.run(waiting_calls_paused_and_resumed)
    assert ran == [["a", "c"], ["a", "b", "c"]]
    assert agent.messages[-1].text == "done"
    validate_transcript(sendable(agent))


# --- resuming ---------------------------------------------------------------------------------


async def test_resume_with_allow_runs_the_held_call_and_the_loop_goes_on(
    recorder: Recorder,
) -> None:
    tools = Tools()
    agent, provider = await paused(tools, text_reply("All tidy."))
    new = await agent.resume({"c2": Allow()}, on_event=recorder)

    assert tools.ran == [("read", "a.txt"), ("delete", "b.txt")]
    assert [m.role for m in new] == ["tool_result", "assistant"]
    assert new[0].text == "deleted b.txt" and new[-1].text == "All tidy."
    assert agent.pending is None
    # The model's second request holds the real result in the placeholder's place.
    results = [m for m in provider.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.text) for r in results] == [
        ("c1", "contents of a.txt"),
        ("c2", "deleted b.txt"),
    ]
    validate_transcript(sendable(agent))
    # The held calls run as a turn of their own (no model call), then the loop's turns.
    assert recorder.types[:3] == ["agent_start", "turn_start", "tool_execution_start"]
    first_turn = recorder.of(TurnEnd)[0]
    assert [r.text for r in first_turn.tool_results] == ["deleted b.txt"]
    assert recorder.of(AgentEnd)[0].messages == new


async def test_deny_with_a_reason_reaches_the_model_as_the_calls_error_result() -> None:
    tools = Tools()
    agent, provider = await paused(tools, text_reply("I kept b.txt."))
    await agent.resume({"c2": Deny("the user wants to keep b.txt")})

    assert tools.ran == [("read", "a.txt")]
    sent = provider.requests[-1].messages
    denial = result_of(sent, "c2")
    assert denial.is_error
    assert denial.text == "Tool call denied: the user wants to keep b.txt"
    assert agent.messages[-1].text == "I kept b.txt."


async def test_a_denial_is_what_the_model_reads_even_when_the_tool_is_gone() -> None:
    tools = Tools()
    agent, _ = await paused(tools)
    provider = MockProvider([text_reply("ok")])
    later = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[tools.read], messages=agent.messages
    )
    await later.resume({"c2": Deny("no")})
    assert result_of(provider.requests[-1].messages, "c2").text == "Tool call denied: no"


async def test_modify_runs_the_call_with_the_callers_arguments_through_the_other_hooks() -> None:
    seen: list[dict[str, Any]] = []

    def sandbox(request: ToolCallRequest) -> ToolDecision:
        seen.append(dict(request.arguments))
        if str(request.arguments.get("path", "")).startswith("/"):
            return Deny("absolute paths are outside the sandbox")
        return Allow()

    tools = Tools()
    agent, _ = await paused(tools, text_reply("done"), middleware=[defer_deletes, sandbox])
    assert seen == [{"path": "a.txt"}]  # a deferral ends the chain: sandbox never saw c2
    await agent.resume({"c2": Modify({"path": "b.txt.bak"})})
    assert tools.ran == [("read", "a.txt"), ("delete", "b.txt.bak")]
    assert seen[-1] == {"path": "b.txt.bak"}

    # The other hooks still judge the caller's arguments: a denial wins.
    tools = Tools()
    agent, _ = await paused(tools, text_reply("ok"), middleware=[defer_deletes, sandbox])
    await agent.resume({"c2": Modify({"path": "/etc/passwd"})})
    assert tools.ran == [("read", "a.txt")]
    result = result_of(agent.messages, "c2")
    assert result.text == "Tool call denied: absolute paths are outside the sandbox"


async def test_one_allow_or_deny_answers_every_held_call() -> None:
    def defer_all(request: ToolCallRequest) -> ToolDecision:
        return Defer("everything waits")

    tools = Tools()
    agent, _ = await paused(tools, text_reply("done"), middleware=[defer_all])
    assert agent.pending is not None and agent.pending.call_ids == ["c1", "c2"]
    await agent.resume(Allow())
    assert tools.ran == [("read", "a.txt"), ("delete", "b.txt")]

    tools = Tools()
    agent, _ = await paused(tools, text_reply("done"), middleware=[defer_all])
    await agent.resume(Deny("not today"))
    assert tools.ran == []
    texts = [m.text for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert texts == ["Tool call denied: not today"] * 2


async def test_resuming_twice_fails_clearly_and_runs_nothing_again() -> None:
    tools = Tools()
    agent, _ = await paused(tools, text_reply("done"))
    stored = messages_adapter.dump_json(agent.messages)
    await agent.resume({"c2": Allow()})
    with pytest.raises(ResumeError, match="resumed already"):
        await agent.resume({"c2": Allow()})
    with pytest.raises(ResumeError, match="resumed already"):
        agent.stream_resume({"c2": Allow()})
    assert tools.ran == [("read", "a.txt"), ("delete", "b.txt")]
    # The stored paused history is still what it was: the resume changed a copy.
    assert PendingApproval.from_messages(messages_adapter.validate_json(stored)) is not None


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ({"c2": Allow(), "c9": Allow()}, r"no held tool call has the id 'c9' \(held: c2\)"),
        ({"c1": Allow()}, "no held tool call has the id 'c1'"),
        ({}, r"no decision for the held tool calls \['c2'\]"),
        ({"c2": Defer("again")}, "must be Allow, Deny or Modify, not Defer"),
        ({"c2": "yes"}, "must be Allow, Deny or Modify, not str"),
        (Modify({"path": "x"}), "must map held call ids"),
        (["c2"], "must map held call ids"),
    ],
)
async def test_decisions_that_do_not_fit_the_held_calls_fail_before_anything_runs(
    decisions: Any, message: str
) -> None:
    tools = Tools()
    agent, provider = await paused(tools, text_reply("done"))
    before = agent.messages
    with pytest.raises(ResumeError, match=message):
        await agent.resume(decisions)
    with pytest.raises(ResumeError, match=message):
        agent.stream_resume(decisions)
    assert tools.ran == [("read", "a.txt")]
    assert agent.messages == before and len(provider.requests) == 1
    await agent.resume({"c2": Allow()})  # still resumable
    assert tools.ran[-1] == ("delete", "b.txt")


async def test_an_edited_placeholder_is_refused_with_the_reason() -> None:
    tools = Tools()
    agent, _ = await paused(tools, text_reply("done"))
    history = agent.messages
    held = history[-1]
    assert isinstance(held, ToolResultMessage)
    held.details = {"pending_approval": {"tool_call_id": "c2"}}  # fields missing
    agent.replace_messages(history)
    with pytest.raises(ValueError, match="held result of tool call 'c2' is unreadable"):
        _ = agent.pending
    with pytest.raises(ResumeError, match="cannot be resumed"):
        await agent.resume({"c2": Allow()})


async def test_stream_resume_delivers_the_resumed_runs_events() -> None:
    tools = Tools()
    agent, _ = await paused(tools, text_reply("done"))
    types: list[str] = []
    async with agent.stream_resume({"c2": Allow()}) as events:
        async for event in events:
            types.append(event.type)
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert "tool_execution_end" in types and agent.messages[-1].text == "done"


async def test_agent_loop_resume_resumes_a_loop_run_from_its_history() -> None:
    tools = Tools()
    agent, _ = await paused(tools)
    provider = MockProvider([text_reply("done")])
    context = LoopContext(messages=agent.messages, tools=tools.all)
    config = AgentLoopConfig(provider=provider, model=ModelConfig.mock())
    new = await agent_loop_resume({"c2": Allow()}, context, config)
    assert [m.role for m in new] == ["tool_result", "assistant"]
    assert tools.ran[-1] == ("delete", "b.txt")
    validate_transcript(context_messages(context.messages))


async def test_a_new_prompt_instead_of_a_resume_leaves_the_held_call_unrun() -> None:
    tools = Tools()
    agent, provider = await paused(tools, text_reply("Fine, leaving it."))
    await agent.prompt("never mind")
    sent = provider.requests[-1].messages
    held = result_of(sent, "c2")
    assert held.text == HELD_RESULT
    assert agent.pending is None
    assert tools.ran == [("read", "a.txt")]


# --- extensions, order, delegation, cancels ---------------------------------------------------


class Gate(RunHooks):
    """Defers deletes until resumed; then denies paths it was told to."""

    def __init__(self, log: list[str], refuse: set[str]) -> None:
        self.log = log
        self.refuse = refuse

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        self.log.append(f"{request.tool_name}:{request.arguments.get('path')}")
        if request.arguments.get("path") in self.refuse:
            return Deny("that one is protected")
        if request.tool_name == "delete":
            return Defer("deletes wait for a person")
        return Allow()


class GateExtension:
    name = "gate"
    mode = ExtensionMode.REQUIRED

    def __init__(self) -> None:
        self.log: list[str] = []
        self.refuse: set[str] = set()

    def start_run(self, run: RunContext) -> RunHooks:
        return Gate(self.log, self.refuse)


async def test_an_extensions_before_tool_defers_and_its_later_denial_still_wins() -> None:
    tools = Tools()
    gate = GateExtension()
    provider = MockProvider([two_calls(), text_reply("done")])
    agent = agent_for(provider, tools, middleware=[]).with_extension(gate)
    await agent.prompt("tidy up")
    assert agent.pending is not None
    assert agent.pending.calls[0].reason == "gate: deletes wait for a person"
    # On the resume the extension is asked again: its deferral is answered by the
    # decision, but a denial it gives now wins.
    gate.refuse.add("b.txt")
    await agent.resume({"c2": Allow()})
    assert tools.ran == [("read", "a.txt")]
    assert gate.log == ["read:a.txt", "delete:b.txt", "delete:b.txt"]
    result = [m for m in agent.messages if isinstance(m, ToolResultMessage)][-1]
    assert result.text == "Tool call denied: gate: that one is protected"


async def test_an_extension_sees_the_arguments_an_earlier_rewrite_made_when_it_defers() -> None:
    def rewrite(request: ToolCallRequest) -> ToolDecision:
        if request.tool_name == "delete":
            return Modify({"path": f"./{request.arguments['path']}"})
        return Allow()

    tools = Tools()
    agent = agent_for(
        MockProvider([two_calls(), text_reply("done")]), tools, middleware=[rewrite]
    ).with_extension(GateExtension())
    await agent.prompt("tidy up")
    assert agent.pending is not None
    assert agent.pending.calls[0].arguments == {"path": "./b.txt"}
    await agent.resume({"c2": Allow()})
    assert tools.ran[-1] == ("delete", "./b.txt")


async def test_sequential_calls_after_a_deferred_one_wait_unjudged_until_the_resume() -> None:
    judged: list[str] = []

    def log_and_defer(request: ToolCallRequest) -> ToolDecision:
        judged.append(request.tool_call_id)
        return defer_deletes(request)

    tools = Tools()
    reply = tool_reply(
        call("read", "c1", path="a"), call("delete", "c2", path="b"), call("read", "c3", path="c")
    )
    provider = MockProvider([reply, text_reply("done")])
    agent = agent_for(
        provider,
        tools,
        middleware=[log_and_defer],
        tool_execution=ToolExecution.SEQUENTIAL,
    )
    await agent.prompt("go")
    assert tools.ran == [("read", "a")]
    assert judged == ["c1", "c2"]  # c3 waits behind c2, not judged yet
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c2", "c3"]
    assert [c.queued for c in pending.calls] == [False, True]
    assert "queued behind c2" in pending.calls[1].reason
    validate_transcript(sendable(agent))

    await agent.resume({"c2": Allow()})  # c3 needs no decision: it is judged now
    assert tools.ran == [("read", "a"), ("delete", "b"), ("read", "c")]
    assert judged == ["c1", "c2", "c2", "c3"]
    assert agent.messages[-1].text == "done"


async def test_a_queued_call_deferred_on_the_resume_pauses_the_run_again() -> None:
    tools = Tools()
    reply = tool_reply(call("delete", "c1", path="a"), call("delete", "c2", path="b"))
    provider = MockProvider([reply, text_reply("done")])
    agent = agent_for(provider, tools, tool_execution=ToolExecution.SEQUENTIAL)
    await agent.prompt("go")
    assert agent.pending is not None and agent.pending.call_ids == ["c1", "c2"]

    events = Recorder()
    await agent.resume({"c1": Allow()}, on_event=events)
    assert tools.ran == [("delete", "a")]
    assert "run_paused" in events.types and len(provider.requests) == 1
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c2"] and not pending.calls[0].queued
    validate_transcript(sendable(agent))

    await agent.resume({"c2": Deny("keep b")})
    assert tools.ran == [("delete", "a")]
    assert agent.messages[-1].text == "done"
    validate_transcript(sendable(agent))


def delete_delete_read() -> Any:
    return tool_reply(
        call("delete", "c1", path="a"), call("delete", "c2", path="b"), call("read", "c3", path="c")
    )


async def test_a_callers_denial_of_a_queued_call_holds_when_it_would_wait_again() -> None:
    tools = Tools()
    provider = MockProvider([delete_delete_read(), text_reply("done")])
    agent = agent_for(provider, tools, tool_execution=ToolExecution.SEQUENTIAL)
    await agent.prompt("go")
    assert agent.pending is not None and agent.pending.call_ids == ["c1", "c2", "c3"]

    # c2 defers on this resume, so c3 cannot run yet: the denial answers it at once.
    await agent.resume({"c1": Allow(), "c3": Deny("leave c alone")})
    assert result_of(agent.messages, "c3").text == "Tool call denied: leave c alone"
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c2"]
    validate_transcript(sendable(agent))

    await agent.resume({"c2": Allow()})
    assert tools.ran == [("delete", "a"), ("delete", "b")]  # c3 never ran
    assert result_of(provider.requests[-1].messages, "c3").text == (
        "Tool call denied: leave c alone"
    )


async def test_a_callers_modify_of_a_queued_call_is_kept_when_it_waits_again() -> None:
    tools = Tools()
    provider = MockProvider([delete_delete_read(), text_reply("done")])
    agent = agent_for(provider, tools, tool_execution=ToolExecution.SEQUENTIAL)
    await agent.prompt("go")
    await agent.resume({"c1": Allow(), "c3": Modify({"path": "safe"})})
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c2", "c3"]
    queued = pending.calls[1]
    assert queued.queued and queued.decided_arguments == {"path": "safe"}
    assert [c.needs_decision for c in pending.calls] == [True, False]

    # Stored and loaded, the carried decision applies on the next resume.
    stored = messages_adapter.validate_json(messages_adapter.dump_json(agent.messages))
    later = agent_for(MockProvider([text_reply("done")]), tools, messages=stored)
    assert later.pending == pending
    await later.resume({"c2": Allow()})
    assert tools.ran == [("delete", "a"), ("delete", "b"), ("read", "safe")]
    assert later.pending is None


async def test_a_blanket_allow_keeps_a_carried_modify() -> None:
    """``resume(Allow())`` answers what still needs a decision: a call the person rewrote
    on an earlier resume runs with their arguments, never the model's."""
    tools = Tools()
    provider = MockProvider([delete_delete_read(), text_reply("done")])
    agent = agent_for(provider, tools, tool_execution=ToolExecution.SEQUENTIAL)
    await agent.prompt("go")
    await agent.resume({"c1": Allow(), "c3": Modify({"path": "safe"})})
    await agent.resume(Allow())  # c2 is the one call that needs a decision
    assert tools.ran == [("delete", "a"), ("delete", "b"), ("read", "safe")]
    assert agent.pending is None


async def test_a_deferral_in_a_reply_that_repeats_a_call_id_pauses_and_resumes() -> None:
    """A reply may repeat a call id: the repeat gets an id of its own (issue 27: one id
    for two calls showed a person one of them), so the held one is resumed alone."""
    tools = Tools()

    def defer_b(request: ToolCallRequest) -> ToolDecision:
        return Defer("b needs approval") if request.arguments.get("path") == "b" else Allow()

    reply = tool_reply(call("delete", "d", path="a"), call("delete", "d", path="b"))
    provider = MockProvider([reply, text_reply("done")], validate=False)
    agent = agent_for(provider, tools, middleware=[defer_b])
    await agent.prompt("go")
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["d_2"]
    assert tools.ran == [("delete", "a")]
    await agent.resume({"d_2": Deny("no")})
    assert agent.pending is None
    assert tools.ran == [("delete", "a")]


async def test_a_new_decision_replaces_a_carried_one() -> None:
    tools = Tools()
    provider = MockProvider([delete_delete_read(), text_reply("done")])
    agent = agent_for(provider, tools, tool_execution=ToolExecution.SEQUENTIAL)
    await agent.prompt("go")
    await agent.resume({"c1": Allow(), "c3": Modify({"path": "safe"})})
    await agent.resume({"c2": Allow(), "c3": Deny("not after all")})
    assert ("read", "safe") not in tools.ran
    assert result_of(agent.messages, "c3").text == "Tool call denied: not after all"


async def test_a_cancelled_resume_keeps_the_decisions_for_the_calls_it_never_began() -> None:
    started = anyio.Event()
    ran: list[tuple[str, str]] = []

    @tool
    async def delete(path: str) -> str:
        """Delete slowly the first time."""
        if not started.is_set():
            started.set()
            await anyio.sleep(30)
        ran.append(("delete", path))
        return f"deleted {path}"

    @tool
    async def read(path: str) -> str:
        """Read a file."""
        ran.append(("read", path))
        return path

    reply = tool_reply(
        call("delete", "c1", path="a"), call("delete", "c2", path="b"), call("read", "c3", path="c")
    )
    agent = Agent.from_provider(
        MockProvider([reply, text_reply("done")]),
        ModelConfig.mock(),
        tools=[read, delete],
        tool_middleware=[defer_deletes],
        tool_execution=ToolExecution.SEQUENTIAL,
    )
    await agent.prompt("go")
    await aborted_once_started(
        agent,
        started,
        lambda: agent.resume({"c1": Allow(), "c2": Modify({"path": "b2"}), "c3": Deny("no")}),
    )
    assert result_of(agent.messages, "c1").text == "Tool execution cancelled."
    assert result_of(agent.messages, "c3").text == "Tool call denied: no"
    pending = agent.pending
    assert pending is not None and pending.call_ids == ["c2"]
    assert pending.calls[0].decided_arguments == {"path": "b2"}
    validate_transcript(sendable(agent))

    await agent.resume({})  # c2 was decided already
    assert ran == [("delete", "b2")]
    assert agent.messages[-1].text == "done"


async def test_a_deferral_in_a_delegated_run_is_a_denial_the_child_reads() -> None:
    tools = Tools()
    child_provider = MockProvider(
        [tool_reply(call("delete", "k1", path="x")), text_reply("could not delete")]
    )
    child = SubAgentTool(
        "helper", "Deletes.", provider=child_provider, model=ModelConfig.mock(), tools=tools.all
    )
    root = Agent.from_provider(
        MockProvider([tool_reply(call("helper", "c1", task="delete x")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[child],
    ).with_tree_extension(GateExtension())
    await root.prompt("go")
    assert root.pending is None and tools.ran == []
    denial = next(
        m for m in child_provider.requests[-1].messages if isinstance(m, ToolResultMessage)
    )
    assert denial.text == (
        "Tool call denied: gate: deletes wait for a person "
        "(a delegated run cannot wait for approval)"
    )


async def test_a_cancel_during_a_resume_answers_the_running_call_cancelled() -> None:
    started = anyio.Event()

    @tool
    async def delete(path: str, ctx: ToolContext) -> str:
        """Delete slowly."""
        started.set()
        await anyio.sleep(30)
        return "deleted"

    provider = MockProvider([two_calls(), text_reply("never")])
    tools = Tools()
    agent = Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=[tools.read, delete],
        tool_middleware=[defer_deletes],
    )
    await agent.prompt("tidy up")
    await aborted_once_started(agent, started, lambda: agent.resume({"c2": Allow()}))
    result = result_of(agent.messages, "c2")
    assert result.text == "Tool execution cancelled."
    assert agent.messages[-1].text == CANCELLED_MARKER
    assert agent.pending is None  # it began: it is never run again by a second resume
    validate_transcript(sendable(agent))


async def test_a_required_extension_failing_beside_a_deferral_fails_the_run_not_pauses() -> None:
    class Breaks(RunHooks):
        async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
            if request.tool_name == "read":
                raise RuntimeError("boom")
            return Allow()

    class Broken:
        name = "broken"
        mode = ExtensionMode.REQUIRED

        def start_run(self, run: RunContext) -> RunHooks:
            return Breaks()

    tools = Tools()
    events = Recorder()
    agent = agent_for(MockProvider([two_calls()]), tools).with_extension(Broken())
    with pytest.raises(Exception, match="broken"):
        await agent.prompt("tidy up", on_event=events)
    assert "run_paused" not in events.types
    validate_transcript(sendable(agent))


# --- another process --------------------------------------------------------------------------

RESUME_SCRIPT = """
import json, sys
from pathlib import Path

import anyio

from yoagent.core import (
    Agent, Allow, AssistantMessage, Defer, MockProvider, ModelConfig, TextContent,
    ToolResultMessage, messages_adapter, tool,
)
from yoagent.core.context import context_messages
from yoagent.core.provider import validate_transcript

state, counts = Path(sys.argv[1]), Path(sys.argv[2])


@tool
async def read(path: str) -> str:
    \"\"\"Read a file.\"\"\"
    with counts.open("a") as f:
        f.write(f"read {path}\\n")
    return f"contents of {path}"


@tool
async def delete(path: str) -> str:
    \"\"\"Delete a file.\"\"\"
    with counts.open("a") as f:
        f.write(f"delete {path}\\n")
    return f"deleted {path}"


def gate(request):
    return Defer("needs approval") if request.tool_name == "delete" else Allow()


async def main() -> None:
    provider = MockProvider([AssistantMessage(content=[TextContent(text="All tidy.")])])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[read, delete], tool_middleware=[gate],
        messages=messages_adapter.validate_json(state.read_bytes()),
    )
    print(json.dumps({"pending": agent.pending.call_ids}))
    await agent.resume({"c2": Allow()})
    validate_transcript(context_messages(agent.messages))
    request = provider.requests[-1].messages
    print(json.dumps({
        "final": agent.messages[-1].text,
        "sent_results": [
            [m.tool_call_id, m.text] for m in request if isinstance(m, ToolResultMessage)
        ],
    }))
    state.write_bytes(messages_adapter.dump_json(agent.messages))


anyio.run(main)
"""


async def test_a_paused_run_resumes_in_a_new_process_and_nothing_runs_twice(
    tmp_path: Path,
) -> None:
    counts = tmp_path / "runs.txt"

    @tool
    async def read(path: str) -> str:
        """Read a file."""
        with counts.open("a") as f:
            f.write(f"read {path}\n")
        return f"contents of {path}"

    @tool
    async def delete(path: str) -> str:
        """Delete a file."""
        with counts.open("a") as f:
            f.write(f"delete {path}\n")
        return f"deleted {path}"

    provider = MockProvider([two_calls()])
    agent = Agent.from_provider(
        provider, ModelConfig.mock(), tools=[read, delete], tool_middleware=[defer_deletes]
    )
    await agent.prompt("tidy up")
    validate_transcript(sendable(agent))
    state = tmp_path / "state.json"
    state.write_bytes(messages_adapter.dump_json(agent.messages))

    script = tmp_path / "resume.py"
    script.write_text(textwrap.dedent(RESUME_SCRIPT))
    with anyio.fail_after(120):
        done = await anyio.run_process(
            [sys.executable, str(script), str(state), str(counts)], check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    first, second = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert first == {"pending": ["c2"]}
    assert second["final"] == "All tidy."
    assert second["sent_results"] == [["c1", "contents of a.txt"], ["c2", "deleted b.txt"]]
    # Counted across both processes: each call ran exactly once.
    assert counts.read_text().splitlines() == ["read a.txt", "delete b.txt"]
    resumed = messages_adapter.validate_json(state.read_bytes())
    assert PendingApproval.from_messages(resumed) is None
    # A second resume of the stored, resumed state fails clearly.
    again = Agent.from_provider(
        MockProvider(), ModelConfig.mock(), tools=[read, delete], messages=resumed
    )
    with pytest.raises(ResumeError, match="nothing to resume"):
        await again.resume({"c2": Allow()})


def test_approval_decision_names_the_three_answers() -> None:
    decisions: list[ApprovalDecision] = [Allow(), Deny("no"), Modify({"a": 1})]
    assert [d.kind for d in decisions] == ["allow", "deny", "modify"]


async def test_an_outer_cancel_during_a_resume_leaves_no_begun_call_held() -> None:
    started = anyio.Event()

    @tool
    async def delete(path: str) -> str:
        """Delete slowly."""
        started.set()
        await anyio.sleep(30)
        return "deleted"

    tools = Tools()
    agent = Agent.from_provider(
        MockProvider([two_calls()]),
        ModelConfig.mock(),
        tools=[tools.read, delete],
        tool_middleware=[defer_deletes],
    )
    await agent.prompt("tidy up")
    async with anyio.create_task_group() as group:

        async def resume() -> None:
            await agent.resume({"c2": Allow()})

        group.start_soon(resume)
        with anyio.fail_after(10):
            await started.wait()
        group.cancel_scope.cancel()
    result = result_of(agent.messages, "c2")
    assert result.text == "Tool execution cancelled."
    assert agent.messages[-1].text == CANCELLED_MARKER
    assert agent.pending is None
    validate_transcript(sendable(agent))


async def test_a_run_cancelled_beside_a_deferral_ends_cancelled_and_keeps_the_call_held() -> None:
    started = anyio.Event()

    @tool
    async def read(path: str) -> str:
        """Read slowly."""
        started.set()
        await anyio.sleep(30)
        return "never"

    tools = Tools()
    agent = Agent.from_provider(
        MockProvider([two_calls()]),
        ModelConfig.mock(),
        tools=[read, tools.delete],
        tool_middleware=[defer_deletes],
    )
    events = Recorder()
    await aborted_once_started(agent, started, lambda: agent.prompt("tidy up", on_event=events))
    assert "run_paused" not in events.types
    assert result_of(agent.messages, "c1").text == "Tool execution cancelled."
    assert agent.messages[-1].text == CANCELLED_MARKER
    assert agent.pending is not None and agent.pending.call_ids == ["c2"]
    validate_transcript(sendable(agent))
