"""Typed answers and the evaluation holding them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar, cast

from yoagent.core import Usage

T = TypeVar("T")


def distribution_confidence(probabilities: Sequence[float]) -> float:
    """Confidence of a distribution when the backend gives none: ``(n·p_max − 1)/(n − 1)``,
    clamped to [0, 1] — ``|2p − 1|`` for a yes/no answer. NaN when a probability is."""
    if any(not math.isfinite(p) for p in probabilities):
        return math.nan
    n = len(probabilities)
    if n < 2:
        return 1.0
    value = (n * max(probabilities) - 1.0) / (n - 1)
    return min(max(value, 0.0), 1.0)


def argmax(values: Sequence[float]) -> int:
    """Index of the largest value, the first on a tie."""
    best = 0
    for index, value in enumerate(values):
        if value > values[best]:
            best = index
    return best


@dataclass(slots=True, frozen=True, kw_only=True)
class NoulAnswer:
    """A yes/no answer: ``p_true`` is the probability of yes."""

    p_true: float
    confidence: float

    @classmethod
    def of(cls, p_true: float, confidence: float | None = None) -> NoulAnswer:
        """An answer with ``confidence`` computed (``|2p − 1|``) when not given."""
        if confidence is None:
            confidence = distribution_confidence((p_true, 1.0 - p_true))
        return cls(p_true=p_true, confidence=confidence)

    @property
    def p_false(self) -> float:
        """The probability of no."""
        return 1.0 - self.p_true

    @property
    def answer(self) -> bool:
        """Yes when ``p_true`` is at least 0.5."""
        return self.p_true >= 0.5


@dataclass(slots=True, frozen=True, kw_only=True)
class ChoiceAnswer:
    """One option picked, with a probability for every option (in option order)."""

    choice: str
    probabilities: tuple[tuple[str, float], ...]
    confidence: float

    @classmethod
    def of(
        cls,
        probabilities: Mapping[str, float] | Iterable[tuple[str, float]],
        *,
        choice: str | None = None,
        confidence: float | None = None,
    ) -> ChoiceAnswer:
        """An answer whose ``choice`` (the most probable, first on a tie) and ``confidence``
        are computed when not given."""
        pairs: tuple[tuple[str, float], ...]
        if isinstance(probabilities, Mapping):
            pairs = tuple(cast("Mapping[str, float]", probabilities).items())
        else:
            pairs = tuple(probabilities)
        values = [p for _, p in pairs]
        if choice is None:
            choice = pairs[argmax(values)][0] if pairs else ""
        if confidence is None:
            confidence = distribution_confidence(values)
        return cls(choice=choice, probabilities=pairs, confidence=confidence)

    def probability(self, option: str) -> float:
        """The probability of ``option`` (0.0 for a name that is not an option)."""
        return next((p for name, p in self.probabilities if name == option), 0.0)

    def ranked(self) -> list[tuple[str, float]]:
        """The options, most probable first (option order on a tie)."""
        return sorted(self.probabilities, key=lambda pair: -pair[1])


@dataclass(slots=True, frozen=True, kw_only=True)
class ScoreAnswer:
    """A rating: a probability per level (lowest first), the expected level and the legend."""

    score: float
    """The expected level, ``Σ i·pᵢ`` unless the backend said otherwise."""
    probabilities: tuple[float, ...]
    legend: tuple[str, ...]
    confidence: float

    @classmethod
    def of(
        cls,
        probabilities: Sequence[float],
        legend: Sequence[str],
        *,
        score: float | None = None,
        confidence: float | None = None,
    ) -> ScoreAnswer:
        """An answer whose ``score`` and ``confidence`` are computed when not given."""
        probs = tuple(probabilities)
        if score is None:
            score = math.fsum(index * p for index, p in enumerate(probs))
        if confidence is None:
            confidence = distribution_confidence(probs)
        return cls(score=score, probabilities=probs, legend=tuple(legend), confidence=confidence)

    @property
    def level(self) -> int:
        """The most probable level's index (the lowest on a tie)."""
        return argmax(self.probabilities)

    @property
    def label(self) -> str:
        """The legend text of the most probable level."""
        return self.legend[self.level]


Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer
"""One typed answer."""


@dataclass(slots=True, frozen=True, kw_only=True)
class Evaluation:
    """What a decision model answered: typed answers by question id, in request order.

    ``model`` is the id that answered (a versioned id when the API reports one). ``usage``
    is ``None`` when the backend reported none — a priced model then cannot price it.
    ``cost_usd`` is ``None`` when unpriced.
    """

    model: str
    answers: Mapping[str, Answer] = field(default_factory=dict[str, Answer])
    usage: Usage | None = None
    cost_usd: float | None = None

    def answer(self, qid: str) -> Answer | None:
        """The answer to question ``qid``, if there is one."""
        return self.answers.get(qid)

    def noul(self, qid: str) -> NoulAnswer | None:
        """The yes/no answer to ``qid``."""
        return _typed(self.answers.get(qid), NoulAnswer)

    def choice(self, qid: str) -> ChoiceAnswer | None:
        """The choice answer to ``qid``."""
        return _typed(self.answers.get(qid), ChoiceAnswer)

    def score(self, qid: str) -> ScoreAnswer | None:
        """The score answer to ``qid``."""
        return _typed(self.answers.get(qid), ScoreAnswer)

    def p_true(self, qid: str) -> float | None:
        """The probability of yes for the yes/no question ``qid``."""
        noul = self.noul(qid)
        return None if noul is None else noul.p_true

    def billed_only(self) -> Evaluation:
        """This evaluation's model, usage and cost, without its answers."""
        return replace(self, answers={})


def _typed(answer: Answer | None, kind: type[T]) -> T | None:
    return answer if isinstance(answer, kind) else None


def add_usage(a: Usage | None, b: Usage | None) -> Usage | None:
    """The sum, ``None`` (not reported) when either part was not reported."""
    if a is None or b is None:
        return None
    return a + b
