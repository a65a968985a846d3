"""How ``yoagent -p`` judges a run from its ``AgentEnd``, branch by branch: the exit code,
the answer, the problem and the summary's word, each exactly (``judge`` in-process)."""

from __future__ import annotations

from yoagent.cli.oneshot import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Outcome, judge
from yoagent.cli.problems import explain_failure
from yoagent.core import (
    Agent,
    AgentEnd,
    AgentMessage,
    AssistantMessage,
    MockProvider,
    RunEnd,
    RunOutcome,
    StopCause,
    StopReason,
    TextContent,
    UserMessage,
)
from yoagent.providers import models

ASKED = UserMessage.from_text("do it")


def reply(
    text: str = "", stop: StopReason = StopReason.STOP, error: str | None = None
) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], stop_reason=stop, error_message=error)


def ended(*messages: AgentMessage, outcome: RunOutcome | None = None) -> AgentEnd:
    if outcome is None:
        return AgentEnd(messages=[ASKED, *messages])
    return AgentEnd(messages=[ASKED, *messages], outcome=outcome)


def test_a_run_without_a_reply_says_the_model_was_not_called() -> None:
    assert judge(ended()) == Outcome(
        EXIT_FAILED, problem="the model was not called", reason="error"
    )


def test_an_aborted_reply_is_an_interruption() -> None:
    assert judge(ended(reply("half", StopReason.ABORTED))) == Outcome(
        EXIT_INTERRUPTED, problem="interrupted", reason="interrupted"
    )


def test_a_failed_call_says_what_failed() -> None:
    assert judge(ended(reply(stop=StopReason.ERROR, error="HTTP 500: boom"))) == Outcome(
        EXIT_FAILED, problem="HTTP 500: boom", reason="error"
    )
    assert judge(ended(reply(stop=StopReason.ERROR))) == Outcome(
        EXIT_FAILED, problem="the model call failed", reason="error"
    )


def test_a_failed_call_with_the_agent_is_explained_for_its_model() -> None:
    config = next(p for p in models.presets() if p.provider == "openai")
    agent = Agent(MockProvider(), config)
    failed = reply(stop=StopReason.ERROR, error="HTTP 500: boom")
    outcome = judge(ended(failed), agent)
    explained = explain_failure("HTTP 500: boom", config)
    assert "boom" in explained and config.id in explained
    assert outcome == Outcome(EXIT_FAILED, problem=explained, reason="error")


def test_a_refusal_keeps_what_the_model_said() -> None:
    assert judge(ended(reply("I will not", StopReason.REFUSAL))) == Outcome(
        EXIT_FAILED, answer="I will not", problem="the model refused", reason="refusal"
    )


def test_a_cancelled_run_is_an_interruption_even_after_a_whole_reply() -> None:
    outcome = RunOutcome(end=RunEnd.CANCELLED)
    assert judge(ended(reply("done"), outcome=outcome)) == Outcome(
        EXIT_INTERRUPTED, problem="interrupted", reason="interrupted"
    )


def test_a_stopped_run_says_why_in_the_markers_words_else_the_outcomes() -> None:
    marker = UserMessage.from_text("[Agent stopped: turn limit reached (1 turns)]")
    stopped = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.TURN_LIMIT, reason="turn limit")
    assert judge(ended(reply("half"), marker, outcome=stopped)) == Outcome(
        EXIT_FAILED, answer="half", problem=marker.text, reason="limit"
    )
    assert judge(ended(reply("half"), outcome=stopped)) == Outcome(
        EXIT_FAILED, answer="half", problem="turn limit", reason="limit"
    )
    unexplained = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.TURN_LIMIT)
    assert judge(ended(reply("half"), outcome=unexplained)) == Outcome(
        EXIT_FAILED, answer="half", problem="stopped", reason="limit"
    )


def test_a_completed_run_answers_with_the_last_reply() -> None:
    assert judge(ended(reply("first"), ASKED, reply("done"))) == Outcome(EXIT_OK, answer="done")
