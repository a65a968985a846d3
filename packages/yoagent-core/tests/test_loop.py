"""The agent loop's behaviour, driven through MockProvider."""

from __future__ import annotations

import anyio
import pytest
from core_helpers import FAST_RETRY, Recorder, call, text_reply, tool_reply

from yoagent.core import (
    AssistantMessage,
    CancelToken,
    ErrorKind,
    ExecutionLimits,
    InputRejected,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    ProviderRetry,
    RetryConfig,
    RunSettings,
    StopReason,
    ToolContext,
    ToolError,
    ToolExecution,
    ToolExecutionEnd,
    ToolResult,
    ToolResultMessage,
    TurnEnd,
    Usage,
    UserMessage,
    tool,
)
from yoagent.core.extension import (
    CANCELLED_MARKER,
    LOOP_ABORT_PREFIX,
    LOOP_NUDGE_PREFIX,
    is_loop_injected,
)
from yoagent.core.loop import AgentContext, AgentLoopConfig, agent_loop, agent_loop_continue

MODEL = ModelConfig.mock()


_WIRING = ("get_steering_messages", "get_follow_up_messages", "output_schema")


def loop_config(provider: MockProvider, **overrides: object) -> AgentLoopConfig:
    """A loop config on ``provider``: ``overrides`` are run settings, or wiring fields."""
    options: dict[str, object] = {"retry": FAST_RETRY}
    options.update(overrides)
    wiring = {name: options.pop(name) for name in _WIRING if name in options}
    settings = RunSettings(**options)  # type: ignore[arg-type]
    return AgentLoopConfig(provider=provider, model=MODEL, settings=settings, **wiring)  # type: ignore[arg-type]


@tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def results_of(messages: list[object]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


async def test_a_plain_answer_ends_the_run(recorder: Recorder) -> None:
    provider = MockProvider.text("hello")
    context = AgentContext(system_prompt="be brief")
    new = await agent_loop([UserMessage.from_text("hi")], context, loop_config(provider), recorder)

    assert [m.role for m in new] == ["user", "assistant"]
    assert isinstance(new[1], AssistantMessage) and new[1].text == "hello"
    assert context.messages == new
    assert recorder.types == [
        "agent_start",
        "message_start",
        "message_end",
        "turn_start",
        "message_start",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert provider.requests[0].system_prompt == "be brief"


async def test_tool_calls_run_and_their_results_go_back_to_the_model(recorder: Recorder) -> None:
    provider = MockProvider(
        [
            tool_reply(call("echo", "a", text="one"), call("echo", "b", text="two")),
            text_reply("done"),
        ]
    )
    context = AgentContext(tools=[echo])
    new = await agent_loop([UserMessage.from_text("go")], context, loop_config(provider), recorder)

    results = results_of(new)
    assert [(r.tool_call_id, r.text, r.is_error) for r in results] == [
        ("a", "one", False),
        ("b", "two", False),
    ]
    second_request = provider.requests[1].messages
    assert [m.role for m in second_request] == ["user", "assistant", "tool_result", "tool_result"]
    assert [d.name for d in provider.requests[0].tools] == ["echo"]
    turn_ends = recorder.of(TurnEnd)
    assert [len(t.tool_results) for t in turn_ends] == [2, 0]


async def test_parallel_tools_run_concurrently() -> None:
    running = 0
    peak = 0

    @tool
    async def slow(n: int) -> str:
        """Wait a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.02)
        running -= 1
        return str(n)

    provider = MockProvider(
        [tool_reply(*(call("slow", f"c{i}", n=i) for i in range(3))), text_reply("ok")]
    )
    await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[slow]), loop_config(provider)
    )
    assert peak == 3


@pytest.mark.parametrize(
    ("strategy", "batch", "expected_peak"),
    [
        (ToolExecution.SEQUENTIAL, 4, 1),
        (ToolExecution.BATCHED, 2, 2),
        (ToolExecution.BATCHED, 1, 1),
    ],
)
async def test_sequential_and_batched_limit_concurrency(
    strategy: ToolExecution, batch: int, expected_peak: int
) -> None:
    running = 0
    peak = 0
    order: list[int] = []

    @tool
    async def slow(n: int) -> str:
        """Wait a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.01)
        order.append(n)
        running -= 1
        return str(n)

    provider = MockProvider(
        [tool_reply(*(call("slow", f"c{i}", n=i) for i in range(4))), text_reply("ok")]
    )
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[slow]),
        loop_config(provider, tool_execution=strategy, batch_size=batch),
    )
    assert peak == expected_peak
    assert [r.tool_call_id for r in results_of(new)] == ["c0", "c1", "c2", "c3"]
    if strategy is ToolExecution.SEQUENTIAL:
        assert order == [0, 1, 2, 3]


async def test_steering_between_sequential_tools_skips_the_rest() -> None:
    queue: list[object] = []

    @tool
    async def step(n: int) -> str:
        """One step."""
        if n == 0:
            queue.append(UserMessage.from_text("stop, do X instead"))
        return f"step {n}"

    def take() -> list[object]:
        taken = list(queue)
        queue.clear()
        return taken

    provider = MockProvider(
        [tool_reply(*(call("step", f"c{i}", n=i) for i in range(3))), text_reply("doing X")]
    )
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[step]),
        loop_config(provider, tool_execution=ToolExecution.SEQUENTIAL, get_steering_messages=take),
    )
    results = results_of(new)
    assert [r.is_error for r in results] == [False, True, True]
    assert results[1].text.startswith("Skipped")
    request = provider.requests[1].messages
    assert [m.role for m in request] == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "tool_result",
        "user",
    ]
    assert isinstance(request[-1], UserMessage) and request[-1].text == "stop, do X instead"


async def test_follow_ups_continue_a_run_that_would_stop() -> None:
    pending = [UserMessage.from_text("and then?")]

    def take() -> list[object]:
        taken = list(pending)
        pending.clear()
        return taken

    provider = MockProvider.text("first", "second")
    new = await agent_loop(
        [UserMessage.from_text("hi")],
        AgentContext(),
        loop_config(provider, get_follow_up_messages=take),
    )
    assert [m.role for m in new] == ["user", "assistant", "user", "assistant"]
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "second"


async def test_turn_limit_stops_with_a_marker(recorder: Recorder) -> None:
    provider = MockProvider([tool_reply(call("echo", f"c{i}", text=str(i))) for i in range(5)])
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[echo]),
        loop_config(provider, limits=ExecutionLimits(max_turns=2)),
        recorder,
    )
    assert len(provider.requests) == 2
    marker = new[-1]
    assert isinstance(marker, UserMessage)
    assert marker.text == "[Agent stopped: turn limit reached (2 turns)]"


async def test_token_limit_stops_with_a_marker() -> None:
    big = Usage(input=600, output=10)
    provider = MockProvider(
        [tool_reply(call("echo", f"c{i}", text=str(i)), usage=big) for i in range(5)]
    )
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[echo]),
        loop_config(provider, limits=ExecutionLimits(max_total_tokens=1000)),
    )
    assert len(provider.requests) == 2
    assert isinstance(new[-1], UserMessage)
    assert new[-1].text.startswith("[Agent stopped: token limit reached (1220 of 1000 tokens)")


async def test_time_limit_stops_with_a_marker() -> None:
    @tool
    async def nap() -> str:
        """Sleep."""
        await anyio.sleep(0.05)
        return "rested"

    provider = MockProvider([tool_reply(call("nap", f"c{i}")) for i in range(5)])
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[nap]),
        loop_config(
            provider, limits=ExecutionLimits(max_duration=0.01), max_repeated_tool_calls=None
        ),
    )
    assert len(provider.requests) == 1
    assert isinstance(new[-1], UserMessage) and new[-1].text.startswith(
        "[Agent stopped: time limit reached"
    )


async def test_rate_limits_are_retried_with_backoff_and_a_retry_event(recorder: Recorder) -> None:
    provider = MockProvider(
        [
            ProviderError(ErrorKind.RATE_LIMITED, "slow down", status=429, retry_after=0.001),
            MockReply(message=text_reply("partial then dead"), fail_after=1),
            text_reply("finally"),
        ]
    )
    new = await agent_loop(
        [UserMessage.from_text("hi")], AgentContext(), loop_config(provider), recorder
    )
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "finally"
    retries = recorder.of(ProviderRetry)
    assert [(r.attempt, r.kind) for r in retries] == [
        (1, ErrorKind.RATE_LIMITED),
        (2, ErrorKind.NETWORK),
    ]
    assert retries[0].delay_seconds == pytest.approx(0.001)
    # The attempt that started streaming is closed with an error before its retry event.
    types = recorder.types
    second_retry = types.index("provider_retry", types.index("provider_retry") + 1)
    assert types[second_retry - 1] == "message_end"
    failed_end = recorder.events[second_retry - 1]
    assert isinstance(failed_end.message, AssistantMessage)  # type: ignore[union-attr]
    assert failed_end.message.stop_reason is StopReason.ERROR  # type: ignore[union-attr]
    # Failed attempts never enter the history.
    assert [m.role for m in new] == ["user", "assistant"]


async def test_retry_exhaustion_ends_the_run_with_an_error() -> None:
    errors = [ProviderError(ErrorKind.NETWORK, f"reset {i}") for i in range(4)]
    provider = MockProvider(errors)
    new = await agent_loop([UserMessage.from_text("hi")], AgentContext(), loop_config(provider))
    reply = new[-1]
    assert isinstance(reply, AssistantMessage)
    assert reply.stop_reason is StopReason.ERROR
    assert reply.error_message == "NETWORK: reset 3"
    assert len(provider.requests) == 4


@pytest.mark.parametrize(
    "kind", [ErrorKind.AUTH, ErrorKind.API, ErrorKind.CONTEXT_OVERFLOW, ErrorKind.OTHER]
)
async def test_other_errors_are_not_retried(kind: ErrorKind, recorder: Recorder) -> None:
    provider = MockProvider([ProviderError(kind, "no"), text_reply("never")])
    new = await agent_loop(
        [UserMessage.from_text("hi")], AgentContext(), loop_config(provider), recorder
    )
    assert len(provider.requests) == 1
    assert isinstance(new[-1], AssistantMessage) and new[-1].stop_reason is StopReason.ERROR
    assert not recorder.of(ProviderRetry)


async def test_a_provider_raising_an_unexpected_exception_is_an_error_reply() -> None:
    class Broken:
        async def stream(self, config: object, sink: object) -> AssistantMessage:
            raise KeyError("boom")

    new = await agent_loop(
        [UserMessage.from_text("hi")],
        AgentContext(),
        AgentLoopConfig(provider=Broken(), model=MODEL),
    )
    reply = new[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ERROR
    assert reply.error_message == "OTHER: provider failed: KeyError: 'boom'"


def test_backoff_grows_exponentially_within_jitter() -> None:
    import random

    policy = RetryConfig(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter=0.2)
    rng = random.Random(7)
    for retries, base in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (9, 5.0)]:
        for _ in range(50):
            delay = policy.delay(retries, rng=rng)
            assert base * 0.8 <= delay <= base * 1.2
    assert policy.delay(0, retry_after=7.5) == 7.5
    assert policy.delay(0, retry_after=1_000) == policy.max_retry_after


async def test_cancel_during_backoff_ends_the_turn_aborted() -> None:
    provider = MockProvider(
        [ProviderError(ErrorKind.RATE_LIMITED, "wait", retry_after=30), text_reply("never")]
    )
    cancel = CancelToken()
    context = AgentContext()

    async def cancel_soon() -> None:
        await anyio.sleep(0.05)
        cancel.cancel()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_soon)
            new = await agent_loop(
                [UserMessage.from_text("hi")],
                context,
                loop_config(provider, retry=RetryConfig(max_retries=3)),
                cancel=cancel,
            )
    reply = new[1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ABORTED
    assert isinstance(new[-1], UserMessage) and new[-1].text == CANCELLED_MARKER
    assert len(provider.requests) == 1


async def test_cancel_mid_stream_keeps_the_streamed_text_as_aborted(recorder: Recorder) -> None:
    long = text_reply("x" * 400)
    provider = MockProvider([MockReply(message=long, delay=0.01, chunk_size=10)])
    cancel = CancelToken()

    def on_event(event: object) -> None:
        recorder(event)  # type: ignore[arg-type]
        if recorder.types.count("message_update") == 3:
            cancel.cancel()

    with anyio.fail_after(5):
        new = await agent_loop(
            [UserMessage.from_text("hi")],
            AgentContext(),
            loop_config(provider),
            on_event,
            cancel=cancel,
        )
    reply = new[1]
    assert isinstance(reply, AssistantMessage)
    assert reply.stop_reason is StopReason.ABORTED
    assert reply.text == "x" * 30
    assert isinstance(new[-1], UserMessage) and new[-1].text == CANCELLED_MARKER
    assert recorder.types[-1] == "agent_end"


async def test_cancel_mid_tool_gives_every_call_a_result_and_a_marker() -> None:
    started = anyio.Event()
    finished_cleanup: list[str] = []

    @tool
    async def forever(ctx: ToolContext) -> str:
        """Run until cancelled."""
        started.set()
        try:
            await anyio.sleep(60)
        finally:
            finished_cleanup.append(ctx.tool_call_id)
        return "unreachable"

    provider = MockProvider(
        [tool_reply(call("forever", "f1"), call("echo", "e1", text="quick")), text_reply("never")]
    )
    cancel = CancelToken()

    async def cancel_when_started() -> None:
        await started.wait()
        await anyio.sleep(0.01)
        cancel.cancel()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_when_started)
            new = await agent_loop(
                [UserMessage.from_text("go")],
                AgentContext(tools=[forever, echo]),
                loop_config(provider),
                cancel=cancel,
            )
    results = {r.tool_call_id: r for r in results_of(new)}
    assert results["f1"].is_error and results["f1"].text == "Tool execution cancelled."
    assert not results["e1"].is_error
    assert finished_cleanup == ["f1"]
    assert isinstance(new[-1], UserMessage) and new[-1].text == CANCELLED_MARKER
    assert len(provider.requests) == 1


async def test_a_cancel_never_loses_queued_steering() -> None:
    queue: list[object] = []
    cancel = CancelToken()

    @tool
    async def step() -> str:
        """A step during which the user both steers and cancels."""
        queue.append(UserMessage.from_text("steer me"))
        cancel.cancel()
        return "done"

    def take() -> list[object]:
        taken = list(queue)
        queue.clear()
        return taken

    provider = MockProvider([tool_reply(call("step")), text_reply("never")])
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[step]),
        loop_config(provider, get_steering_messages=take),
        cancel=cancel,
    )
    texts = [m.text for m in new if isinstance(m, UserMessage)]
    assert texts == ["go", "steer me", CANCELLED_MARKER]


async def test_a_refusal_ends_the_run_without_running_its_tools() -> None:
    ran: list[str] = []

    @tool
    async def danger() -> str:
        """Dangerous."""
        ran.append("yes")
        return "done"

    refusal = AssistantMessage(content=[call("danger")], stop_reason=StopReason.REFUSAL)
    provider = MockProvider([refusal, text_reply("never")])
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[danger]), loop_config(provider)
    )
    assert ran == []
    assert len(provider.requests) == 1
    assert isinstance(new[-1], AssistantMessage) and new[-1].stop_reason is StopReason.REFUSAL


async def test_identical_tool_calls_get_a_nudge_first_then_stop_the_loop() -> None:
    provider = MockProvider([tool_reply(call("echo", f"c{i}", text="same")) for i in range(6)])
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[echo]), loop_config(provider)
    )
    # Third identical round: not run, the model is told; fourth: not run, the run stops.
    assert len(provider.requests) == 4
    results = results_of(new)
    assert [r.is_error for r in results] == [False, False, True, True]
    assert results[2].text == "Not run: the same tool calls were repeated 3 times in a row."
    nudges = [m for m in new if isinstance(m, UserMessage) and m.text.startswith(LOOP_NUDGE_PREFIX)]
    assert len(nudges) == 1 and "echo" in nudges[0].text
    assert is_loop_injected(nudges[0])
    # The nudge reached the model right after the refused round.
    assert provider.requests[3].messages[-1].text == nudges[0].text  # type: ignore[union-attr]
    marker = new[-1]
    assert isinstance(marker, UserMessage) and marker.text.startswith(LOOP_ABORT_PREFIX)
    assert "echo" in marker.text


async def test_a_model_that_heeds_the_loop_nudge_goes_on() -> None:
    provider = MockProvider(
        [
            *(tool_reply(call("echo", f"c{i}", text="same")) for i in range(3)),
            tool_reply(call("echo", "c3", text="different")),
            text_reply("done"),
        ]
    )
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[echo]), loop_config(provider)
    )
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "done"
    assert [r.is_error for r in results_of(new)] == [False, False, True, False]


async def test_varying_arguments_are_not_a_loop() -> None:
    provider = MockProvider(
        [*(tool_reply(call("echo", f"c{i}", text=str(i))) for i in range(4)), text_reply("ok")]
    )
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[echo]), loop_config(provider)
    )
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "ok"


async def test_a_tool_that_raises_becomes_an_error_result_with_the_exception_text() -> None:
    @tool
    async def explode() -> str:
        """Fails."""
        raise RuntimeError("disk on fire")

    @tool
    async def refuse() -> str:
        """Fails politely."""
        raise ToolError("file not found: a.txt")

    provider = MockProvider([tool_reply(call("explode"), call("refuse")), text_reply("sorry")])
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[explode, refuse]), loop_config(provider)
    )
    results = results_of(new)
    assert [(r.text, r.is_error) for r in results] == [
        ("RuntimeError: disk on fire", True),
        ("file not found: a.txt", True),
    ]
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "sorry"


async def test_an_unknown_tool_is_an_error_result() -> None:
    provider = MockProvider([tool_reply(call("nope")), text_reply("ok")])
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[echo]), loop_config(provider)
    )
    assert results_of(new)[0].text == "Tool 'nope' not found. Available tools: echo."


async def test_malformed_tool_arguments_come_back_as_an_error_and_the_run_goes_on() -> None:
    provider = MockProvider([tool_reply(call("echo", text=5, extra=True)), text_reply("fixed")])
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[echo]), loop_config(provider)
    )
    result = results_of(new)[0]
    assert result.is_error
    assert result.text.startswith("invalid arguments for echo: ")
    assert "text: Input should be a valid string" in result.text
    assert "extra: Extra inputs are not permitted" in result.text
    assert isinstance(new[-1], AssistantMessage) and new[-1].text == "fixed"


async def test_long_tool_output_is_truncated_with_a_visible_marker() -> None:
    @tool
    async def spew() -> str:
        """Lots of output."""
        return "a" * 500 + "b" * 500

    provider = MockProvider([tool_reply(call("spew")), text_reply("ok")])
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[spew]),
        loop_config(provider, max_tool_output_chars=100),
    )
    text = results_of(new)[0].text
    assert text == "a" * 50 + "\n\n[... 900 characters truncated ...]\n\n" + "b" * 50


async def test_tool_progress_and_updates_become_events(recorder: Recorder) -> None:
    @tool
    async def chatty(ctx: ToolContext) -> str:
        """Reports progress."""
        ctx.progress("warming up")
        ctx.update(ToolResult.from_text("half"))
        return "all"

    provider = MockProvider([tool_reply(call("chatty")), text_reply("ok")])
    await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[chatty]), loop_config(provider), recorder
    )
    types = recorder.types
    start = types.index("tool_execution_start")
    assert types[start : start + 4] == [
        "tool_execution_start",
        "progress_message",
        "tool_execution_update",
        "tool_execution_end",
    ]
    end = recorder.of(ToolExecutionEnd)[0]
    assert end.result.text == "all"


async def test_turn_hooks_add_notes_to_the_request_only() -> None:
    async def async_hook(ctx: object) -> list[str]:
        return ["async note"]

    def sync_hook(ctx: object) -> list[str]:
        return ["sync note"]

    def broken_hook(ctx: object) -> list[str]:
        raise ValueError("bad hook")

    provider = MockProvider.text("ok")
    context = AgentContext()
    await agent_loop(
        [UserMessage.from_text("hi")],
        context,
        loop_config(provider, turn_hooks=[sync_hook, broken_hook, async_hook]),
    )
    assert list(provider.requests[0].turn_notes) == ["sync note", "async note"]
    assert all("note" not in getattr(m, "text", "") for m in context.messages)


async def test_input_filters_reject_before_anything_is_sent(recorder: Recorder) -> None:
    from yoagent.core.extension import Pass, Reject

    async def deny_secrets(text: str) -> object:
        return Reject("contains a secret") if "password" in text else Pass()

    provider = MockProvider.text("never")
    context = AgentContext()
    new = await agent_loop(
        [UserMessage.from_text("my password is x")],
        context,
        loop_config(provider, input_filters=[deny_secrets]),
        recorder,
    )
    assert new == []
    assert context.messages == []
    assert provider.requests == []
    assert [e.reason for e in recorder.of(InputRejected)] == ["contains a secret"]
    assert recorder.types == ["agent_start", "input_rejected", "agent_end"]


async def test_input_filter_warnings_are_appended_and_a_raising_filter_rejects() -> None:
    from yoagent.core.extension import Pass, Warn

    def warn(text: str) -> object:
        return Warn("note: be careful")

    def ok(text: str) -> object:
        return Pass()

    provider = MockProvider.text("fine")
    context = AgentContext()
    await agent_loop(
        [UserMessage.from_text("do it")], context, loop_config(provider, input_filters=[ok, warn])
    )
    first = context.messages[0]
    assert isinstance(first, UserMessage) and first.text == "do it\nnote: be careful"

    def broken(text: str) -> object:
        raise RuntimeError("filter down")

    rejected = Recorder()
    new = await agent_loop(
        [UserMessage.from_text("x")],
        AgentContext(),
        loop_config(MockProvider.text("no"), input_filters=[broken]),
        rejected,
    )
    assert new == []
    assert rejected.of(InputRejected)[0].reason == "input filter failed: RuntimeError: filter down"


async def test_continue_resumes_from_a_history_ending_in_a_user_message() -> None:
    provider = MockProvider.text("resumed")
    context = AgentContext(messages=[UserMessage.from_text("where were we")])
    new = await agent_loop_continue(context, loop_config(provider))
    assert [m.role for m in new] == ["assistant"]
    assert len(context.messages) == 2


async def test_continue_refuses_a_history_ending_in_an_assistant_reply() -> None:
    context = AgentContext(messages=[UserMessage.from_text("q"), text_reply("a")])
    with pytest.raises(ValueError, match="nothing to continue from"):
        await agent_loop_continue(context, loop_config(MockProvider.text("x")))


async def test_errored_replies_are_not_sent_back_to_the_model() -> None:
    provider = MockProvider([ProviderError(ErrorKind.API, "bad request")])
    context = AgentContext()
    await agent_loop([UserMessage.from_text("first")], context, loop_config(provider))
    provider.add(text_reply("ok"))
    await agent_loop([UserMessage.from_text("second")], context, loop_config(provider))
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["user", "user"]


async def test_the_mock_rejects_a_tool_result_without_its_call() -> None:
    provider = MockProvider.text("never")
    orphan = ToolResultMessage(tool_call_id="ghost", tool_name="echo", content=[])
    context = AgentContext(messages=[UserMessage.from_text("hi"), orphan])
    new = await agent_loop_continue(context, loop_config(provider))
    reply = new[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason is StopReason.ERROR
    assert "tool result 'ghost' has no matching tool call" in (reply.error_message or "")


async def test_usage_and_cost_are_recorded_per_turn() -> None:
    from yoagent.core import CostConfig, SessionStats

    priced = ModelConfig.mock()
    priced.cost = CostConfig(input=3.0, output=15.0)
    provider = MockProvider(
        [
            tool_reply(call("echo", text="x"), usage=Usage(input=1000, output=100)),
            text_reply("ok", usage=Usage(input=2000, output=10)),
        ]
    )
    stats = SessionStats()
    await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[echo]),
        AgentLoopConfig(provider=provider, model=priced),
        stats=stats,
    )
    assert stats.turns == 2
    assert stats.usage == Usage(input=3000, output=110)
    assert stats.cost_usd == pytest.approx((3000 * 3.0 + 110 * 15.0) / 1e6)


async def test_a_tool_error_can_carry_details_for_the_application() -> None:
    @tool
    async def failing() -> str:
        """Fails with an exit code."""
        raise ToolError("Exit code: 2\nstderr: boom", details={"exit_code": 2})

    provider = MockProvider([tool_reply(call("failing")), text_reply("ok")])
    new = await agent_loop(
        [UserMessage.from_text("go")], AgentContext(tools=[failing]), loop_config(provider)
    )
    result = results_of(new)[0]
    assert result.is_error and result.details == {"exit_code": 2}
    assert result.text == "Exit code: 2\nstderr: boom"


async def test_calls_that_finish_at_once_and_calls_that_wait_mix_in_one_batch() -> None:
    """Calls start eagerly in call order; the first that waits is driven in the loop's own
    task while the later ones run concurrently; a call may hold cancel scopes across waits."""
    order: list[str] = []

    @tool
    async def instant(label: str) -> str:
        """Answers at once."""
        order.append(f"start {label}")
        return label

    @tool
    async def waits(label: str, seconds: float) -> str:
        """Waits inside a cancel scope of its own."""
        order.append(f"start {label}")
        with anyio.fail_after(5):
            await anyio.sleep(seconds)
        order.append(f"end {label}")
        return label

    provider = MockProvider(
        [
            tool_reply(
                call("instant", "a", label="a"),
                call("waits", "b", label="b", seconds=0.5),
                call("instant", "c", label="c"),
                call("waits", "d", label="d", seconds=0.01),
            ),
            text_reply("ok"),
        ]
    )
    started = anyio.current_time()
    new = await agent_loop(
        [UserMessage.from_text("go")],
        AgentContext(tools=[instant, waits]),
        loop_config(provider),
    )
    assert anyio.current_time() - started < 3.0
    assert order[:4] == ["start a", "start b", "start c", "start d"]
    assert order.index("end d") < order.index("end b")  # d ran while b waited
    assert [r.text for r in results_of(new)] == ["a", "b", "c", "d"]
