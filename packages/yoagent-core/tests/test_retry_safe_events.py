"""RetrySafeEvents / retry_safe_events: the consumer-side filter for sinks that can only
append (a terminal, a log): a reply's deltas reach them only once its attempt is kept."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from core_helpers import FAST_RETRY, text_reply

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AgentStart,
    AssistantMessage,
    ErrorKind,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    MockProvider,
    MockReply,
    ModelConfig,
    ProgressMessage,
    ProviderError,
    ProviderRetry,
    RetryConfig,
    RunFailedError,
    StopReason,
    SubAgentEvent,
    TextContent,
    TextDelta,
    TurnEnd,
    TurnStart,
)
from yoagent.core.loop import RetrySafeEvents, retry_safe_events


class Terminal:
    """An append-only sink: it prints deltas as they come and cannot take them back, so
    it gives up when a retry follows text it printed (the pattern the filter spares)."""

    def __init__(self) -> None:
        self.printed = ""
        self.events: list[AgentEvent] = []
        self.gave_up = False

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            self.printed += event.delta.delta
        elif isinstance(event, ProviderRetry) and self.printed:
            self.gave_up = True

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]


def flaky_then(text: str) -> MockProvider:
    """A stream that dies after two deltas (retried), then ``text`` whole."""
    dying = MockReply(
        message=text_reply("Hello, wor"),
        chunk_size=4,
        fail_after=2,
        error=ProviderError(ErrorKind.NETWORK, "connection reset"),
    )
    return MockProvider([dying, text_reply(text)])


async def test_a_retried_attempt_never_reaches_the_sink() -> None:
    plain, safe = Terminal(), Terminal()
    agent = Agent.from_provider(flaky_then("Hello, world"), ModelConfig.mock(), retry=FAST_RETRY)
    await agent.prompt("hi", on_event=plain)
    assert plain.gave_up  # without the filter: "Hello, " printed, then a retry

    agent = Agent.from_provider(flaky_then("Hello, world"), ModelConfig.mock(), retry=FAST_RETRY)
    await agent.prompt("hi", on_event=RetrySafeEvents(safe))
    assert not safe.gave_up
    assert safe.printed == "Hello, world"
    ends = [e.message for e in safe.events if isinstance(e, MessageEnd)]
    assert all(m.stop_reason is StopReason.STOP for m in ends if isinstance(m, AssistantMessage))
    assert safe.types.count("provider_retry") == 1
    assert safe.types.index("provider_retry") < safe.types.index("message_update")


async def test_a_final_failure_is_released_as_its_start_and_end_without_deltas() -> None:
    dying = MockReply(
        message=text_reply("Hello, wor"),
        chunk_size=4,
        fail_after=2,
        error=ProviderError(ErrorKind.AUTH, "bad key"),
    )
    safe = Terminal()
    agent = Agent.from_provider(MockProvider([dying]), ModelConfig.mock(), retry=RetryConfig.none())
    with pytest.raises(RunFailedError):
        await agent.prompt("hi", on_event=RetrySafeEvents(safe))
    assert safe.printed == ""
    kinds = [t for t in safe.types if t not in ("message_start", "message_end")]
    assert kinds == ["agent_start", "turn_start", "turn_end", "agent_end"]
    failed = [e for e in safe.events if isinstance(e, MessageEnd)][-1].message
    assert isinstance(failed, AssistantMessage) and failed.stop_reason is StopReason.ERROR
    start_at = max(i for i, e in enumerate(safe.events) if isinstance(e, MessageStart))
    assert safe.types[start_at : start_at + 3] == ["message_start", "message_end", "turn_end"]


async def test_the_async_form_gives_the_same_events() -> None:
    by_sink = Terminal()
    agent = Agent.from_provider(flaky_then("Hello, world"), ModelConfig.mock(), retry=FAST_RETRY)
    await agent.prompt("hi", on_event=RetrySafeEvents(by_sink))

    agent = Agent.from_provider(flaky_then("Hello, world"), ModelConfig.mock(), retry=FAST_RETRY)
    streamed = Terminal()
    async with agent.stream("hi") as events:
        async for event in retry_safe_events(events):
            streamed(event)
    assert streamed.types == by_sink.types
    assert streamed.printed == "Hello, world"


# --- the state machine, event by event --------------------------------------------------------


def reply(stop: StopReason = StopReason.STOP) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text="hi")], stop_reason=stop)


def start() -> MessageStart:
    return MessageStart(message=AssistantMessage())


def delta(text: str) -> MessageUpdate:
    return MessageUpdate(delta=TextDelta(content_index=0, delta=text))


def retry() -> ProviderRetry:
    return ProviderRetry(
        attempt=1, max_retries=3, delay_seconds=0.0, kind=ErrorKind.NETWORK, error="x"
    )


def run(*events: AgentEvent) -> list[Any]:
    got: list[AgentEvent] = []
    sink = RetrySafeEvents(got.append)
    for event in events:
        sink(event)
    return got


def test_a_kept_attempt_is_released_whole_at_its_end() -> None:
    end = MessageEnd(message=reply())
    events = [start(), delta("h"), delta("i"), end]
    assert run(*events) == events


def test_other_events_overtake_a_held_attempt() -> None:
    progress = ProgressMessage(tool_call_id="c", tool_name="t", text="working")
    nested = SubAgentEvent(tool_call_id="c", tool_name="t", depth=1, event=delta("child"))
    first, update, end = start(), delta("h"), MessageEnd(message=reply())
    assert run(first, update, progress, nested, end) == [progress, nested, first, update, end]


def test_a_retried_attempt_is_dropped_down_to_its_retry() -> None:
    notice = retry()
    kept = [start(), delta("ok"), MessageEnd(message=reply())]
    got = run(start(), delta("ha"), MessageEnd(message=reply(StopReason.ERROR)), notice, *kept)
    assert got == [notice, *kept]


def test_an_aborted_end_releases_start_and_end_without_deltas() -> None:
    first, end = start(), MessageEnd(message=reply(StopReason.ABORTED))
    turn_end = TurnEnd(turn=1, message=end.message)  # type: ignore[arg-type]
    assert run(first, delta("ha"), end, turn_end) == [first, end, turn_end]


@pytest.mark.parametrize("cut_by", ["retry", "second start", "agent end", "close"])
def test_an_attempt_left_open_is_dropped_with_a_warning(
    cut_by: str, caplog: pytest.LogCaptureFixture
) -> None:
    got: list[AgentEvent] = []
    sink = RetrySafeEvents(got.append)
    follow: list[AgentEvent] = {
        "retry": [retry()],
        "second start": [start()],
        "agent end": [AgentEnd()],
        "close": [],
    }[cut_by]
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        sink(AgentStart())
        sink(start())
        sink(delta("lost"))
        for event in follow:
            sink(event)
        sink.close()
    assert "left open" in caplog.text
    assert not any(isinstance(e, MessageUpdate) for e in got)
    if cut_by in ("retry", "agent end"):
        assert got[-1] is follow[0]


def test_a_held_failure_is_released_when_the_stream_closes() -> None:
    first, end = start(), MessageEnd(message=reply(StopReason.ERROR))
    got: list[AgentEvent] = []
    sink = RetrySafeEvents(got.append)
    sink(first)
    sink(end)
    assert got == []
    sink.close()
    assert got == [first, end]


def test_turn_events_pass_and_the_filter_serves_one_run_after_another() -> None:
    turn, end = TurnStart(turn=1), MessageEnd(message=reply())
    first = run(AgentStart(), turn, start(), end, AgentEnd())
    assert [e.type for e in first] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "agent_end",
    ]


async def test_the_async_form_closes_at_the_end_of_the_stream() -> None:
    first, end = start(), MessageEnd(message=reply(StopReason.ERROR))

    async def source() -> Any:
        yield first
        yield end

    got = [event async for event in retry_safe_events(source())]
    assert got == [first, end]
    with anyio.fail_after(1):
        assert [e async for e in retry_safe_events(source())] == [first, end]
