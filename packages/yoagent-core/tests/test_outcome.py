"""How a run ended, as data: every kind of ending on ``AgentEnd.outcome`` and on
``Agent.last_outcome``, the same value, round-tripping through JSON."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import anyio
import pytest
from core_helpers import Recorder, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEnd,
    AssistantMessage,
    Budget,
    CostConfig,
    Defer,
    ErrorKind,
    ExecutionLimits,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    RetryConfig,
    RunEnd,
    RunFailedError,
    RunOutcome,
    StopCause,
    StopReason,
    TextContent,
    ToolCallRequest,
    ToolDecision,
    Usage,
    event_adapter,
    tool,
)
from yoagent.core.extension import (
    AGENT_STOPPED_PREFIX,
    ExtensionMode,
    FailRun,
    ModelVerdict,
    Pass,
    Proceed,
    Reject,
    RunContext,
    RunHooks,
    StopRun,
    TurnContext,
)


@tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool
async def slow() -> str:
    """Takes ten seconds."""
    await anyio.sleep(10)
    return "done"


class Hooks:
    """An extension whose run hooks ``make`` builds."""

    def __init__(
        self,
        make: Callable[[RunContext], RunHooks],
        name: str = "ext",
        mode: ExtensionMode = ExtensionMode.ADVISORY,
    ) -> None:
        self.name = name
        self.mode = mode
        self._make = make

    def start_run(self, run: RunContext) -> RunHooks:
        return self._make(run)


async def ended(agent: Agent, prompt: str = "go") -> RunOutcome:
    """Run ``prompt``; the outcome ``AgentEnd`` carried, checked against ``last_outcome``
    and against its own JSON round trip. A failed run's error is swallowed here."""
    recorder = Recorder()
    with contextlib.suppress(RunFailedError):
        await agent.prompt(prompt, on_event=recorder)
    (end,) = recorder.of(AgentEnd)
    assert agent.last_outcome == end.outcome
    assert end.outcome.messages == ()  # the event carries its messages once, as its own
    assert event_adapter.validate_json(event_adapter.dump_json(end)) == end
    return end.outcome


async def test_a_run_the_model_ends_completes_with_its_stop_reason() -> None:
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("echo", text="a")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[echo],
    )
    outcome = await ended(agent)
    assert outcome == RunOutcome(end=RunEnd.COMPLETED, stop_reason=StopReason.STOP)


async def test_a_refusal_completes_with_the_refusal_as_its_stop_reason() -> None:
    refusal = AssistantMessage(
        content=[TextContent(text="I cannot help with that.")], stop_reason=StopReason.REFUSAL
    )
    agent = Agent.from_provider(MockProvider([refusal]), ModelConfig.mock())
    outcome = await ended(agent)
    assert (outcome.end, outcome.stop_reason) == (RunEnd.COMPLETED, StopReason.REFUSAL)


@pytest.mark.parametrize(
    ("limits", "usage", "cause", "reason"),
    [
        (
            ExecutionLimits(max_turns=1),
            Usage(),
            StopCause.TURN_LIMIT,
            "turn limit reached (1 turns)",
        ),
        (
            ExecutionLimits(max_total_tokens=100),
            Usage(input=90, output=20),
            StopCause.TOKEN_LIMIT,
            "token limit reached (110 of 100 tokens)",
        ),
    ],
    ids=["turns", "tokens"],
)
async def test_a_limit_stops_the_run_and_says_which(
    limits: ExecutionLimits, usage: Usage, cause: StopCause, reason: str
) -> None:
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("echo", text="a"), usage=usage), text_reply("never")]),
        ModelConfig.mock(),
        tools=[echo],
        limits=limits,
    )
    outcome = await ended(agent)
    assert outcome == RunOutcome(
        end=RunEnd.STOPPED, cause=cause, reason=reason, stop_reason=StopReason.TOOL_USE
    )
    last = agent.messages[-1]  # the model still reads the marker
    assert last.role == "user" and last.text == f"{AGENT_STOPPED_PREFIX}{reason}]"


async def test_the_wall_time_limit_stops_the_run_even_mid_tool() -> None:
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("slow")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[slow],
        limits=ExecutionLimits(max_duration=0.1),
    )
    with anyio.fail_after(5):
        outcome = await ended(agent)
    assert (outcome.end, outcome.cause) == (RunEnd.STOPPED, StopCause.TIME_LIMIT)
    assert outcome.reason == "time limit reached (0s)"


async def test_a_budget_stops_the_run_as_a_budget() -> None:
    model = ModelConfig.mock()
    expensive = tool_reply(call("echo", text="a"), usage=Usage(input=10_000))
    agent = Agent.from_provider(MockProvider([expensive, text_reply("never")]), model, tools=[echo])
    agent.with_extension(Budget(0.01, CostConfig(input=3.0, output=15.0)))
    outcome = await ended(agent)
    assert (outcome.end, outcome.cause, outcome.extension) == (
        RunEnd.STOPPED,
        StopCause.BUDGET,
        "budget",
    )
    assert outcome.reason is not None and outcome.reason.startswith("budget reached")


async def test_repeated_tool_calls_stop_the_run_as_a_loop() -> None:
    same = [tool_reply(call("echo", f"c{i}", text="again")) for i in range(6)]
    agent = Agent.from_provider(
        MockProvider([*same, text_reply("never")]),
        ModelConfig.mock(),
        tools=[echo],
        max_repeated_tool_calls=2,
    )
    outcome = await ended(agent)
    assert (outcome.end, outcome.cause) == (RunEnd.STOPPED, StopCause.LOOP)
    assert outcome.reason == "loop detected: echo called with the same arguments 3 turns in a row"


async def test_an_extension_stops_or_fails_the_run_and_is_named() -> None:
    class Stops(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            return StopRun("enough")

    agent = Agent.from_provider(MockProvider.text("never"), ModelConfig.mock())
    agent.with_extension(Hooks(lambda run: Stops(), name="stopper"))
    outcome = await ended(agent)
    assert outcome == RunOutcome(
        end=RunEnd.STOPPED, cause=StopCause.EXTENSION, reason="enough", extension="stopper"
    )

    class Fails(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            return FailRun("policy")

    agent = Agent.from_provider(MockProvider.text("never"), ModelConfig.mock())
    agent.with_extension(Hooks(lambda run: Fails(), name="gate"))
    outcome = await ended(agent)
    assert (outcome.end, outcome.extension, outcome.error_kind) == (
        RunEnd.FAILED,
        "gate",
        ErrorKind.OTHER,
    )
    assert outcome.reason == "[Extension failed: gate] policy"
    assert outcome.stop_reason is StopReason.ERROR


def test_a_stop_run_cause_must_be_a_stop_cause() -> None:
    assert StopRun("over", "budget").cause is StopCause.BUDGET  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a valid StopCause"):
        StopRun("over", "spent")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kind", [ErrorKind.AUTH, ErrorKind.CONTEXT_OVERFLOW, ErrorKind.API, ErrorKind.RATE_LIMITED]
)
async def test_a_failed_model_call_fails_the_run_with_its_kind(kind: ErrorKind) -> None:
    agent = Agent.from_provider(
        MockProvider([ProviderError(kind, "no")] * 2),
        ModelConfig.mock(),
        retry=RetryConfig.none(),
        context="off",
    )
    outcome = await ended(agent)
    assert (outcome.end, outcome.error_kind, outcome.extension) == (RunEnd.FAILED, kind, None)
    assert outcome.reason is not None and "no" in outcome.reason


async def test_a_cancel_mid_stream_or_before_the_first_request_cancels_the_run() -> None:
    agent = Agent.from_provider(
        MockProvider([MockReply(message=text_reply("x" * 400), delay=0.01, chunk_size=4)]),
        ModelConfig.mock(),
    )
    async with anyio.create_task_group() as group:

        async def abort_soon() -> None:
            await anyio.sleep(0.05)
            agent.abort()

        group.start_soon(abort_soon)
        outcome = await ended(agent)
    assert outcome == RunOutcome(end=RunEnd.CANCELLED, stop_reason=StopReason.ABORTED)

    entered = anyio.Event()

    class Waits(RunHooks):
        async def on_input(self, text: str) -> Pass:
            entered.set()
            await anyio.sleep_forever()
            return Pass()

    agent = Agent.from_provider(MockProvider.text("never"), ModelConfig.mock())
    agent.with_extension(Hooks(lambda run: Waits()))
    async with anyio.create_task_group() as group:

        async def abort_when_waiting() -> None:
            await entered.wait()
            agent.abort()

        group.start_soon(abort_when_waiting)
        outcome = await ended(agent)
    assert outcome == RunOutcome(end=RunEnd.CANCELLED)  # nothing replied: no stop reason
    assert agent.messages[-1].text == "go"  # and no marker: the model never answered


async def test_a_run_an_outer_cancel_ends_is_cancelled() -> None:
    recorder = Recorder()
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("slow")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[slow],
    )
    with anyio.move_on_after(0.1):
        await agent.prompt("go", on_event=recorder)
    (end,) = recorder.of(AgentEnd)
    assert end.outcome.end is RunEnd.CANCELLED
    assert agent.last_outcome == end.outcome


async def test_a_paused_run_says_what_it_waits_on() -> None:
    def hold(request: ToolCallRequest) -> ToolDecision:
        return Defer("ask a person")

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("echo", "c1", text="a")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[echo],
        tool_middleware=[hold],
    )
    outcome = await ended(agent)
    assert outcome.end is RunEnd.PAUSED
    assert outcome.pending is not None and outcome.pending.call_ids == ["c1"]
    assert outcome.pending == agent.pending


async def test_a_rejected_prompt_says_why() -> None:
    agent = Agent.from_provider(
        MockProvider.text("never"),
        ModelConfig.mock(),
        input_filters=[lambda text: Reject("no secrets")],
    )
    outcome = await ended(agent, "my password")
    assert outcome == RunOutcome(end=RunEnd.REJECTED, reason="no secrets")


async def test_finish_gets_the_same_outcome_with_the_messages() -> None:
    seen: list[RunOutcome] = []

    class Watch(RunHooks):
        async def finish(self, outcome: RunOutcome) -> None:
            seen.append(outcome)

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("echo", text="a")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[echo],
        limits=ExecutionLimits(max_turns=1),
    )
    agent.with_extension(Hooks(lambda run: Watch()))
    new = await agent.prompt("go")
    (finished,) = seen
    assert finished.messages == tuple(new)
    assert agent.last_outcome is not None
    assert finished == RunOutcome(**{**_fields(agent.last_outcome), "messages": tuple(new)})


def _fields(outcome: RunOutcome) -> dict[str, object]:
    return {name: getattr(outcome, name) for name in RunOutcome.__dataclass_fields__}


async def test_last_outcome_is_none_until_a_run_and_after_reset() -> None:
    agent = Agent.from_provider(MockProvider([text_reply("a")]), ModelConfig.mock())
    assert agent.last_outcome is None
    await agent.prompt("go")
    assert agent.last_outcome is not None and agent.last_outcome.end is RunEnd.COMPLETED
    agent.reset()
    assert agent.last_outcome is None
    with pytest.raises(ValueError, match="nothing to continue from"):
        await agent.continue_()
    assert agent.last_outcome is None


def test_an_agent_end_without_an_outcome_reads_as_completed() -> None:
    end = event_adapter.validate_json(b'{"type": "agent_end"}')
    assert isinstance(end, AgentEnd) and end.outcome == RunOutcome(end=RunEnd.COMPLETED)


def test_a_hand_built_outcome_takes_its_stop_reason_from_its_messages() -> None:
    reply = text_reply("ok")
    outcome = RunOutcome(end=RunEnd.COMPLETED, messages=[reply])
    assert outcome.stop_reason is StopReason.STOP and outcome.messages == (reply,)


async def test_a_required_extension_that_fails_off_the_decision_path_fails_the_run() -> None:
    class Breaks(RunHooks):
        async def after_tool(self, request: ToolCallRequest, output: object) -> None:
            raise RuntimeError("broke")

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("echo", text="a")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[echo],
    )
    agent.with_extension(Hooks(lambda run: Breaks(), name="strict", mode=ExtensionMode.REQUIRED))
    outcome = await ended(agent)
    assert (outcome.end, outcome.extension) == (RunEnd.FAILED, "strict")


async def test_a_proceeding_extension_leaves_the_outcome_completed() -> None:
    class Notes(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            return Proceed(notes=["hi"])

    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    agent.with_extension(Hooks(lambda run: Notes()))
    assert (await ended(agent)).end is RunEnd.COMPLETED
