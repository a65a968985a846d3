"""Requests checked against a backend's capabilities before sending; answers checked after."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    QuestionKind,
    Request,
    Score,
    ScoreAnswer,
    distribution_confidence,
)
from yoagent.decision._check import check_complete


def invalid(request: Request, capabilities: Capabilities | None = None) -> str:
    with pytest.raises(DecisionError) as caught:
        request.validate(capabilities or Capabilities())
    assert caught.value.kind in (DecisionErrorKind.INVALID, DecisionErrorKind.UNSUPPORTED)
    return str(caught.value)


@pytest.mark.parametrize(
    ("model", "state", "questions", "fragment"),
    [
        ("", "s", {"q": Noul("q?")}, "model: must not be empty"),
        ("m", "", {"q": Noul("q?")}, "state: must not be empty"),
        ("m", "  ", {"q": Noul("q?")}, "state: must not be empty"),
        ("m", 42, {"q": Noul("q?")}, "state: must be a string, an object or an array"),
        ("m", None, {"q": Noul("q?")}, "state: must be a string"),
        ("m", "s", {}, "at least one question"),
        ("m", "s", {" ": Noul("q?")}, "a question id must not be empty"),
        ("m", "s", {"q": Noul("")}, "questions.q.instructions: must not be empty"),
        ("m", "s", {"q": Noul("q?", if_true="yes")}, "both if_true and if_false"),
        ("m", "s", {"q": Noul("q?", if_true="", if_false="no")}, "criteria.true: must not be"),
        ("m", "s", {"q": Choice("c?", ["a"])}, "at least 2 options, got 1"),
        ("m", "s", {"q": Choice("c?", ["a", "a"])}, "duplicate option 'a'"),
        ("m", "s", {"q": Choice("c?", ["a", " "])}, "an option name is empty"),
        ("m", "s", {"q": Choice("c?", {"a": None, "b": 3})}, "criteria.b: must be a string"),
        ("m", "s", {"q": Score("s?", ["one"])}, "at least 2 levels, got 1"),
        ("m", "s", {"q": Score("s?", [str(i) for i in range(11)])}, "11 levels exceed"),
        ("m", "s", {"q": Score("s?", ["a", ""])}, "criteria[1]: must not be empty"),
    ],
)
def test_a_malformed_request_is_invalid(
    model: str, state: Any, questions: dict[str, Any], fragment: str
) -> None:
    assert fragment in invalid(Request(model, state, questions))


def test_structured_state_and_instructions_are_accepted() -> None:
    Request("m", {"a": 1}, {"q": Noul({"ask": "x", "about": "`a`"})}).validate(Capabilities())
    Request("m", [1, 2], {"q": Score(["rate"], [{"lo": 1}, {"hi": 2}])}).validate(Capabilities())


def test_options_and_levels_are_checked_against_the_backends_limits() -> None:
    capabilities = Capabilities(max_choice_options=3, max_score_levels=4)
    assert "4 options exceed the backend's limit of 3" in invalid(
        Request("m", "s", {"q": Choice("c?", list("abcd"))}), capabilities
    )
    assert "5 levels exceed the backend's limit of 4" in invalid(
        Request("m", "s", {"q": Score("s?", list("abcde"))}), capabilities
    )
    Request("m", "s", {"q": Choice("c?", ["a", "b", "c"])}).validate(capabilities)


def test_a_kind_the_backend_does_not_answer_is_unsupported() -> None:
    capabilities = Capabilities(question_kinds=frozenset({QuestionKind.NOUL}))
    with pytest.raises(DecisionError) as caught:
        Request("m", "s", {"q": Score("s?", ["a", "b"])}).validate(capabilities)
    assert caught.value.kind is DecisionErrorKind.UNSUPPORTED
    assert "score questions are not supported" in str(caught.value)


def test_the_systemone_limit_is_two_hundred_fifty_five_options() -> None:
    options = [f"o{i}" for i in range(256)]
    assert "256 options exceed" in invalid(
        Request("m", "s", {"q": Choice("c?", options)}), Capabilities.systemone()
    )
    Request("m", "s", {"q": Choice("c?", options[:255])}).validate(Capabilities.systemone())


def test_token_limits_are_estimated_at_four_bytes_per_token() -> None:
    capabilities = Capabilities(max_request_tokens=100, max_state_question_tokens=60)
    fits = Request("m", "x" * 150, {"q": Noul("q?")})  # ~38 + ~9 tokens
    fits.validate(capabilities)
    too_long_state = Request("m", "x" * 240, {"q": Noul("q?")})
    assert "state plus the longest question exceeds the backend's 60-token limit" in invalid(
        too_long_state, capabilities
    )
    many = Request("m", "x" * 150, {f"q{i}": Noul("q" * 40) for i in range(5)})
    assert "exceeds the backend's 100-token request limit" in invalid(many, capabilities)


def test_multibyte_text_counts_by_bytes() -> None:
    capabilities = Capabilities(max_state_question_tokens=40)
    Request("m", "a" * 100, {"q": Noul("q?")}).validate(capabilities)
    assert "limit" in invalid(Request("m", "é" * 100, {"q": Noul("q?")}), capabilities)


async def test_an_invalid_request_sends_nothing() -> None:
    backend = MockBackend(neutral=True)
    with pytest.raises(DecisionError):
        await DecisionModel.from_backend(backend, "m").evaluate("", {"q": Noul("q?")})
    assert backend.request_count == 0


def test_a_string_is_not_a_list_of_options_or_levels() -> None:
    with pytest.raises(TypeError):
        Choice("c?", "ab")
    with pytest.raises(TypeError):
        Score("s?", "ab")


# --- answers --------------------------------------------------------------------------------


def complete(question: Any, answer: Any) -> Evaluation:
    request = Request("m", "s", {"q": question})
    return check_complete(request, Evaluation(model="m", answers={"q": answer}))


@pytest.mark.parametrize(
    ("question", "answer", "fragment"),
    [
        (Noul("q?"), ChoiceAnswer.of({"a": 1.0}), "does not answer a noul question"),
        (Noul("q?"), NoulAnswer(p_true=math.nan, confidence=0.0), "not a probability"),
        (Noul("q?"), NoulAnswer(p_true=0.5, confidence=math.inf), "confidence"),
        (Noul("q?"), NoulAnswer(p_true=0.5, confidence=1.2), "confidence"),
        (
            Choice("c?", ["a", "b"]),
            ChoiceAnswer(choice="a", probabilities=(("a", 0.5), ("a", 0.5)), confidence=0.0),
            "'a' appears more than once",
        ),
        (Choice("c?", ["a", "b"]), ChoiceAnswer.of({"a": 0.5, "b": 0.47}), "sum to 0.9700"),
        (
            Score("s?", ["lo", "hi"]),
            ScoreAnswer.of([0.5, 0.5], ["lo"]),
            "1 entries for 2 levels",
        ),
        (
            Score("s?", ["lo", "hi"]),
            ScoreAnswer.of([0.5, 0.5], ["lo", "hi"], score=-1.0),
            "not a level between 0 and 1",
        ),
        (
            Score("s?", ["lo", "hi"]),
            ScoreAnswer.of([0.5, math.nan], ["lo", "hi"]),
            "not a probability",
        ),
    ],
)
def test_every_backends_answers_pass_one_check(question: Any, answer: Any, fragment: str) -> None:
    with pytest.raises(DecisionError) as caught:
        complete(question, answer)
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert fragment in str(caught.value)


def test_the_sum_tolerance_grows_with_the_number_of_entries() -> None:
    options = [f"o{i}" for i in range(10)]
    sloppy = dict.fromkeys(options, 0.1) | {"o0": 0.14}  # sums to 1.04 (10 × 0.005 = .05)
    complete(Choice("c?", options), ChoiceAnswer.of(sloppy))
    with pytest.raises(DecisionError):
        complete(Choice("c?", ["a", "b"]), ChoiceAnswer.of({"a": 0.5, "b": 0.53}))


def test_answers_come_back_in_request_order() -> None:
    request = Request("m", "s", {"b": Noul("b?"), "a": Noul("a?")})
    evaluation = Evaluation(
        model="m", answers={"a": NoulAnswer.of(0.1), "x": NoulAnswer.of(1), "b": NoulAnswer.of(0.2)}
    )
    assert list(check_complete(request, evaluation).answers) == ["b", "a"]


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=2, max_size=12))
def test_computed_confidence_is_a_probability(weights: list[float]) -> None:
    """For any distribution, (n·p_max − 1)/(n − 1) clamped is in [0, 1], 0 for uniform."""
    total = sum(weights)
    probs = [w / total for w in weights] if total > 0 else [1 / len(weights)] * len(weights)
    confidence = distribution_confidence(probs)
    assert 0.0 <= confidence <= 1.0
    if max(probs) - min(probs) < 1e-12:
        assert confidence == pytest.approx(0.0, abs=1e-9)


def test_noul_confidence_is_the_distance_from_a_coin_flip() -> None:
    for p in (0.0, 0.2, 0.5, 0.9, 1.0):
        assert NoulAnswer.of(p).confidence == pytest.approx(abs(2 * p - 1))
