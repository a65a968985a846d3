"""How an evaluation is made and read, at its edges: a split request's cost and
concurrency, what a failed or timed-out attempt carries, the chain's primary asking for
the request's own model, what a chain logs, the answers' computed fields, and the errors'
defaults. (Added from mutation testing: each pins a behaviour a surviving mutant
changed.)"""

from __future__ import annotations

import logging

import anyio
import pytest
from decision_helpers import never_answers

from yoagent.core import Usage
from yoagent.decision import (
    Capabilities,
    Choice,
    ChoiceAnswer,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Evaluation,
    MockBackend,
    Noul,
    NoulAnswer,
    Request,
    distribution_confidence,
)

QUESTIONS = {"a": Noul("a?"), "b": Noul("b?")}
ONE_AT_A_TIME = Capabilities(batching=False, max_concurrent_requests=1)


def costing(costs: dict[str, float | None], capabilities: Capabilities) -> MockBackend:
    """Answers each question with the cost given for it (a backend that knows its price)."""

    def respond(request: Request) -> Evaluation:
        [qid] = request.questions
        return Evaluation(
            model=request.model,
            answers={qid: NoulAnswer.of(0.5)},
            usage=Usage(input=1),
            cost_usd=costs[qid],
        )

    return MockBackend(respond, capabilities=capabilities)


# -- a split request ------------------------------------------------------------------------


async def test_a_split_requests_cost_is_its_parts_or_unknown_if_any_is() -> None:
    known = DecisionModel.from_backend(costing({"a": 0.25, "b": 0.5}, ONE_AT_A_TIME), "m")
    evaluation = await known.evaluate("s", QUESTIONS)
    assert (evaluation.cost_usd, evaluation.usage) == (0.75, Usage(input=2))
    for costs in ({"a": None, "b": 0.5}, {"a": 0.25, "b": None}):
        unknown = DecisionModel.from_backend(costing(costs, ONE_AT_A_TIME), "m")
        assert (await unknown.evaluate("s", QUESTIONS)).cost_usd is None


async def test_a_split_request_keeps_to_the_backends_concurrency() -> None:
    in_flight, most = 0, 0

    async def respond(request: Request) -> Evaluation:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await anyio.sleep(0.01)
        in_flight -= 1
        return Evaluation(model="m", answers={q: NoulAnswer.of(0.5) for q in request.questions})

    backend = MockBackend(respond, capabilities=ONE_AT_A_TIME)
    questions = {f"q{i}": Noul("?") for i in range(4)}
    await DecisionModel.from_backend(backend, "m").evaluate("s", questions)
    assert (backend.request_count, most) == (4, 1)


# -- what a failure carries -----------------------------------------------------------------


async def test_a_failure_that_was_sent_carries_an_empty_bill_under_the_asked_model() -> None:
    backend = MockBackend().push_error(DecisionError.http(500, "down"))
    with pytest.raises(DecisionError) as caught:
        await DecisionModel.from_backend(backend, "asked").evaluate("s", {"q": Noul("q?")})
    assert caught.value.billed == Evaluation(model="asked", usage=Usage())


async def test_a_chain_that_runs_out_of_time_carries_what_the_last_attempt_was_billed() -> None:
    chain = DecisionModel.from_backend(MockBackend(never_answers), "a").with_timeout(0.2) | (
        DecisionModel.from_backend(MockBackend(neutral=True), "b")
    )
    with pytest.raises(DecisionError) as caught:
        await chain.evaluate("s", {"q": Noul("q?")})
    assert caught.value.timeout == 0.2
    assert caught.value.billed == Evaluation(model="a", usage=Usage())


async def test_a_fallback_with_less_than_a_second_left_is_still_tried() -> None:
    failing = MockBackend().push_error(DecisionError.http(500, "down"))
    chain = DecisionModel.from_backend(failing, "a").with_timeout(0.5) | (
        DecisionModel.from_backend(MockBackend(neutral=True), "b")
    )
    assert (await chain.evaluate("s", {"q": Noul("q?")})).model == "b"


async def test_a_chains_primary_asks_for_the_requests_own_model() -> None:
    primary, fallback = MockBackend(neutral=True), MockBackend(neutral=True)
    chain = DecisionModel.from_backend(primary, "a") | DecisionModel.from_backend(fallback, "b")
    await chain.evaluate_request(Request("pinned-a", "s", {"q": Noul("q?")}))
    assert [r.model for r in primary.requests] == ["pinned-a"]


async def test_what_a_chain_logs(caplog: pytest.LogCaptureFixture) -> None:
    down = DecisionError.http(500, "down")
    small = MockBackend(capabilities=Capabilities(max_choice_options=2))
    chain = (
        DecisionModel.from_backend(MockBackend().push_error(down), "a")
        | DecisionModel.from_backend(small, "b")
        | DecisionModel.from_backend(MockBackend().push_error(down), "c")
    )
    with caplog.at_level(logging.DEBUG, logger="yoagent.decision"), pytest.raises(DecisionError):
        await chain.evaluate("s", {"q": Noul("q?"), "r": Choice("?", ["x", "y", "z"])})
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            logging.WARNING,
            "decision model a failed; trying its fallback: decision model returned HTTP 500: down",
        ),
        (
            logging.DEBUG,
            "decision fallback: skipped b: invalid decision request: questions.r.criteria: 3 "
            "options exceed the backend's limit of 2",
        ),
    ]


# -- answers' computed fields, and errors' defaults -----------------------------------------


def test_a_distributions_confidence_at_its_edges() -> None:
    assert distribution_confidence([1.0]) == 1.0
    assert distribution_confidence([]) == 1.0
    assert distribution_confidence([1.5, -0.5]) == 1.0  # clamped, however wrong the input


def test_a_choice_answers_computed_fields() -> None:
    assert ChoiceAnswer.of([]).choice == ""
    answer = ChoiceAnswer.of([("z", 0.2), ("y", 0.3), ("m", 0.3), ("a", 0.2)])
    assert answer.ranked() == [("y", 0.3), ("m", 0.3), ("z", 0.2), ("a", 0.2)]
    assert answer.probability("not an option") == 0.0


def test_an_evaluations_lookups() -> None:
    noul = NoulAnswer.of(0.7)
    evaluation = Evaluation(model="m", answers={"q": noul}, usage=Usage(input=3), cost_usd=0.1)
    assert evaluation.answer("q") is noul and evaluation.answer("other") is None
    assert evaluation.billed_only() == Evaluation(model="m", usage=Usage(input=3), cost_usd=0.1)


def test_errors_defaults() -> None:
    assert DecisionError.rate_limited(429).body == ""
    refused = DecisionError.refused("q")
    assert (refused.detail, str(refused)) == ("", "decision model refused to answer question `q`")
    assert DecisionError.refused("q", "said no").detail == "said no"


async def test_a_backend_returning_something_else_is_a_bad_response_that_was_sent() -> None:
    backend = MockBackend(lambda request: {"q": 0.5})  # type: ignore[arg-type, return-value]
    with pytest.raises(DecisionError) as caught:
        await DecisionModel.from_backend(backend, "asked").evaluate("s", {"q": Noul("q?")})
    assert caught.value.detail == "the backend returned dict"
    assert caught.value.billed == Evaluation(model="asked", usage=Usage())


async def test_an_answer_that_fails_the_check_keeps_what_it_was_billed() -> None:
    backend = MockBackend().push(Evaluation(model="served", usage=Usage(input=5), cost_usd=0.5))
    with pytest.raises(DecisionError) as caught:
        await DecisionModel.from_backend(backend, "m").evaluate("s", {"q": Noul("q?")})
    assert caught.value.detail == "answers.q: missing"
    assert caught.value.billed == Evaluation(model="served", usage=Usage(input=5), cost_usd=0.5)


async def test_an_attempt_timeout_shorter_than_a_second_is_kept() -> None:
    model = DecisionModel.from_backend(MockBackend(never_answers), "m").with_attempt_timeout(0.1)
    started = anyio.current_time()
    with pytest.raises(DecisionError) as caught:
        await model.evaluate("s", {"q": Noul("q?")})
    assert caught.value.timeout == 0.1
    assert anyio.current_time() - started < 0.8
    assert caught.value.billed == Evaluation(model="m", usage=Usage())


def test_errors_texts_with_and_without_their_parts() -> None:
    assert str(DecisionError.http(500, "")) == "decision model returned HTTP 500"
    assert str(DecisionError.refused("q", "said no")) == (
        "decision model refused to answer question `q`: said no"
    )
    assert (
        str(DecisionError(DecisionErrorKind.TIMEOUT)) == "decision model call timed out after 0.0s"
    )
    assert DecisionError(DecisionErrorKind.BACKEND).detail == ""
    billed = Evaluation(model="m", usage=Usage(input=1))
    assert DecisionError(DecisionErrorKind.BACKEND, "x", billed=billed).billed is billed


async def test_only_a_member_with_a_fallback_after_it_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = DecisionError.http(500, "down")
    chain = DecisionModel.from_backend(MockBackend().push_error(down), "a") | (
        DecisionModel.from_backend(MockBackend().push_error(down), "b")
    )
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"), pytest.raises(DecisionError):
        await chain.evaluate("s", {"q": Noul("q?")})
    assert [r.getMessage() for r in caplog.records] == [
        "decision model a failed; trying its fallback: decision model returned HTTP 500: down"
    ]
