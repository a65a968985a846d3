"""The one validation every backend's answers pass through (``check_complete``): kinds,
probabilities, options and levels, sums, and request order."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from ._answers import Answer, ChoiceAnswer, Evaluation, NoulAnswer, ScoreAnswer
from ._errors import DecisionError
from ._questions import Choice, Noul, Question, Request, Score

EPSILON = 1e-6
"""How far outside [0, 1] a probability or confidence may stray (float rounding)."""


def sum_tolerance(n: int) -> float:
    """How far from 1 a distribution of ``n`` entries may sum (TypeSafe rounds to 2 dp)."""
    return max(0.02, n * 0.005)


def check_complete(request: Request, evaluation: Evaluation) -> Evaluation:
    """``evaluation`` with exactly the asked questions' answers, in request order, each
    valid for its question; ``BAD_RESPONSE`` otherwise. Answers nobody asked for are
    dropped, so a merge of split requests cannot be overwritten by a stray one."""
    ordered: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        answer = evaluation.answers.get(qid)
        if answer is None:
            raise DecisionError.bad_response(f"answers.{qid}: missing")
        validate_answer(qid, question, answer)
        ordered[qid] = answer
    return replace(evaluation, answers=ordered)


def validate_answer(qid: str, question: Question, answer: object) -> None:
    """Raise ``BAD_RESPONSE`` unless ``answer`` is a valid answer to ``question``."""
    match question, answer:
        case Noul(), NoulAnswer():
            _check_probability(answer.p_true, f"answers.{qid}.p_true")
            _check_probability(answer.confidence, f"answers.{qid}.confidence")
        case Choice(), ChoiceAnswer():
            _check_choice(qid, question, answer)
        case Score(), ScoreAnswer():
            _check_score(qid, question, answer)
        case _:
            raise DecisionError.bad_response(
                f"answers.{qid}: a {type(answer).__name__} does not answer a "
                f"{question.kind} question"
            )


def _check_probability(value: object, where: str) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise DecisionError.bad_response(f"{where}: {value!r} is not a number")
    if not math.isfinite(value) or not -EPSILON <= value <= 1.0 + EPSILON:
        raise DecisionError.bad_response(f"{where}: {value!r} is not a probability in [0, 1]")


def _check_distribution(values: Sequence[float], where: str) -> None:
    for index, value in enumerate(values):
        _check_probability(value, f"{where}[{index}]")
    total = math.fsum(values)
    if abs(total - 1.0) > sum_tolerance(len(values)):
        raise DecisionError.bad_response(f"{where}: the probabilities sum to {total:.4f}, not 1")


def _check_choice(qid: str, question: Choice, answer: ChoiceAnswer) -> None:
    where = f"answers.{qid}.probabilities"
    options = question.names
    names = [name for name, _ in answer.probabilities]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise DecisionError.bad_response(f"{where}: {duplicated[0]!r} appears more than once")
    strays = [name for name in names if name not in options]
    if strays:
        raise DecisionError.bad_response(f"{where}: {strays[0]!r} is not one of the options")
    missing = [name for name in options if name not in names]
    if missing:
        raise DecisionError.bad_response(f"{where}: option {missing[0]!r} has no probability")
    _check_distribution([p for _, p in answer.probabilities], where)
    if answer.choice not in options:
        raise DecisionError.bad_response(
            f"answers.{qid}.choice: {answer.choice!r} is not one of the options"
        )
    _check_probability(answer.confidence, f"answers.{qid}.confidence")


def _check_score(qid: str, question: Score, answer: ScoreAnswer) -> None:
    n = len(question.levels)
    where = f"answers.{qid}.probabilities"
    if len(answer.probabilities) != n:
        raise DecisionError.bad_response(
            f"{where}: {len(answer.probabilities)} probabilities for {n} levels"
        )
    if len(answer.legend) != n:
        raise DecisionError.bad_response(
            f"answers.{qid}.legend: {len(answer.legend)} entries for {n} levels"
        )
    _check_distribution(answer.probabilities, where)
    score = answer.score
    if (
        not isinstance(score, int | float)  # pyright: ignore[reportUnnecessaryIsInstance]
        or not math.isfinite(score)
        or not -EPSILON <= score <= n - 1 + EPSILON
    ):
        raise DecisionError.bad_response(
            f"answers.{qid}.score: {score!r} is not a level between 0 and {n - 1}"
        )
    _check_probability(answer.confidence, f"answers.{qid}.confidence")
