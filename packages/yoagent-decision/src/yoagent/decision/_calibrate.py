"""calibrate: measure a decision model on labelled examples of your own — accuracy, Brier
score, expected calibration error with its reliability bins, yes/no thresholds, and a
temperature suggestion — to choose a backend and thresholds for your data."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import anyio

from ._answers import argmax
from ._errors import DecisionError
from ._model import DecisionModel
from ._questions import Choice, Noul, Question, Score, Structured
from ._text import check_threshold

BINS = 10
NLL_FLOOR = 1e-6
"""The true outcome's rescaled probability is floored here: a confident miss costs a lot,
but not infinitely."""
TEMPERATURE_STEPS = 33
"""Temperatures searched: ``1.05**k`` for k in -33..33 (about 0.2 to 5.0, 1.0 included)."""


@dataclass(slots=True, frozen=True)
class CalibrationExample:
    """A state, a question about it, and the answer it should get: ``True``/``False`` for a
    Noul, an option name for a Choice, a level index (0 = lowest) for a Score. An
    ``expected`` that does not fit its question is skipped, not evaluated."""

    state: Structured
    question: Question
    expected: bool | str | int

    @classmethod
    def noul(
        cls, state: Structured, instructions: Structured, expected: bool
    ) -> CalibrationExample:
        """A yes/no example."""
        return cls(state, Noul(instructions), expected)

    @classmethod
    def choice(
        cls, state: Structured, instructions: Structured, options: Sequence[str], expected: str
    ) -> CalibrationExample:
        """A choice example: ``expected`` is the right option."""
        return cls(state, Choice(instructions, options), expected)

    @classmethod
    def score(
        cls,
        state: Structured,
        instructions: Structured,
        levels: Sequence[Structured],
        expected: int,
    ) -> CalibrationExample:
        """A score example: ``expected`` is the right level's index."""
        return cls(state, Score(instructions, levels), expected)

    def truth(self) -> int | None:
        """The index of the right outcome in the answer's distribution, if ``expected`` fits."""
        expected = self.expected
        match self.question:
            case Noul() if isinstance(expected, bool):
                return 0 if expected else 1
            case Choice(items=items) if isinstance(expected, str):
                names = [name for name, _ in items]
                return names.index(expected) if expected in names else None
            case Score(levels=levels) if isinstance(expected, int) and not isinstance(
                expected, bool
            ):
                return expected if 0 <= expected < len(levels) else None
            case _:
                return None


@dataclass(slots=True, frozen=True)
class ThresholdPoint:
    """The rule "yes when ``p_true ≥ threshold``" and how it did."""

    threshold: float
    precision: float
    recall: float
    f1: float


@dataclass(slots=True, frozen=True)
class ReliabilityBin:
    """Examples whose confidence fell in ``[lower, upper)`` (the last bin includes 1.0)."""

    lower: float
    upper: float
    count: int
    mean_confidence: float
    accuracy: float


@dataclass(slots=True, frozen=True)
class CalibrationError:
    """An example that failed to evaluate (by its position in the input)."""

    index: int
    error: DecisionError


@dataclass(slots=True, frozen=True, kw_only=True)
class CalibrationReport:
    """What :func:`calibrate` measured, over the ``count`` examples evaluated.

    "Confidence" is the probability of the answer given (a Noul at ``p_true = 0.3`` is a
    "no" with confidence 0.7). ``accuracy``, ``brier`` and ``ece`` are ``None`` when nothing
    was evaluated. Brier is ``(p_true − y)²`` for a Noul, the squared error summed over
    every option or level otherwise: calibrate one kind at a time for comparable figures.
    ``suggested_temperature`` minimises the log-loss of the expected answers with every
    distribution rescaled as ``p^(1/T)``: above 1 the model is overconfident.
    """

    count: int
    accuracy: float | None
    brier: float | None
    ece: float | None
    bins: tuple[ReliabilityBin, ...]
    best_f1: ThresholdPoint | None
    precision_threshold: ThresholdPoint | None
    suggested_temperature: float | None
    models: tuple[tuple[str, int], ...]
    """How many examples each model answered, most first (a fallback chain may mix)."""
    errors: tuple[CalibrationError, ...]
    skipped: tuple[int, ...]

    @property
    def mixed_models(self) -> bool:
        """Whether the figures describe more than one model."""
        return len(self.models) > 1

    def __str__(self) -> str:
        def num(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.3f}"

        lines = [
            f"{self.count} evaluated ({len(self.errors)} errors, {len(self.skipped)} skipped): "
            f"accuracy {num(self.accuracy)}, Brier {num(self.brier)}, ECE {num(self.ece)}"
        ]
        if self.mixed_models:
            lines.append("mixed models: " + ", ".join(f"{m} ×{n}" for m, n in self.models))
        if self.suggested_temperature is not None:
            lines.append(f"suggested temperature {self.suggested_temperature:.2f}")
        for label, point in (
            ("best-F1 threshold", self.best_f1),
            ("target-precision threshold", self.precision_threshold),
        ):
            if point is not None:
                lines.append(
                    f"{label} {point.threshold:.3f} (precision {point.precision:.3f}, "
                    f"recall {point.recall:.3f}, F1 {point.f1:.3f})"
                )
        return "\n".join(lines)


@dataclass(slots=True, frozen=True)
class Scored:
    """One evaluated example: its distribution, the true outcome's index, the model that
    answered, and for a Noul ``(p_true, expected)``."""

    probs: tuple[float, ...]
    truth: int
    model: str
    noul: tuple[float, bool] | None = None


async def calibrate(
    model: DecisionModel,
    examples: Iterable[CalibrationExample],
    *,
    concurrency: int = 4,
    target_precision: float | None = None,
) -> CalibrationReport:
    """Measure ``model`` on ``examples``, ``concurrency`` requests at a time (one per example).

    Failures and examples whose ``expected`` does not fit are counted, never fatal. With
    ``target_precision`` the report names the lowest yes/no threshold reaching it.
    """
    if concurrency < 1:
        raise ValueError(f"calibration concurrency must be at least 1, got {concurrency}")
    if target_precision is not None:
        check_threshold("target_precision", target_precision)
    runnable: list[tuple[int, CalibrationExample, int]] = []
    skipped: list[int] = []
    for index, example in enumerate(examples):
        truth = example.truth()
        if truth is None:
            skipped.append(index)
        else:
            runnable.append((index, example, truth))
    scored: dict[int, Scored] = {}
    errors: list[CalibrationError] = []
    limiter = anyio.CapacityLimiter(concurrency)

    async def run(index: int, example: CalibrationExample, truth: int) -> None:
        async with limiter:
            try:
                scored[index] = await _score(model, example, truth)
            except DecisionError as error:
                errors.append(CalibrationError(index, error))

    async with anyio.create_task_group() as group:
        for index, example, truth in runnable:
            group.start_soon(run, index, example, truth)
    ordered = [scored[index] for index in sorted(scored)]
    errors.sort(key=lambda failure: failure.index)
    return build_report(ordered, target_precision, errors, skipped)


async def _score(model: DecisionModel, example: CalibrationExample, truth: int) -> Scored:
    evaluation = await model.evaluate(example.state, {"q": example.question})
    noul, choice, score = evaluation.noul("q"), evaluation.choice("q"), evaluation.score("q")
    if noul is not None:
        p = noul.p_true
        return Scored((p, 1.0 - p), truth, evaluation.model, (p, truth == 0))
    if choice is not None:
        return Scored(tuple(p for _, p in choice.probabilities), truth, evaluation.model)
    if score is not None:
        return Scored(score.probabilities, truth, evaluation.model)
    raise DecisionError.bad_response("answers.q: missing")  # check_complete prevents this


def build_report(
    scored: Sequence[Scored],
    target_precision: float | None = None,
    errors: Sequence[CalibrationError] = (),
    skipped: Sequence[int] = (),
) -> CalibrationReport:
    """The figures for already-evaluated examples."""
    n = len(scored)
    counts = [0] * BINS
    confidence_sums = [0.0] * BINS
    rights = [0] * BINS
    correct = 0
    brier = 0.0
    for example in scored:
        top = argmax(example.probs)
        confidence = min(max(example.probs[top], 0.0), 1.0)
        right = top == example.truth
        correct += right
        if example.noul is not None:
            p, yes = example.noul
            brier += (p - (1.0 if yes else 0.0)) ** 2
        else:
            brier += sum(
                (p - (1.0 if k == example.truth else 0.0)) ** 2 for k, p in enumerate(example.probs)
            )
        index = min(int(confidence * BINS), BINS - 1)
        counts[index] += 1
        confidence_sums[index] += confidence
        rights[index] += right
    bins = tuple(
        ReliabilityBin(
            lower=i / BINS,
            upper=(i + 1) / BINS,
            count=counts[i],
            mean_confidence=confidence_sums[i] / counts[i] if counts[i] else 0.0,
            accuracy=rights[i] / counts[i] if counts[i] else 0.0,
        )
        for i in range(BINS)
    )
    ece = math.fsum(b.count / n * abs(b.accuracy - b.mean_confidence) for b in bins) if n else None
    models = Counter(example.model for example in scored)
    points = threshold_points([example.noul for example in scored if example.noul is not None])
    best_f1: ThresholdPoint | None = None
    for point in points:  # the lowest threshold on a tie
        if best_f1 is None or point.f1 > best_f1.f1:
            best_f1 = point
    precision_threshold = (
        next((p for p in points if p.precision >= target_precision), None)
        if target_precision is not None
        else None
    )
    return CalibrationReport(
        count=n,
        accuracy=correct / n if n else None,
        brier=brier / n if n else None,
        ece=ece,
        bins=bins,
        best_f1=best_f1,
        precision_threshold=precision_threshold,
        suggested_temperature=suggest_temperature(scored),
        models=tuple(sorted(models.items(), key=lambda item: (-item[1], item[0]))),
        errors=tuple(errors),
        skipped=tuple(skipped),
    )


def threshold_points(nouls: Sequence[tuple[float, bool]]) -> list[ThresholdPoint]:
    """Each distinct observed ``p_true`` (ascending) as a threshold, with its precision,
    recall and F1; thresholds that catch no true yes are left out."""
    positives = sum(1 for _, yes in nouls if yes)
    if positives == 0:
        return []
    points: list[ThresholdPoint] = []
    for threshold in sorted({p for p, _ in nouls if math.isfinite(p)}):
        true_pos = sum(1 for p, yes in nouls if yes and p >= threshold)
        false_pos = sum(1 for p, yes in nouls if not yes and p >= threshold)
        if true_pos == 0:
            continue
        precision = true_pos / (true_pos + false_pos)
        recall = true_pos / positives
        f1 = 2 * precision * recall / (precision + recall)
        points.append(ThresholdPoint(threshold, precision, recall, f1))
    return points


def negative_log_likelihood(scored: Sequence[Scored], temperature: float) -> float:
    """Mean log-loss of the true outcomes with every distribution rescaled to
    ``temperature`` (``p^(1/T)``, renormalised). A zero stays zero (no temperature lifts
    it); only the true outcome's rescaled probability is floored."""
    total = 0.0
    for example in scored:
        logits = [math.log(min(p, 1.0)) / temperature if p > 0 else None for p in example.probs]
        present = [logit for logit in logits if logit is not None]
        if not present:
            total += -math.log(NLL_FLOOR)
            continue
        top = max(present)
        norm = math.fsum(math.exp(logit - top) for logit in present)
        true_logit = logits[example.truth]
        q = 0.0 if true_logit is None else math.exp(true_logit - top) / norm
        total += -math.log(max(q, NLL_FLOOR))
    return total / len(scored)


def temperature_grid() -> list[float]:
    """The temperatures searched, 1.0 first, then outward in pairs ``1.05**±k``."""
    grid = [1.0]
    for k in range(1, TEMPERATURE_STEPS + 1):
        grid.extend((1.05**k, 1.05**-k))
    return grid


def suggest_temperature(scored: Sequence[Scored]) -> float | None:
    """The grid temperature with the lowest log-loss (the one closest to 1 on a tie)."""
    if not scored:
        return None
    best, best_loss = 1.0, negative_log_likelihood(scored, 1.0)
    for temperature in temperature_grid()[1:]:
        loss = negative_log_likelihood(scored, temperature)
        if loss < best_loss - 1e-12:
            best, best_loss = temperature, loss
    return best if math.isfinite(best_loss) else None
