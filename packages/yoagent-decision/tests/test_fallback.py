"""Fallback chains: members tried in order within one deadline; skipped, refused, all failed."""

from __future__ import annotations

import time

import anyio
import pytest
from decision_helpers import SpendLog

from yoagent.core import CostConfig, Usage
from yoagent.decision import (
    Capabilities,
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Evaluation,
    MockBackend,
    Noul,
    NoulAnswer,
    QuestionKind,
    Request,
    recording_decision_spend,
)


def answering(p: float = 0.5, *, usage: Usage | None = None, delay: float = 0.0) -> MockBackend:
    async def respond(request: Request) -> Evaluation:
        if delay:
            await anyio.sleep(delay)
        answers = {qid: NoulAnswer.of(p) for qid in request.questions}
        return Evaluation(model=request.model, answers=answers, usage=usage or Usage(input=10))

    return MockBackend(respond)


def failing(error: DecisionError) -> MockBackend:
    async def respond(request: Request) -> Evaluation:
        raise error

    return MockBackend(respond)


async def test_the_first_member_that_answers_wins_and_each_asks_for_its_own_model() -> None:
    first, second, third = failing(DecisionError.http(500, "down")), answering(0.9), answering(0.1)
    chain = (
        DecisionModel.from_backend(first, "a")
        | DecisionModel.from_backend(second, "b")
        | DecisionModel.from_backend(third, "c")
    )
    evaluation = await chain.evaluate("s", {"q": Noul("q?")})
    assert evaluation.model == "b" and evaluation.p_true("q") == 0.9
    assert [r.model for r in first.requests] == ["a"]
    assert [r.model for r in second.requests] == ["b"]
    assert third.request_count == 0


def test_chains_flatten_and_the_primary_owns_model_and_capabilities() -> None:
    a, b, c, d = (DecisionModel.from_backend(MockBackend(), name) for name in "abcd")
    chain = (a | b).with_fallback(c | d)
    assert chain.model == "a" and chain.fallback_models == ("b", "c", "d")
    assert all(not fallback.fallbacks for fallback in chain.fallbacks)
    assert chain.capabilities() == a.capabilities()


async def test_a_request_invalid_everywhere_fails_at_once_with_nothing_sent() -> None:
    first, second = answering(), answering()
    chain = DecisionModel.from_backend(first, "a") | DecisionModel.from_backend(second, "b")
    with pytest.raises(DecisionError) as caught:
        await chain.choice("s", "Which?", ["only one"])
    assert caught.value.kind is DecisionErrorKind.INVALID
    assert first.request_count == second.request_count == 0


async def test_a_member_whose_limits_refuse_the_request_is_skipped_unsent() -> None:
    small = MockBackend(neutral=True, capabilities=Capabilities(max_choice_options=3))
    no_choice = MockBackend(
        neutral=True, capabilities=Capabilities(question_kinds=frozenset({QuestionKind.NOUL}))
    )
    big = MockBackend(neutral=True)
    spend = SpendLog()
    chain = (
        DecisionModel.from_backend(small, "small")
        | DecisionModel.from_backend(no_choice, "nouls-only")
        | DecisionModel.from_backend(big, "big")
    )
    with recording_decision_spend(spend):
        answer = await chain.choice("s", "Which?", ["a", "b", "c", "d"])
    assert answer.choice == "a"
    assert small.request_count == no_choice.request_count == 0 and big.request_count == 1
    assert len(spend.records) == 1  # skipped members are not recorded


async def test_all_failed_lists_every_member_in_order() -> None:
    small = MockBackend(neutral=True, capabilities=Capabilities(max_choice_options=3))
    chain = (
        DecisionModel.from_backend(failing(DecisionError.rate_limited(429)), "busy")
        | DecisionModel.from_backend(small, "small")
        | DecisionModel.from_backend(failing(DecisionError.bad_response("garbled")), "broken")
    )
    with pytest.raises(DecisionError) as caught:
        await chain.choice("s", "Which?", ["a", "b", "c", "d"])
    error = caught.value
    assert error.kind is DecisionErrorKind.ALL_FAILED
    assert [(a.model, a.was_sent) for a in error.attempts] == [
        ("busy", True),
        ("small", False),
        ("broken", True),
    ]
    assert str(error) == (
        "every decision model in the fallback chain failed: "
        "[busy] decision model rate limited or overloaded (HTTP 429); "
        "[small (skipped)] invalid decision request: questions.q.criteria: 4 options exceed "
        "the backend's limit of 3; "
        "[broken] decision model returned an unusable response: garbled"
    )
    assert error.retryable  # the rate limit may pass


async def test_all_failed_is_not_retryable_when_no_member_error_was() -> None:
    chain = DecisionModel.from_backend(
        failing(DecisionError.http(400, "bad")), "a"
    ) | DecisionModel.from_backend(failing(DecisionError.invalid("422")), "b")
    with pytest.raises(DecisionError) as caught:
        await chain.noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.ALL_FAILED and not caught.value.retryable


async def test_a_refusal_ends_the_chain() -> None:
    fallback = answering()
    chain = DecisionModel.from_backend(
        failing(DecisionError.refused("q", "declined")), "a"
    ) | DecisionModel.from_backend(fallback, "b")
    with pytest.raises(DecisionError) as caught:
        await chain.noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.REFUSED
    assert fallback.request_count == 0


async def test_a_members_invalid_or_missing_key_falls_through() -> None:
    chain = (
        DecisionModel.from_backend(failing(DecisionError.invalid("server said 422")), "a")
        | DecisionModel.from_backend(failing(DecisionError.missing_api_key("KEY")), "b")
        | DecisionModel.from_backend(answering(0.7), "c")
    )
    assert (await chain.noul("s", "q?")).p_true == 0.7


async def test_one_deadline_covers_the_whole_chain() -> None:
    slow, fallback = answering(delay=30), answering()
    chain = DecisionModel.from_backend(slow, "slow").with_timeout(0.5) | DecisionModel.from_backend(
        fallback, "fallback"
    )
    started = time.monotonic()
    with pytest.raises(DecisionError) as caught:
        await chain.noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.TIMEOUT and caught.value.timeout == 0.5
    assert time.monotonic() - started < 5
    assert fallback.request_count == 0  # no time was left for it


async def test_an_attempt_timeout_leaves_time_for_the_fallback() -> None:
    chain = DecisionModel.from_backend(answering(delay=30), "slow").with_timeout(
        10
    ).with_attempt_timeout(0.2) | DecisionModel.from_backend(answering(0.8), "fast")
    started = time.monotonic()
    evaluation = await chain.evaluate("s", {"q": Noul("q?")})
    assert evaluation.model == "fast" and time.monotonic() - started < 5


async def test_members_own_timeouts_are_ignored() -> None:
    chain = DecisionModel.from_backend(
        failing(DecisionError.http(500, "down")), "a"
    ) | DecisionModel.from_backend(answering(0.8, delay=0.3), "b").with_timeout(0.01)
    assert (await chain.noul("s", "q?")).p_true == 0.8


async def test_a_backends_own_timeout_error_does_not_end_the_chain() -> None:
    chain = DecisionModel.from_backend(
        failing(DecisionError.timed_out(1.0)), "a"
    ) | DecisionModel.from_backend(answering(0.8), "b")
    assert (await chain.noul("s", "q?")).p_true == 0.8


async def test_every_sent_attempt_is_recorded_and_each_member_prices_its_own() -> None:
    spend = SpendLog()
    primary = DecisionModel.from_backend(failing(DecisionError.http(500, "down")), "a").with_cost(
        CostConfig(input=1.0)
    )
    fallback = DecisionModel.from_backend(answering(usage=Usage(input=1_000_000)), "b").with_cost(
        CostConfig(input=3.0)
    )
    with recording_decision_spend(spend):
        evaluation = await (primary | fallback).evaluate("s", {"q": Noul("q?")})
    assert evaluation.cost_usd == pytest.approx(3.0)
    assert spend.records == [(Usage(), 0.0), (Usage(input=1_000_000), pytest.approx(3.0))]


async def test_a_custom_backend_that_raises_anything_is_a_backend_error() -> None:
    async def respond(request: Request) -> Evaluation:
        raise RuntimeError("bug in my backend")

    with pytest.raises(DecisionError) as caught:
        await DecisionModel.from_backend(MockBackend(respond), "m").noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BACKEND
    assert "RuntimeError: bug in my backend" in str(caught.value)


def test_from_backend_refuses_what_is_not_a_backend() -> None:
    with pytest.raises(TypeError, match="not a DecisionBackend"):
        DecisionModel.from_backend(object(), "m")  # type: ignore[arg-type]


def test_with_api_key_refuses_a_custom_backend() -> None:
    with pytest.raises(TypeError, match="built-in HTTP backends"):
        DecisionModel.from_backend(MockBackend(), "m").with_api_key("k")


async def test_the_choice_question_is_sent_as_asked() -> None:
    backend = MockBackend(neutral=True)
    await DecisionModel.from_backend(backend, "m").evaluate(
        "s", {"x": Choice("Which?", ["a", "b"]), "y": Noul("y?")}
    )
    assert list(backend.requests[0].questions) == ["x", "y"]
