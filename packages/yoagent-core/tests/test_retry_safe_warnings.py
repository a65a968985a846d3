"""RetrySafeEvents' warnings, word for word and only when an attempt is dropped: what cut
it (a second start, a retry, the end of the stream) and how many deltas went with it; an
update outside any attempt passes; a dropped attempt's deltas never join the next one."""

from __future__ import annotations

import logging

import pytest

from yoagent.core import (
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    ErrorKind,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProviderRetry,
    StopReason,
    TextContent,
    TextDelta,
)
from yoagent.core.loop import RetrySafeEvents


def start() -> MessageStart:
    return MessageStart(message=AssistantMessage())


def delta(text: str) -> MessageUpdate:
    return MessageUpdate(delta=TextDelta(content_index=0, delta=text))


def end() -> MessageEnd:
    return MessageEnd(message=AssistantMessage(content=[TextContent(text="hi")]))


def retry() -> ProviderRetry:
    return ProviderRetry(
        attempt=1, max_retries=3, delay_seconds=0.0, kind=ErrorKind.NETWORK, error="x"
    )


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def feed(*events: AgentEvent) -> tuple[list[AgentEvent], RetrySafeEvents]:
    got: list[AgentEvent] = []
    sink = RetrySafeEvents(got.append)
    for event in events:
        sink(event)
    return got, sink


def test_attempts_kept_one_after_another_warn_of_nothing(caplog: pytest.LogCaptureFixture) -> None:
    events: list[AgentEvent] = [start(), delta("a"), end(), start(), delta("b"), end(), AgentEnd()]
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        got, sink = feed(*events)
        sink.close()
    assert got == events
    assert warnings(caplog) == []


def test_an_update_outside_any_attempt_passes_at_once() -> None:
    stray = delta("stray")
    got, _ = feed(stray)
    assert got == [stray]
    first = [start(), delta("a"), end()]
    got, _ = feed(*first, stray)
    assert got == [*first, stray]


def test_a_second_start_drops_the_open_attempt_and_its_deltas(
    caplog: pytest.LogCaptureFixture,
) -> None:
    second = [start(), delta("kept"), end()]
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        got, _ = feed(start(), delta("x"), delta("y"), *second)
    assert got == second
    assert warnings(caplog) == [
        "retry-safe events: a reply left open by a second message start was dropped (2 deltas)"
    ]


def test_a_retry_drops_the_open_attempt_in_these_words(caplog: pytest.LogCaptureFixture) -> None:
    notice = retry()
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        got, _ = feed(start(), delta("x"), notice)
    assert got == [notice]
    assert warnings(caplog) == [
        "retry-safe events: a reply left open by a retry was dropped (1 deltas)"
    ]


def test_the_end_of_the_stream_drops_the_open_attempt_in_these_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        got, sink = feed(start())
        sink.close()
    assert got == []
    assert warnings(caplog) == [
        "retry-safe events: a reply left open by the end of the stream was dropped (0 deltas)"
    ]


def test_a_failed_attempt_then_the_end_is_released_without_its_deltas() -> None:
    first = start()
    failed = MessageEnd(message=AssistantMessage(stop_reason=StopReason.ERROR))
    got, sink = feed(first, delta("x"), failed)
    sink.close()
    assert got == [first, failed]
