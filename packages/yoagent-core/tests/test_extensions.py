"""Extensions: every hook point, both modes, cancels, tree extensions, and hook order."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest
from core_helpers import Recorder, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AgentStart,
    AgentTool,
    Allow,
    AssistantMessage,
    Deny,
    ErrorKind,
    InputRejected,
    MockProvider,
    MockReply,
    ModelConfig,
    Modify,
    ProgressMessage,
    RunEnd,
    RunFailedError,
    RunOutcome,
    StopReason,
    SubAgentTool,
    ToolCallRequest,
    ToolContext,
    ToolDecision,
    ToolExecutionEnd,
    ToolExecutionUpdate,
    ToolResult,
    ToolResultMessage,
    Usage,
    UserMessage,
    tool,
)
from yoagent.core.extension import (
    CANCELLED_MARKER,
    EXTENSION_FAILED_PREFIX,
    EXTENSION_MESSAGE_PREFIX,
    ContinueRun,
    ExtensionMode,
    FailRun,
    FilterResult,
    ModelVerdict,
    Pass,
    Proceed,
    Reject,
    RunContext,
    RunHooks,
    StopRun,
    ToolOutput,
    TurnContext,
    Warn,
)


@tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool
async def chatty(ctx: ToolContext) -> str:
    """Reports progress, then answers."""
    ctx.progress("working")
    ctx.update(ToolResult.from_text("half"))
    return "secret output"


class Ext:
    """A test extension: ``hooks`` builds the run's hooks; every start is recorded."""

    def __init__(
        self,
        name: str,
        hooks: Callable[[RunContext], RunHooks] | None = None,
        *,
        mode: ExtensionMode = ExtensionMode.ADVISORY,
        filters_tool_output: bool = False,
        rechecks_modified_calls: bool = False,
        runs_last: bool = False,
    ) -> None:
        self.name = name
        self.mode = mode
        self.filters_tool_output = filters_tool_output
        self.rechecks_modified_calls = rechecks_modified_calls
        self.runs_last = runs_last
        self._hooks = hooks or (lambda run: RunHooks())
        self.runs: list[RunContext] = []

    def start_run(self, run: RunContext) -> RunHooks:
        self.runs.append(run)
        return self._hooks(run)


class Log(RunHooks):
    """Records every hook call into a shared log."""

    def __init__(self, log: list[str], name: str = "x") -> None:
        self.log = log
        self.name = name
        self.events: list[str] = []
        self.outcome: RunOutcome | None = None

    async def tools(self) -> Sequence[AgentTool]:
        self.log.append(f"{self.name}.tools")
        return ()

    async def on_input(self, text: str) -> FilterResult:
        self.log.append(f"{self.name}.on_input:{text}")
        return Pass()

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        self.log.append(f"{self.name}.before_model:{turn.turn}")
        return Proceed(notes=[f"note from {self.name}"])

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        self.log.append(f"{self.name}.before_tool:{request.arguments}")
        return Allow()

    async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
        self.log.append(f"{self.name}.after_tool:{output.result.text}")

    async def on_stop(self, reply: AssistantMessage, turn: TurnContext) -> ContinueRun | None:
        self.log.append(f"{self.name}.on_stop:{reply.text}")
        return None

    def on_event(self, event: AgentEvent) -> None:
        self.events.append(event.type)

    async def finish(self, outcome: RunOutcome) -> None:
        self.log.append(f"{self.name}.finish:{outcome.end.value}")
        self.outcome = outcome


def two_turns() -> MockProvider:
    return MockProvider([tool_reply(call("echo", text="hi")), text_reply("done")])


async def test_every_hook_point_is_called_at_its_place_in_the_run() -> None:
    log: list[str] = []
    hooks: list[Log] = []

    def start(run: RunContext) -> RunHooks:
        hooks.append(Log(log))
        return hooks[-1]

    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("x", start))
    await agent.prompt("go")
    assert log == [
        "x.tools",
        "x.on_input:go",
        "x.before_model:1",
        "x.before_tool:{'text': 'hi'}",
        "x.after_tool:hi",
        "x.before_model:2",
        "x.on_stop:done",
        "x.finish:completed",
    ]
    (probe,) = hooks
    assert probe.events[0] == "agent_start" and probe.events[-1] == "agent_end"
    assert "tool_execution_end" in probe.events
    assert provider.requests[0].turn_notes == ("note from x",)


async def test_the_older_hooks_come_first_filters_middleware_and_turn_hook_notes_after() -> None:
    log: list[str] = []

    def input_filter(text: str) -> FilterResult:
        log.append("input_filter")
        return Pass()

    def middleware(request: ToolCallRequest) -> ToolDecision:
        log.append("middleware")
        return Modify({"text": "from middleware"})

    def turn_hook(turn: TurnContext) -> list[str]:
        log.append("turn_hook")
        return ["turn hook note"]

    provider = two_turns()
    agent = Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=[echo],
        input_filters=[input_filter],
        tool_middleware=[middleware],
        turn_hooks=[turn_hook],
    )
    agent.with_extension(Ext("x", lambda run: Log(log)))
    await agent.prompt("go")
    assert log[:7] == [
        "x.tools",
        "input_filter",
        "x.on_input:go",
        "x.before_model:1",
        "turn_hook",
        "middleware",
        "x.before_tool:{'text': 'from middleware'}",
    ]
    # Extension notes first, then the turn hooks'.
    assert provider.requests[0].turn_notes == ("note from x", "turn hook note")


async def test_extension_tools_are_offered_in_their_run_only() -> None:
    @tool
    async def lookup() -> str:
        """Look something up."""
        return "found"

    class Offers(RunHooks):
        async def tools(self) -> Sequence[AgentTool]:
            return [lookup]

    provider = MockProvider([tool_reply(call("lookup")), text_reply("ok")])
    agent = Agent.from_provider(provider, ModelConfig.mock())
    agent.with_extension(Ext("x", lambda run: Offers()))
    await agent.prompt("go")
    assert [d.name for d in provider.requests[0].tools] == ["lookup"]
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert results[0].text == "found"
    assert agent.tools == []


async def test_on_input_rejects_or_warns() -> None:
    class Judge(RunHooks):
        async def on_input(self, text: str) -> FilterResult:
            return Reject("no secrets") if "secret" in text else Warn("be careful")

    recorder = Recorder()
    provider = MockProvider.text("ok")
    agent = Agent.from_provider(provider, ModelConfig.mock())
    agent.with_extension(Ext("judge", lambda run: Judge()))
    assert await agent.prompt("the secret", on_event=recorder) == []
    assert recorder.of(InputRejected)[0].reason == "no secrets"
    assert provider.requests == []
    await agent.prompt("fine")
    first = provider.requests[0].messages[0]
    assert isinstance(first, UserMessage) and first.text == "fine\nbe careful"


async def test_before_model_can_stop_or_fail_the_run() -> None:
    class Stops(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            return StopRun("enough") if turn.turn == 2 else Proceed()

    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("x", lambda run: Stops()))
    new = await agent.prompt("go")
    assert len(provider.requests) == 1
    last = new[-1]
    assert isinstance(last, UserMessage) and last.text == "[Agent stopped: enough]"

    class Fails(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            return FailRun("policy violated")

    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("gate", lambda run: Fails()))
    with pytest.raises(RunFailedError) as raised:
        await agent.prompt("go")
    assert raised.value.kind is ErrorKind.OTHER
    assert raised.value.message == f"{EXTENSION_FAILED_PREFIX}gate] policy violated"
    assert provider.requests == []
    assert isinstance(agent.messages[-1], AssistantMessage)


async def test_before_tool_denies_or_rewrites_and_after_tool_rewrites_the_output() -> None:
    class Gate(RunHooks):
        async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
            if request.arguments["text"] == "rm -rf":
                return Deny("destructive")
            return Modify({"text": request.arguments["text"].upper()})

        async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
            output.result = ToolResult.from_text(output.result.text + " (checked)")

    recorder = Recorder()
    provider = MockProvider(
        [
            tool_reply(call("echo", "a", text="rm -rf"), call("echo", "b", text="ls")),
            text_reply("ok"),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("gate", lambda run: Gate()))
    await agent.prompt("go", on_event=recorder)
    ends = {e.result.tool_call_id: e.result for e in recorder.of(ToolExecutionEnd)}
    assert ends["a"].is_error and ends["a"].text == "Tool call denied: gate: destructive"
    assert not ends["b"].is_error and ends["b"].text == "LS (checked)"


async def test_a_rewrite_is_rechecked_by_the_earlier_extensions_that_ask_for_it() -> None:
    seen: list[Any] = []

    class Checker(RunHooks):
        async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
            seen.append(request.arguments["text"])
            return (
                Deny("rewritten to something unsafe")
                if request.arguments["text"] == "bad"
                else Allow()
            )

    class Rewriter(RunHooks):
        async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
            return Modify({"text": "bad"})

    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("checker", lambda run: Checker(), rechecks_modified_calls=True))
    agent.with_extension(Ext("rewriter", lambda run: Rewriter()))
    await agent.prompt("go")
    assert seen == ["hi", "bad"]
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.is_error and "checker: rewritten to something unsafe" in result.text


async def test_a_runs_last_extension_runs_after_the_others_whenever_it_was_installed() -> None:
    log: list[str] = []
    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("gate", lambda run: Log(log, "gate"), runs_last=True))
    agent.with_extension(Ext("own", lambda run: Log(log, "own")))
    agent.with_tree_extension(Ext("tree", lambda run: Log(log, "tree")))
    agent.with_extension(Ext("later", lambda run: Log(log, "later"), runs_last=True))
    await agent.prompt("go")
    judged = [entry.split(".")[0] for entry in log if ".before_tool" in entry]
    assert judged == ["tree", "own", "gate", "later"]
    assert provider.requests[0].turn_notes == (
        "note from tree",
        "note from own",
        "note from gate",
        "note from later",
    )


async def test_a_runs_last_tree_extension_runs_after_a_delegated_runs_own_extensions() -> None:
    log: list[str] = []
    child = SubAgentTool(
        "helper", "Echoes.", provider=two_turns(), model=ModelConfig.mock(), tools=[echo]
    )
    child.with_extension(Ext("child-own", lambda run: Log(log, "child-own")))
    root = Agent.from_provider(
        MockProvider([tool_reply(call("helper", "c1", task="go")), text_reply("root answer")]),
        ModelConfig.mock(),
        tools=[child],
    )
    root.with_tree_extension(Ext("gate", lambda run: Log(log, "gate"), runs_last=True))
    await root.prompt("start")
    # The root's own call is judged by the gate alone; the child's by its own, then the gate.
    judged = [entry.split(".")[0] for entry in log if ".before_tool" in entry]
    assert judged == ["gate", "child-own", "gate"]


async def test_a_rewrite_by_an_extension_before_a_runs_last_one_reaches_it() -> None:
    seen: list[Any] = []

    class Rewriter(RunHooks):
        async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
            return Modify({"text": "rewritten"})

    class Gate(RunHooks):
        async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
            seen.append(request.arguments["text"])
            return Allow()

    agent = Agent.from_provider(two_turns(), ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("gate", lambda run: Gate(), runs_last=True))
    agent.with_extension(Ext("rewriter", lambda run: Rewriter()))
    await agent.prompt("go")
    assert seen == ["rewritten"]  # judged once, on the final call: no recheck needed
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.text == "rewritten"


async def test_before_model_and_turn_hooks_see_the_tools_offered_on_the_request() -> None:
    seen: list[list[tuple[str, str]]] = []

    class Looks(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            seen.append([(t.name, t.description) for t in turn.tools])
            return Proceed()

    def turn_hook(turn: TurnContext) -> list[str]:
        seen.append([(t.name, t.description) for t in turn.tools])
        return []

    agent = Agent.from_provider(
        two_turns(), ModelConfig.mock(), tools=[echo], turn_hooks=[turn_hook]
    )
    agent.with_extension(Ext("looks", lambda run: Looks()))
    await agent.prompt("go")
    assert seen == [[("echo", "Echo the text.")]] * 4  # two turns, each hook once


async def test_an_output_filter_holds_back_partial_outputs() -> None:
    class Redact(RunHooks):
        async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
            output.result = ToolResult.from_text(output.result.text.replace("secret", "[x]"))

    recorder = Recorder()
    provider = MockProvider([tool_reply(call("chatty")), text_reply("ok")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[chatty])
    agent.with_extension(Ext("redact", lambda run: Redact(), filters_tool_output=True))
    await agent.prompt("go", on_event=recorder)
    assert not recorder.of(ProgressMessage) and not recorder.of(ToolExecutionUpdate)
    assert recorder.of(ToolExecutionEnd)[0].result.text == "[x] output"


async def test_on_stop_continues_up_to_the_cap_and_a_required_one_then_fails() -> None:
    class KeepGoing(RunHooks):
        async def on_stop(self, reply: AssistantMessage, turn: TurnContext) -> ContinueRun | None:
            return ContinueRun("check the tests again")

    provider = MockProvider.text("a", "b", "c")
    agent = Agent.from_provider(provider, ModelConfig.mock(), max_stop_continues=2)
    agent.with_extension(Ext("nag", lambda run: KeepGoing()))
    new = await agent.prompt("go")
    assert len(provider.requests) == 3
    notes = [
        m for m in new if isinstance(m, UserMessage) and m.text.startswith(EXTENSION_MESSAGE_PREFIX)
    ]
    assert [n.text for n in notes] == ["[Extension message: nag] check the tests again"] * 2
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "c"

    provider = MockProvider.text("a", "b")
    agent = Agent.from_provider(provider, ModelConfig.mock(), max_stop_continues=1)
    agent.with_extension(Ext("nag", lambda run: KeepGoing(), mode=ExtensionMode.REQUIRED))
    with pytest.raises(RunFailedError, match=r"nag\] kept the run going past"):
        await agent.prompt("go")


class Raises(RunHooks):
    """Raises from the hook named ``where``."""

    def __init__(self, where: str) -> None:
        self.where = where

    def _maybe(self, hook: str) -> None:
        if hook == self.where:
            raise RuntimeError(f"{hook} broke")

    async def tools(self) -> Sequence[AgentTool]:
        self._maybe("tools")
        return ()

    async def on_input(self, text: str) -> FilterResult:
        self._maybe("on_input")
        return Pass()

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        self._maybe("before_model")
        return Proceed()

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        self._maybe("before_tool")
        return Allow()

    async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
        self._maybe("after_tool")

    async def on_stop(self, reply: AssistantMessage, turn: TurnContext) -> ContinueRun | None:
        self._maybe("on_stop")
        return None

    def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, ToolExecutionEnd):
            self._maybe("on_event")

    async def finish(self, outcome: RunOutcome) -> None:
        self._maybe("finish")


HOOKS = ["tools", "on_input", "before_model", "before_tool", "after_tool", "on_stop", "on_event"]


@pytest.mark.parametrize("where", [*HOOKS, "finish"])
async def test_a_raising_advisory_hook_is_logged_and_the_run_goes_on(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    agent = Agent.from_provider(two_turns(), ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("flaky", lambda run: Raises(where)))
    with caplog.at_level(logging.WARNING, "yoagent.core"):
        new = await agent.prompt("go")
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "done"
    assert f"advisory extension flaky failed: {where} raised RuntimeError" in caplog.text


@pytest.mark.parametrize("where", HOOKS)
async def test_a_raising_required_hook_fails_the_run_once(where: str) -> None:
    recorder = Recorder()
    agent = Agent.from_provider(two_turns(), ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("strict", lambda run: Raises(where), mode=ExtensionMode.REQUIRED))
    with pytest.raises(RunFailedError) as raised:
        await agent.prompt("go", on_event=recorder)
    assert raised.value.message.startswith(f"{EXTENSION_FAILED_PREFIX}strict] {where} raised")
    errors = [m for m in agent.messages if isinstance(m, AssistantMessage) and m.error_kind]
    assert len(errors) == 1
    # Every turn the failure opened is closed, and the history is one a model accepts.
    assert recorder.types.count("turn_start") == recorder.types.count("turn_end")
    assert recorder.types[-1] == "agent_end"


async def test_a_required_or_filtering_extension_that_cannot_start_fails_the_run() -> None:
    def broken(run: RunContext) -> RunHooks:
        raise RuntimeError("no config")

    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Ext("optional", broken))
    assert isinstance((await agent.prompt("go"))[-1], AssistantMessage)

    provider = MockProvider.text("never")
    agent = Agent.from_provider(provider, ModelConfig.mock())
    agent.with_extension(Ext("filter", broken, filters_tool_output=True))  # advisory, but a filter
    with pytest.raises(RunFailedError, match="start_run raised RuntimeError: no config"):
        await agent.prompt("go")
    assert provider.requests == []


class Hangs(RunHooks):
    """Never answers the hook named ``where`` (a cancel must end the wait)."""

    def __init__(self, where: str, entered: anyio.Event) -> None:
        self.where = where
        self.entered = entered

    async def _hang(self, hook: str) -> None:
        if hook == self.where:
            self.entered.set()
            await anyio.sleep_forever()

    async def tools(self) -> Sequence[AgentTool]:
        await self._hang("tools")
        return ()

    async def on_input(self, text: str) -> FilterResult:
        await self._hang("on_input")
        return Pass()

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        await self._hang("before_model")
        return Proceed()

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        await self._hang("before_tool")
        return Allow()

    async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
        await self._hang("after_tool")

    async def on_stop(self, reply: AssistantMessage, turn: TurnContext) -> ContinueRun | None:
        await self._hang("on_stop")
        return ContinueRun("never sent")


@pytest.mark.parametrize(
    "where", ["tools", "on_input", "before_model", "before_tool", "after_tool", "on_stop"]
)
async def test_a_cancel_ends_the_wait_for_any_hook(where: str) -> None:
    entered = anyio.Event()
    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(Ext("slow", lambda run: Hangs(where, entered)))
    recorder = Recorder()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def abort_when_stuck() -> None:
                await entered.wait()
                agent.abort()

            group.start_soon(abort_when_stuck)
            await agent.prompt("go", on_event=recorder)
    assert recorder.types[-1] == "agent_end"
    results = {r.tool_call_id: r for r in agent.messages if isinstance(r, ToolResultMessage)}
    if where in ("before_tool", "after_tool"):
        # The call is cancelled with its hooks: its output never reaches the model.
        assert results["call_echo"].is_error
        assert results["call_echo"].text == "Tool execution cancelled."
    last = agent.messages[-1] if agent.messages else None
    if where == "on_stop":  # the run had answered: the cancel accepts the stop
        assert isinstance(last, AssistantMessage) and last.text == "done"
    elif where in ("before_tool", "after_tool"):
        assert isinstance(last, UserMessage) and last.text == CANCELLED_MARKER
    else:  # cancelled before the first request: nothing was asked of the model
        assert provider.requests == []


async def test_finish_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from yoagent.core._hooks import active

    monkeypatch.setattr(active, "FINISH_TIMEOUT", 0.05)

    class SlowFinish(RunHooks):
        async def finish(self, outcome: RunOutcome) -> None:
            await anyio.sleep_forever()

    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Ext("slow", lambda run: SlowFinish()))
    with anyio.fail_after(5):
        await agent.prompt("go")


async def test_finish_learns_how_the_run_ended() -> None:
    outcomes: list[RunOutcome] = []

    class Watch(RunHooks):
        async def finish(self, outcome: RunOutcome) -> None:
            outcomes.append(outcome)

    agent = Agent.from_provider(
        MockProvider([text_reply("ok"), MockReply(message=text_reply("x"), delay=5)]),
        ModelConfig.mock(),
        input_filters=[lambda text: Reject("nope") if text == "bad" else Pass()],
    )
    agent.with_extension(Ext("watch", lambda run: Watch()))
    await agent.prompt("go")
    await agent.prompt("bad")
    async with anyio.create_task_group() as group:
        group.start_soon(agent.prompt, "slow")
        await anyio.sleep(0.05)
        agent.abort()
    assert [o.end for o in outcomes] == [RunEnd.COMPLETED, RunEnd.REJECTED, RunEnd.CANCELLED]
    assert outcomes[0].stop_reason is StopReason.STOP
    assert outcomes[1].reason == "nope"


async def test_tree_extensions_reach_every_delegated_run_two_levels_deep() -> None:
    @tool
    async def root_only() -> str:
        """A tool the tree extension offers."""
        return "x"

    class Offers(RunHooks):
        async def tools(self) -> Sequence[AgentTool]:
            return [root_only]

    tree = Ext("tree", lambda run: Offers())
    grandchild_provider = MockProvider.text("leaf answer")
    grandchild = SubAgentTool(
        "leaf", "Answers.", provider=grandchild_provider, model=ModelConfig.mock()
    )
    child_provider = MockProvider(
        [tool_reply(call("leaf", "c2", task="deeper")), text_reply("child answer")]
    )
    child = SubAgentTool(
        "mid", "Delegates.", provider=child_provider, model=ModelConfig.mock(), tools=[grandchild]
    )
    root = Agent.from_provider(
        MockProvider([tool_reply(call("mid", "c1", task="go down")), text_reply("root answer")]),
        ModelConfig.mock(),
        tools=[child],
    )
    root.with_tree_extension(tree)
    await root.prompt("start")
    depths = [(run.depth, run.inherited, run.delegated_by) for run in tree.runs]
    assert depths == [(0, False, None), (1, True, "c1"), (2, True, "c2")]
    assert tree.runs[1].parent_run_id == tree.runs[0].run_id
    assert tree.runs[2].parent_run_id == tree.runs[1].run_id
    # Its tools are offered where it was installed only.
    assert [d.name for d in child_provider.requests[0].tools] == ["leaf"]
    assert grandchild_provider.requests[0].tools == []


async def test_an_extension_records_decision_spend_into_its_run() -> None:
    class Decides(RunHooks):
        def __init__(self, run: RunContext) -> None:
            self.run = run

        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            self.run.spend.record_decision(Usage(input=10, output=1), 0.002)
            return Proceed()

    recorder = Recorder()
    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Ext("advisor", Decides))
    await agent.prompt("go", on_event=recorder)
    stats = recorder.of(AgentEnd)[0].stats
    assert stats.decision.requests == 1 and stats.decision.cost_usd == pytest.approx(0.002)
    assert stats.decision.unpriced == 0
    assert agent.stats.total_cost_usd() == pytest.approx(0.002)


async def test_a_run_rejected_in_on_input_still_reports_the_spend_of_its_check() -> None:
    class Screens(RunHooks):
        def __init__(self, run: RunContext) -> None:
            self.run = run

        async def on_input(self, text: str) -> FilterResult:
            self.run.spend.record_decision(Usage(input=7, output=1), None)
            return Reject("screened out")

    recorder = Recorder()
    agent = Agent.from_provider(MockProvider.text("never"), ModelConfig.mock())
    agent.with_extension(Ext("guard", Screens))
    assert await agent.prompt("go", on_event=recorder) == []
    assert recorder.of(InputRejected)[0].reason == "screened out"
    stats = recorder.of(AgentEnd)[0].stats
    assert stats.decision.requests == 1 and stats.decision.unpriced == 1
    assert stats.decision.usage == Usage(input=7, output=1) and stats.turns == 0


async def test_events_reach_extensions_after_the_caller() -> None:
    order: list[str] = []

    class Watch(RunHooks):
        def on_event(self, event: AgentEvent) -> None:
            if isinstance(event, AgentStart):
                order.append("extension")

    def caller(event: AgentEvent) -> None:
        if isinstance(event, AgentStart):
            order.append("caller")

    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Ext("watch", lambda run: Watch()))
    await agent.prompt("go", on_event=caller)
    assert order == ["caller", "extension"]


def test_an_object_that_is_not_an_extension_is_refused_at_the_call() -> None:
    agent = Agent.from_provider(MockProvider(), ModelConfig.mock())
    with pytest.raises(TypeError, match="is not an Extension"):
        agent.with_extension(object())  # type: ignore[arg-type]


async def test_a_hook_answering_something_it_may_not_is_a_failure_not_a_crash() -> None:
    class Confused(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            return ["a note"]  # type: ignore[return-value]

        async def tools(self) -> Sequence[AgentTool]:
            return ["not a tool"]  # type: ignore[list-item]

    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Ext("confused", lambda run: Confused()))
    new = await agent.prompt("go")  # advisory: logged, the run goes on
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "ok"

    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Ext("confused", lambda run: Confused(), mode=ExtensionMode.REQUIRED))
    with pytest.raises(RunFailedError, match=r"returned list, not a verdict|is not a tool"):
        await agent.prompt("go")


# --- one chain per hook point: the older knobs are links of it ---------------------------------


async def test_a_middleware_denial_ends_the_chain_before_any_extension_is_asked() -> None:
    log: list[str] = []

    def refuse(request: ToolCallRequest) -> ToolDecision:
        return Deny("not today")

    agent = Agent.from_provider(
        two_turns(), ModelConfig.mock(), tools=[echo], tool_middleware=[refuse]
    )
    agent.with_extension(Ext("x", lambda run: Log(log)))
    await agent.prompt("go")
    assert not [entry for entry in log if "before_tool" in entry]
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.text == "Tool call denied: not today"  # a knob's verdict carries no name


async def test_a_required_before_model_failure_fails_the_run_before_the_model_is_called() -> None:
    provider = two_turns()
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    agent.with_extension(
        Ext("strict", lambda run: Raises("before_model"), mode=ExtensionMode.REQUIRED)
    )
    with pytest.raises(RunFailedError, match=r"strict\] before_model raised"):
        await agent.prompt("go")
    assert provider.requests == []


async def test_an_abort_in_before_model_closes_a_turn_as_one_in_a_turn_hook_does() -> None:
    holder: list[Agent] = []

    class AbortNow(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            holder[0].abort()
            return Proceed()

    def abort_now(turn: TurnContext) -> list[str]:
        holder[0].abort()
        return []

    seen: list[list[str]] = []
    for install in ("extension", "turn hook"):
        recorder = Recorder()
        provider = MockProvider([text_reply("never")])
        agent = Agent.from_provider(
            provider, ModelConfig.mock(), turn_hooks=[abort_now] if install == "turn hook" else []
        )
        if install == "extension":
            agent.with_extension(Ext("stop", lambda run: AbortNow()))
        holder[:] = [agent]
        await agent.prompt("go", on_event=recorder)
        assert provider.requests == []
        reply = agent.messages[1]
        assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ABORTED
        seen.append([t for t in recorder.types if t not in ("message_start", "message_end")])
    assert seen[0] == seen[1] == ["agent_start", "turn_start", "turn_end", "agent_end"]


async def test_a_hook_set_on_the_hooks_object_itself_is_called() -> None:
    notes: list[int] = []

    async def before_model(turn: TurnContext) -> ModelVerdict:
        notes.append(turn.turn)
        return Proceed(notes=["set on the object"])

    def start(run: RunContext) -> RunHooks:
        hooks = RunHooks()
        hooks.before_model = before_model  # type: ignore[method-assign]
        return hooks

    provider = MockProvider.text("ok")
    agent = Agent.from_provider(provider, ModelConfig.mock())
    agent.with_extension(Ext("plain", start))
    await agent.prompt("go")
    assert notes == [1]
    assert provider.requests[0].turn_notes == ("set on the object",)
