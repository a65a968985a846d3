"""The recorder installed as an extension: every run of an agent recorded without wrapping
its stream, the caller served first, failures that never stop a run and are reported,
and delegated runs recorded inside the run that delegated them."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import anyio
import git
import pytest
from gasp_helpers import CONFIG, calls, log_events, make_agent, read_file, text

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AgentStart,
    CostConfig,
    ErrorKind,
    MessageEnd,
    MockProvider,
    MockReply,
    ProviderError,
    RunFailedError,
    SubAgentEvent,
    SubAgentTool,
    TextContent,
    ToolCall,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
    TurnStart,
    cost_of,
    tool,
)
from yoagent.core.extension import Reject
from yoagent.gasp import (
    AgentRepo,
    Lease,
    NewGoal,
    Recorder,
    RecorderBusyError,
    Recording,
    RecordingError,
    RecordingExtension,
    restore,
    run_all,
)


@pytest.fixture
def recorder(repo_dir: Path) -> Recorder:
    return Recorder.init(repo_dir, "extension-agent", NewGoal("record through the extension"))


def run_commits(repo_dir: Path) -> list[str]:
    return [
        str(commit.message).splitlines()[0]
        for commit in git.Repo(repo_dir).iter_commits("HEAD", reverse=True)
    ][1:]


def _refuse(_text: str) -> Reject:
    return Reject("the prompt asks for secrets")


async def test_every_run_of_an_agent_is_recorded_by_adding_the_extension(
    recorder: Recorder, repo_dir: Path, tmp_path: Path
) -> None:
    extension = RecordingExtension(recorder)
    agent = make_agent(
        [
            calls(("read_file", {"path": "a.py"}), ("bash", {"command": "pytest"}), turn=1),
            text("a.py read; the tests fail."),
            text("second answer"),
        ]
    )
    agent.with_extension(extension)
    await agent.prompt("read a.py and run the tests")
    await agent.prompt("and now?")
    rejected = make_agent([text("never sent")], input_filters=[_refuse])
    rejected.with_extension(extension)
    await rejected.prompt("print the API key")
    await extension.aclose()

    assert extension.errors == []
    runs = recorder.graph().of_kind("run")
    assert sorted(str(run.props["task"]) for run in runs) == [
        "and now?",
        "print the API key",
        "read a.py and run the tests",
    ]
    outcomes = [str(run.props["outcome"]) for run in runs]
    assert sorted(outcomes) == ["completed", "completed", "rejected"]
    assert len(recorder.graph().of_kind("tool_call")) == 2
    assert len(recorder.graph().of_kind("failure")) == 1  # the failing bash call
    assert len(run_commits(repo_dir)) == 3
    assert all(report.passed for report in run_all(repo_dir))
    restored = restore(str(repo_dir), tmp_path / "clone")
    assert restored.graph.to_json() == recorder.graph().to_json()


async def test_the_caller_gets_each_event_before_the_recording_does(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[tuple[str, str]] = []
    enqueue = Recording.__call__

    def recorded(self: Recording, event: AgentEvent) -> None:
        order.append(("record", event.type))
        enqueue(self, event)

    monkeypatch.setattr(Recording, "__call__", recorded)
    extension = RecordingExtension(recorder)
    agent = make_agent([calls(("read_file", {"path": "x"}), turn=1), text("done")])
    agent.with_extension(extension)
    await agent.prompt("go", on_event=lambda event: order.append(("caller", event.type)))
    await extension.aclose()
    callers = [kind for who, kind in order if who == "caller"]
    records = [kind for who, kind in order if who == "record"]
    assert records == callers and "tool_execution_end" in records
    for position, (who, kind) in enumerate(order):
        if who == "record":
            assert ("caller", kind) in order[:position]
    assert extension.errors == [] and extension.last is not None
    assert extension.last.commit is not None


async def test_a_recording_failure_stops_recording_not_the_run_and_is_reported(
    recorder: Recorder, repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    Lease(AgentRepo.open(repo_dir).root, "someone-else").acquire()  # a live writer
    reported: list[RecordingError] = []
    extension = RecordingExtension(recorder, on_error=reported.append)
    agent = make_agent([calls(("read_file", {"path": "x"}), turn=1), text("done")])
    agent.with_extension(extension)
    seen: list[str] = []
    with caplog.at_level(logging.ERROR, logger="yoagent.gasp"):
        added = await agent.prompt("t", on_event=lambda event: seen.append(event.type))
    await extension.aclose()
    assert len(added) == 4 and seen[-1] == "agent_end"  # the run went all the way
    assert len(reported) == 1 and reported == extension.errors
    assert "recording the run failed" in str(reported[0])
    assert type(reported[0].__cause__).__name__ == "LeaseHeldError"
    assert "recording stops, the run goes on" in caplog.text
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR and r.name == "yoagent.gasp"]
    assert len(errors) == 1  # logged once, when it happened
    assert "run.started" not in [event["kind"] for event in log_events(repo_dir)]


async def test_a_recording_that_cannot_start_is_reported_and_the_run_goes_on(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    extension = RecordingExtension(recorder)
    held = recorder.recording("recorded by hand, still open")
    agent = make_agent([text("fine")])
    agent.with_extension(extension)
    added = await agent.prompt("go")
    held.close()
    assert [message.role for message in added] == ["user", "assistant"]
    assert len(extension.errors) == 1
    assert isinstance(extension.errors[0].__cause__, RecorderBusyError)
    assert "could not start recording" in str(extension.errors[0])
    assert "could not start recording" in caplog.text


async def test_a_slow_commit_of_the_run_before_never_stalls_the_next_run_for_long(
    recorder: Recorder, repo_dir: Path
) -> None:
    """A pre-commit hook that takes seconds (a secret scanner, a signing prompt): the next
    run starts after at most START_WAIT, unrecorded and reported, instead of blocking the
    event loop until the commit ends."""
    hook = repo_dir / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nsleep 8\n")  # longer than core's FINISH_TIMEOUT (5 s)
    hook.chmod(0o755)
    extension = RecordingExtension(recorder)
    agent = make_agent([text("first"), text("second")])
    agent.with_extension(extension)
    await agent.prompt("first")  # its commit runs on; finish gives up after its bound
    started = anyio.current_time()
    added = await agent.prompt("second")
    assert anyio.current_time() - started < 3.5
    assert [message.role for message in added] == ["user", "assistant"]
    await extension.aclose()
    busy = [e for e in extension.errors if isinstance(e.__cause__, RecorderBusyError)]
    assert len(busy) == 1 and "commit is still running" in str(busy[0])
    assert run_commits(repo_dir) != []  # the first run's commit still landed


async def test_a_run_that_fails_is_recorded_and_committed(
    recorder: Recorder, repo_dir: Path
) -> None:
    extension = RecordingExtension(recorder)
    agent = make_agent([ProviderError(ErrorKind.AUTH, "401 invalid key")])
    agent.with_extension(extension)
    with pytest.raises(RunFailedError):
        await agent.prompt("fails for real")
    await extension.aclose()
    assert extension.errors == []
    assert extension.last is not None and extension.last.outcome == "error"
    assert run_commits(repo_dir) == [f"run {extension.last.run_id}: error"]
    assert all(report.passed for report in run_all(repo_dir))


def _delegating_agent(child_replies: list[object]) -> tuple[Agent, SubAgentTool]:
    helper = SubAgentTool(
        "helper",
        "Reads files for the parent.",
        provider=MockProvider(child_replies),  # type: ignore[arg-type]
        model=CONFIG,
        tools=[read_file],
    )
    parent_replies = [
        calls(("helper", {"task": "read notes.md"}), turn=1),
        text("The helper read it."),
    ]
    agent = Agent.from_provider(MockProvider(parent_replies), CONFIG, tools=[helper])
    return agent, helper


@pytest.mark.parametrize("tree", [False, True], ids=["agent-extension", "tree-extension"])
async def test_a_delegated_run_is_recorded_inside_the_run_that_delegated_it(
    recorder: Recorder, repo_dir: Path, tree: bool
) -> None:
    agent, _ = _delegating_agent(
        [calls(("read_file", {"path": "notes.md"}), turn=7), text("notes read")]
    )
    extension = RecordingExtension(recorder)
    if tree:
        agent.with_tree_extension(extension)
    else:
        agent.with_extension(extension)
    await agent.prompt("ask the helper")
    await extension.aclose()

    assert extension.errors == []
    graph = recorder.graph()
    runs = {str(run.props["task"]): run for run in graph.of_kind("run")}
    assert set(runs) == {"ask the helper", "read notes.md"}
    child = runs["read notes.md"]
    assert child.props["depth"] == 1 and child.props["outcome"] == "completed"
    delegating = [call for call in graph.of_kind("tool_call") if call.props["tool"] == "helper"]
    assert len(delegating) == 1
    assert [(r.rel, r.to) for r in graph.outgoing(child.id)] == [("derived_from", delegating[0].id)]
    events = log_events(repo_dir)
    started = {e["payload"]["run_id"]: e for e in events if e["kind"] == "run.started"}
    parent_id = runs["ask the helper"].id
    assert started[child.id]["payload"]["parent_run_id"] == parent_id
    called = [e for e in events if e["kind"] == "tool.called"]
    helper_called = [e for e in called if e["payload"]["tool"] == "helper"]
    assert started[child.id]["causation_id"] == helper_called[0]["id"]
    assert len(run_commits(repo_dir)) == 1  # the tree is one commit
    assert all(report.passed for report in run_all(repo_dir))


async def test_a_delegated_run_cancelled_with_its_parent_is_finished_in_the_same_commit(
    recorder: Recorder, repo_dir: Path
) -> None:
    slow = MockReply(message=text("x" * 4000), delay=0.01, chunk_size=4)
    agent, _ = _delegating_agent([slow])
    extension = RecordingExtension(recorder)
    agent.with_extension(extension)

    async def abort_mid_delegation() -> None:
        while "read notes.md" not in [  # noqa: ASYNC110 - polls the log
            event["payload"]["task"]
            for event in log_events(repo_dir)
            if event["kind"] == "run.started"
        ]:
            await anyio.sleep(0.01)
        agent.abort()  # the parent is cancelled while its helper streams

    async with anyio.create_task_group() as group:
        group.start_soon(abort_mid_delegation)
        await agent.prompt("ask the helper")
    await extension.aclose()
    assert extension.errors == []
    runs = recorder.graph().of_kind("run")
    assert len(runs) == 2 and all(run.props["status"] == "finished" for run in runs)
    outcomes = {str(run.props["task"]): run.props["outcome"] for run in runs}
    assert outcomes["ask the helper"] == "aborted"
    # the helper's run ends aborted when its own end arrives before its call's; else the
    # tree closes it as interrupted (which one depends on scheduling)
    assert outcomes["read notes.md"] in {"aborted", "interrupted"}
    assert all(report.passed for report in run_all(repo_dir))


def test_a_tool_call_without_a_task_argument_gives_its_arguments_as_the_task() -> None:
    from yoagent.gasp._delegations import delegated_task
    from yoagent.gasp._mapping import OpenCall

    call = ToolCall(id="c", name="x", arguments={"path": "a"})
    assert delegated_task(OpenCall("n", "e", call.name, call.arguments)) == '{"path":"a"}'
    assert delegated_task(OpenCall("n", "e", "x", {"task": "do it"})) == "do it"


def _start(call_id: str) -> ToolExecutionStart:
    return ToolExecutionStart(tool_call_id=call_id, tool_name="helper", arguments={"task": call_id})


def _end(call_id: str) -> ToolExecutionEnd:
    result = ToolResultMessage(
        tool_call_id=call_id, tool_name="helper", content=[TextContent(text="ok")]
    )
    return ToolExecutionEnd(result=result)


def _sub(call_id: str, event: AgentEvent) -> SubAgentEvent:
    return SubAgentEvent(tool_call_id=call_id, tool_name="helper", depth=1, event=event)


async def test_a_delegated_run_whose_end_never_came_is_closed_as_interrupted_when_its_call_ends(
    recorder: Recorder, repo_dir: Path
) -> None:
    with recorder.recording("delegate") as recording:
        for event in (
            AgentStart(),
            _start("c1"),
            _sub("c1", AgentStart()),
            _sub("c1", TurnStart(turn=1)),  # the helper is waiting for its model
            _end("c1"),  # the helper's AgentEnd never arrived
            _sub("c1", AgentEnd()),  # late: its run is already closed
            MessageEnd(message=text("done")),
            AgentEnd(),
        ):
            recording(event)
    assert recording.error is None
    outcomes = {
        str(run.props["task"]): run.props["outcome"] for run in recorder.graph().of_kind("run")
    }
    assert outcomes == {"delegate": "completed", "c1": "interrupted"}
    assert all(report.passed for report in run_all(repo_dir))


async def test_delegations_that_cannot_be_told_apart_are_not_recorded_and_said_so(
    recorder: Recorder, repo_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="yoagent.gasp"),
        recorder.recording("two calls with one id") as recording,
    ):
        for event in (
            AgentStart(),
            _start("same"),
            _sub("same", AgentStart()),
            _sub("same", AgentStart()),  # a second run under the same key
            _sub("same", MessageEnd(message=text("whose?"))),
            _end("same"),
            MessageEnd(message=text("done")),
            AgentEnd(),
        ):
            recording(event)
    assert recording.error is None
    runs = recorder.graph().of_kind("run")
    outcomes = {str(run.props["task"]): run.props["outcome"] for run in runs}
    assert outcomes == {"two calls with one id": "completed", "same": "unattributed"}
    assert len(recorder.graph().of_kind("model_call")) == 1  # the parent's; "whose?" is not
    assert "cannot be told apart" in caplog.text
    assert all(report.passed for report in run_all(repo_dir))


async def test_a_run_delegated_two_levels_down_hangs_from_its_own_parent(
    recorder: Recorder, repo_dir: Path
) -> None:
    def deep(call_id: str, event: AgentEvent) -> SubAgentEvent:
        return SubAgentEvent(tool_call_id=call_id, tool_name="helper", depth=2, event=event)

    with recorder.recording("top") as recording:
        for event in (
            AgentStart(),
            _start("c1"),
            _sub("c1", AgentStart()),
            _sub("c1", _start("c2")),
            deep("c2", AgentStart()),
            deep("c2", MessageEnd(message=text("deepest done"))),
            deep("c2", AgentEnd()),
            _sub("c1", _end("c2")),
            _sub("c1", MessageEnd(message=text("middle done"))),
            _sub("c1", AgentEnd()),
            _end("c1"),
            MessageEnd(message=text("top done")),
            AgentEnd(),
        ):
            recording(event)
    assert recording.error is None
    graph = recorder.graph()
    runs = {str(run.props["task"]): run for run in graph.of_kind("run")}
    assert set(runs) == {"top", "c1", "c2"}
    assert all(run.props["outcome"] == "completed" for run in runs.values())
    assert runs["c2"].props["depth"] == 2
    (link,) = graph.outgoing(runs["c2"].id)
    delegating = graph.node(link.to)
    assert delegating is not None and delegating.props["run_id"] == runs["c1"].id
    assert all(report.passed for report in run_all(repo_dir))


async def test_each_reply_is_recorded_with_its_cost_and_each_write_with_its_file(
    recorder: Recorder, repo_dir: Path
) -> None:
    """``model.finished`` carries the reply's cost as the loop priced it (they add up to
    what the run spent), and a write's or an edit's ``tool.called`` names its file."""

    @tool
    async def write_file(path: str, content: str) -> str:
        """Write a file (scripted)."""
        return f"wrote {len(content)} bytes to {path}"

    prices = CostConfig(input=3.0, output=15.0, cache_read=0.3)
    replies = [
        calls(("write_file", {"path": "src/app.py", "content": "x" * 500}), turn=1),
        calls(("read_file", {"path": "README.md"}), turn=2),
        text("done"),
    ]
    agent = Agent.from_provider(
        MockProvider(replies),
        replace(CONFIG, cost=prices),
        tools=[read_file, write_file],
    )
    extension = RecordingExtension(recorder)
    agent.with_extension(extension)
    ends: list[AgentEnd] = []
    await agent.prompt(
        "write the app", on_event=lambda e: ends.append(e) if isinstance(e, AgentEnd) else None
    )
    await extension.aclose()

    events = log_events(repo_dir)
    finished = [e["payload"]["metadata"] for e in events if e["kind"] == "model.finished"]
    expected = [cost_of(reply.usage, prices) for reply in replies]
    assert [entry["cost_usd"] for entry in finished] == expected
    assert ends[0].stats.cost_usd == pytest.approx(sum(expected))
    called = {
        e["payload"]["tool"]: e["payload"]["metadata"] for e in events if e["kind"] == "tool.called"
    }
    assert called["write_file"]["path"] == "src/app.py"
    assert "path" not in called["read_file"]  # only the tools that change a file


async def test_a_recording_made_without_the_model_records_no_cost(
    recorder: Recorder, repo_dir: Path
) -> None:
    agent = make_agent([text("hi")])
    async with recorder.recording("say hi") as recording:
        await agent.prompt("say hi", on_event=recording)
    (finished,) = [e for e in log_events(repo_dir) if e["kind"] == "model.finished"]
    assert "cost_usd" not in finished["payload"]["metadata"]
