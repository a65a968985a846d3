"""The one answer check every backend's answers pass (``check_complete``), at its exact
edges: each bound taken inclusively, a boolean or text where a number belongs, an option
nobody offered, and every refusal naming its question and field. (Added from mutation
testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import pytest

from yoagent.decision import (
    Choice,
    ChoiceAnswer,
    DecisionError,
    Evaluation,
    Noul,
    NoulAnswer,
    Request,
    Score,
    ScoreAnswer,
)
from yoagent.decision._answers import Answer
from yoagent.decision._check import EPSILON, check_complete

TEAM = Choice("Team?", ["billing", "sales"])
MOOD = Score("Mood?", ["calm", "angry"])


def checked(question: Noul | Choice | Score, answer: object) -> Evaluation:
    request = Request("m", "s", {"q": question})
    return check_complete(request, Evaluation(model="m", answers={"q": answer}))  # type: ignore[dict-item]


def refused(question: Noul | Choice | Score, answer: object) -> str:
    with pytest.raises(DecisionError) as caught:
        checked(question, answer)
    return caught.value.detail


def mood(probabilities: tuple[float, ...] = (0.5, 0.5), **fields: object) -> ScoreAnswer:
    values: dict[str, object] = {
        "score": 0.5,
        "probabilities": probabilities,
        "legend": ("calm", "angry"),
        "confidence": 0.0,
    }
    return ScoreAnswer(**(values | fields))  # type: ignore[arg-type]


# -- every bound is inclusive -----------------------------------------------------------------


@pytest.mark.parametrize("p", [-EPSILON, 1.0 + EPSILON])
def test_a_probability_at_the_rounding_margin_passes(p: float) -> None:
    answer = NoulAnswer(p_true=p, confidence=0.5)
    assert checked(Noul("q?"), answer).answers == {"q": answer}


@pytest.mark.parametrize("score", [0.0, 1.0, -EPSILON, 1.0 + EPSILON])
def test_a_score_at_either_end_of_the_scale_passes(score: float) -> None:
    answer = mood(score=score)
    assert checked(MOOD, answer).answers == {"q": answer}


def test_probabilities_summing_to_exactly_the_tolerance_pass() -> None:
    names = [f"o{i}" for i in range(25)]  # tolerance 25 × 0.005 = 0.125
    answer = ChoiceAnswer.of([(name, 0.045) for name in names])  # sum 1.125
    assert checked(Choice("Which?", names), answer).answers == {"q": answer}


# -- what is not a number, an option or a level -----------------------------------------------


def test_a_boolean_or_text_is_not_a_probability_or_a_score() -> None:
    assert refused(Noul("q?"), NoulAnswer(p_true=True, confidence=1.0)) == (
        "answers.q.p_true: True is not a number"
    )
    assert refused(Noul("q?"), NoulAnswer(p_true=0.5, confidence="high")) == (  # type: ignore[arg-type]
        "answers.q.confidence: 'high' is not a number"
    )
    assert refused(MOOD, mood(score="1")) == "answers.q.score: '1' is not a level between 0 and 1"


def test_an_option_nobody_offered_is_refused_even_with_every_option_present() -> None:
    answer = ChoiceAnswer.of([("billing", 0.5), ("sales", 0.5), ("legal", 0.0)])
    assert refused(TEAM, answer) == "answers.q.probabilities: 'legal' is not one of the options"
    two = ChoiceAnswer.of([("billing", 1.0), ("legal", 0.0), ("hr", 0.0)])
    assert refused(TEAM, two) == "answers.q.probabilities: 'legal' is not one of the options"


# -- every refusal names its question and field -----------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer", "detail"),
    [
        (
            Noul("q?"),
            NoulAnswer(p_true=1.5, confidence=0.5),
            "answers.q.p_true: 1.5 is not a probability in [0, 1]",
        ),
        (
            TEAM,
            ChoiceAnswer(
                choice="sales", probabilities=(("billing", 0.5), ("sales", 0.6)), confidence=0.2
            ),
            "answers.q.probabilities: the probabilities sum to 1.1000, not 1",
        ),
        (
            TEAM,
            ChoiceAnswer(
                choice="sales", probabilities=(("billing", 1.5), ("sales", -0.5)), confidence=0.2
            ),
            "answers.q.probabilities[0]: 1.5 is not a probability in [0, 1]",
        ),
        (
            TEAM,
            ChoiceAnswer(
                choice="sales", probabilities=(("billing", 0.5), ("sales", 0.5)), confidence=2.0
            ),
            "answers.q.confidence: 2.0 is not a probability in [0, 1]",
        ),
        (
            TEAM,
            ChoiceAnswer(
                choice="hr", probabilities=(("billing", 0.5), ("sales", 0.5)), confidence=0.0
            ),
            "answers.q.choice: 'hr' is not one of the options",
        ),
        (MOOD, mood((1.0,)), "answers.q.probabilities: 1 probabilities for 2 levels"),
        (MOOD, mood(legend=("calm",)), "answers.q.legend: 1 entries for 2 levels"),
        (MOOD, mood((0.7, 0.7)), "answers.q.probabilities: the probabilities sum to 1.4000, not 1"),
        (MOOD, mood(confidence=-1.0), "answers.q.confidence: -1.0 is not a probability in [0, 1]"),
        (MOOD, mood(score=1.5), "answers.q.score: 1.5 is not a level between 0 and 1"),
        (
            Noul("q?"),
            ChoiceAnswer.of({"billing": 1.0}),
            "answers.q: a ChoiceAnswer does not answer a noul question",
        ),
    ],
)
def test_each_refusal_names_the_question_and_field(
    question: Noul | Choice | Score, answer: Answer, detail: str
) -> None:
    assert refused(question, answer) == detail
