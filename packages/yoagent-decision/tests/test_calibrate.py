"""calibrate: hand-computed figures on a fixed example set, and the invariants (hypothesis)."""

from __future__ import annotations

import math

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yoagent.decision import (
    CalibrationExample,
    ChoiceAnswer,
    DecisionError,
    DecisionModel,
    Evaluation,
    MockBackend,
    NoulAnswer,
    Request,
    ScoreAnswer,
    calibrate,
)
from yoagent.decision._calibrate import (
    Scored,
    build_report,
    negative_log_likelihood,
    suggest_temperature,
    temperature_grid,
)

Q = "Does this ask to delete data?"
# (state, p_true the model gives, the right answer)
NOULS = [
    ("rm -rf build/", 0.9, True),
    ("list src/", 0.8, False),
    ("what does f return?", 0.3, False),
    ("truncate users", 0.6, True),
    ("drop the cache table", 0.1, True),
]


def scripted(p_by_state: dict[str, float], model: str = "m") -> DecisionModel:
    def respond(request: Request) -> Evaluation:
        state = request.state
        assert isinstance(state, str)
        if state == "boom":
            raise DecisionError.http(500, "down")
        return Evaluation(model=request.model, answers={"q": NoulAnswer.of(p_by_state[state])})

    return DecisionModel.from_backend(MockBackend(respond), model)


async def test_noul_figures_match_the_hand_computed_ones() -> None:
    model = scripted({state: p for state, p, _ in NOULS})
    examples = [CalibrationExample.noul(state, Q, truth) for state, _, truth in NOULS]
    report = await calibrate(model, examples, target_precision=0.9)
    assert report.count == 5 and not report.errors and not report.skipped
    assert report.accuracy == pytest.approx(3 / 5)
    # (0.1² + 0.8² + 0.3² + 0.4² + 0.9²) / 5
    assert report.brier == pytest.approx(1.71 / 5)
    # bins 9: {0.9 right, 0.9 wrong}, 8: {0.8 wrong}, 7: {0.7 right}, 6: {0.6 right}
    assert report.ece == pytest.approx((2 * 0.4 + 0.8 + 0.3 + 0.4) / 5)
    counts = [b.count for b in report.bins]
    assert counts == [0, 0, 0, 0, 0, 0, 1, 1, 1, 2]
    assert report.bins[9].mean_confidence == pytest.approx(0.9)
    assert report.bins[9].accuracy == 0.5
    # yes at p >= 0.1 catches all 3 positives among 5: precision 0.6, recall 1, F1 0.75
    assert report.best_f1 is not None
    assert report.best_f1.threshold == 0.1
    assert (report.best_f1.precision, report.best_f1.recall) == (pytest.approx(0.6), 1.0)
    assert report.best_f1.f1 == pytest.approx(0.75)
    # the lowest threshold with precision >= 0.9: 0.9 (1 of 1 right, 1 of 3 found)
    point = report.precision_threshold
    assert point is not None and point.threshold == 0.9
    assert (point.precision, point.recall) == (1.0, pytest.approx(1 / 3))
    assert report.models == (("m", 5),) and not report.mixed_models
    assert report.suggested_temperature is not None


def test_the_log_loss_at_temperature_one_is_the_mean_negative_log_of_the_truth() -> None:
    scored = [Scored((p, 1 - p), 0 if truth else 1, "m", (p, truth)) for _, p, truth in NOULS]
    expected = -(math.log(0.9) + math.log(0.2) + math.log(0.7) + math.log(0.6) + math.log(0.1)) / 5
    assert negative_log_likelihood(scored, 1.0) == pytest.approx(expected)


def test_the_temperature_softens_an_overconfident_model_and_sharpens_an_underconfident_one() -> (
    None
):
    overconfident = [Scored((0.99, 0.01), i % 2, "m") for i in range(10)]  # right half the time
    assert (suggest_temperature(overconfident) or 0) > 1.0
    underconfident = [Scored((0.6, 0.4), 0, "m") for _ in range(10)]  # always right
    assert (suggest_temperature(underconfident) or 2) < 1.0
    calibrated = [Scored((0.5, 0.5), i % 2, "m") for i in range(10)]
    assert suggest_temperature(calibrated) == 1.0  # a tie goes to the temperature nearest 1


def test_a_zero_probability_stays_zero_and_a_confident_miss_is_finite() -> None:
    scored = [Scored((1.0, 0.0), 1, "m")]
    assert math.isfinite(negative_log_likelihood(scored, 1.0))
    assert suggest_temperature([]) is None


async def test_choice_and_score_brier_sums_over_every_outcome() -> None:
    def respond(request: Request) -> Evaluation:
        if "c" in request.questions["q"].instructions:  # type: ignore[operator]
            answer = ChoiceAnswer.of({"a": 0.7, "b": 0.2, "c": 0.1})
        else:
            answer = ScoreAnswer.of([0.1, 0.3, 0.6], ["lo", "mid", "hi"])
        return Evaluation(model=request.model, answers={"q": answer})

    model = DecisionModel.from_backend(MockBackend(respond), "m")
    choice = CalibrationExample.choice("s", "pick c", ["a", "b", "c"], "b")
    score = CalibrationExample.score("s", "rate", ["lo", "mid", "hi"], 2)
    report = await calibrate(model, [choice, score])
    # choice: 0.7² + 0.8² + 0.1² = 1.14; score: 0.1² + 0.3² + 0.4² = 0.26
    assert report.brier == pytest.approx((1.14 + 0.26) / 2)
    assert report.accuracy == 0.5
    assert report.best_f1 is None  # thresholds are for yes/no questions


async def test_examples_that_do_not_fit_are_skipped_and_failures_counted() -> None:
    model = scripted({"ok": 0.7})
    examples = [
        CalibrationExample.noul("ok", Q, True),
        CalibrationExample.choice("ok", Q, ["a", "b"], "zzz"),
        CalibrationExample.score("ok", Q, ["a", "b"], 5),
        CalibrationExample.score("ok", Q, ["a", "b"], True),  # a bool is not a level
        CalibrationExample.noul("boom", Q, False),
    ]
    report = await calibrate(model, examples)
    assert report.count == 1 and report.skipped == (1, 2, 3)
    assert [failure.index for failure in report.errors] == [4]
    assert "500" in str(report.errors[0].error)


async def test_nothing_evaluated_reports_none_rather_than_zero() -> None:
    report = await calibrate(scripted({}), [CalibrationExample.noul("boom", Q, True)])
    assert report.count == 0
    assert report.accuracy is report.brier is report.ece is report.suggested_temperature is None
    assert "0 evaluated (1 errors, 0 skipped)" in str(report)


async def test_a_fallback_chain_reports_mixed_models() -> None:
    def primary(request: Request) -> Evaluation:
        if request.state == "b":
            raise DecisionError.http(503, "down")
        return Evaluation(model="primary-1", answers={"q": NoulAnswer.of(0.9)})

    chain = DecisionModel.from_backend(MockBackend(primary), "p") | scripted({"b": 0.2}, "fb")
    examples = [CalibrationExample.noul(s, Q, True) for s in ("a", "b", "a")]
    report = await calibrate(chain, examples)
    assert report.models == (("primary-1", 2), ("fb", 1)) and report.mixed_models
    assert "mixed models: primary-1 ×2, fb ×1" in str(report)


async def test_examples_run_with_the_given_concurrency() -> None:
    in_flight = most = 0

    async def respond(request: Request) -> Evaluation:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await anyio.sleep(0.02)
        in_flight -= 1
        return Evaluation(model="m", answers={"q": NoulAnswer.of(0.5)})

    model = DecisionModel.from_backend(MockBackend(respond), "m")
    examples = [CalibrationExample.noul(str(i), Q, True) for i in range(9)]
    report = await calibrate(model, examples, concurrency=3)
    assert report.count == 9 and most == 3
    with pytest.raises(ValueError, match="at least 1"):
        await calibrate(model, examples, concurrency=0)
    with pytest.raises(ValueError, match="target_precision"):
        await calibrate(model, examples, target_precision=1.5)


nouls = st.lists(
    st.tuples(st.floats(min_value=0.0, max_value=1.0), st.booleans()), min_size=1, max_size=30
)


@settings(deadline=None)  # on a loaded machine an example's time is not what this checks
@given(nouls)
def test_every_figure_is_a_probability(examples: list[tuple[float, bool]]) -> None:
    """Accuracy, Brier (yes/no), ECE, every bin and every threshold point lie in [0, 1]."""
    scored = [Scored((p, 1 - p), 0 if yes else 1, "m", (p, yes)) for p, yes in examples]
    report = build_report(scored, target_precision=0.8)
    for figure in (report.accuracy, report.brier, report.ece):
        assert figure is not None and 0.0 <= figure <= 1.0 + 1e-12
    for b in report.bins:
        assert 0.0 <= b.mean_confidence <= 1.0 and 0.0 <= b.accuracy <= 1.0
    for point in (report.best_f1, report.precision_threshold):
        if point is not None:
            assert all(0.0 <= v <= 1.0 + 1e-12 for v in (point.precision, point.recall, point.f1))
    assert sum(b.count for b in report.bins) == len(examples)


@settings(deadline=None)  # 67 temperatures per example: slow under load, not wrong
@given(nouls)
def test_the_temperature_search_is_symmetric(examples: list[tuple[float, bool]]) -> None:
    """Swapping yes and no (p ↔ 1 − p, the truth with it) changes no temperature's log-loss,
    so the suggestion is the same; and the grid holds 1/T for every T."""
    scored = [Scored((p, 1 - p), 0 if yes else 1, "m") for p, yes in examples]
    mirrored = [Scored((1 - p, p), 1 if yes else 0, "m") for p, yes in examples]
    assert suggest_temperature(scored) == suggest_temperature(mirrored)
    grid = temperature_grid()
    assert all(any(math.isclose(t * u, 1.0) for u in grid) for t in grid)
    assert min(grid) == pytest.approx(1.05**-33) and max(grid) == pytest.approx(1.05**33)
