"""Decision spend: where it is recorded, and what counts as a request."""

from __future__ import annotations

import anyio
import pytest
from decision_helpers import SpendLog

from yoagent.core import CostConfig, Usage
from yoagent.decision import (
    DecisionError,
    DecisionModel,
    Evaluation,
    MockBackend,
    Noul,
    NoulAnswer,
    Request,
    recording_decision_spend,
)

MILLION_IN = Usage(input=1_000_000, output=10)


def model(usage: Usage | None = MILLION_IN) -> DecisionModel:
    def respond(request: Request) -> Evaluation:
        answers = {qid: NoulAnswer.of(0.5) for qid in request.questions}
        return Evaluation(model="m-1", answers=answers, usage=usage)

    return DecisionModel.from_backend(MockBackend(respond), "m")


async def test_each_call_records_its_usage_and_cost_with_the_current_recorder() -> None:
    spend = SpendLog()
    priced = model().with_cost(CostConfig(input=0.5, output=1.0))
    with recording_decision_spend(spend):
        await priced.noul("s", "q?")
        await priced.noul("s", "q?")
    await priced.noul("s", "outside any recorder")
    assert spend.records == [
        (Usage(input=1_000_000, output=10), pytest.approx(0.50001)),
        (Usage(input=1_000_000, output=10), pytest.approx(0.50001)),
    ]


async def test_unpriced_usage_is_recorded_as_unpriced() -> None:
    spend = SpendLog()
    with recording_decision_spend(spend):
        await model().noul("s", "q?")
    assert spend.records == [(Usage(input=1_000_000, output=10), None)]


async def test_a_recorder_reaches_into_tasks_started_inside_it() -> None:
    spend = SpendLog()
    with recording_decision_spend(spend):
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(model().noul, "s", "q?")
    assert len(spend.records) == 3


async def test_nested_recorders_restore_the_outer_one() -> None:
    outer, inner = SpendLog(), SpendLog()
    with recording_decision_spend(outer):
        with recording_decision_spend(inner):
            await model().noul("s", "q?")
        with recording_decision_spend(None):
            await model().noul("s", "q?")
        await model().noul("s", "q?")
    assert len(inner.records) == 1 and len(outer.records) == 1


async def test_a_request_never_sent_is_not_recorded() -> None:
    spend = SpendLog()
    with recording_decision_spend(spend):
        with pytest.raises(DecisionError):
            await DecisionModel.jev().noul("s", "q?")  # no key: nothing sent
        with pytest.raises(DecisionError):
            await model().evaluate("s", {})  # invalid: nothing sent
    assert spend.records == []


async def test_a_failed_request_that_was_sent_counts_with_no_usage() -> None:
    spend = SpendLog()
    backend = MockBackend().push_error(DecisionError.http(502, "bad gateway"))
    with recording_decision_spend(spend), pytest.raises(DecisionError):
        await DecisionModel.from_backend(backend, "m").with_cost(CostConfig(input=1)).noul("s", "q")
    assert spend.records == [(Usage(), 0.0)]


async def test_a_failing_recorder_never_changes_the_answer() -> None:
    def broken(usage: Usage, cost: float | None) -> None:
        raise RuntimeError("ledger closed")

    with recording_decision_spend(broken):
        answer = await model().noul("s", "q?")
    assert answer.p_true == 0.5


async def test_a_split_request_is_one_recorded_request() -> None:
    from yoagent.decision import Capabilities

    def respond(request: Request) -> Evaluation:
        (qid,) = request.questions
        return Evaluation(model="m", answers={qid: NoulAnswer.of(0.5)}, usage=Usage(input=5))

    backend = MockBackend(
        respond, capabilities=Capabilities(batching=False, max_concurrent_requests=2)
    )
    spend = SpendLog()
    with recording_decision_spend(spend):
        evaluation = await DecisionModel.from_backend(backend, "m").evaluate(
            "s", {f"q{i}": Noul("q?") for i in range(5)}
        )
    assert backend.request_count == 5
    assert evaluation.usage == Usage(input=25)
    assert spend.records == [(Usage(input=25), None)]


def test_a_split_request_and_a_timeout_work_under_trio() -> None:
    from yoagent.decision import Capabilities, DecisionErrorKind

    async def respond(request: Request) -> Evaluation:
        (qid,) = request.questions
        if qid == "slow":
            await anyio.sleep(30)
        return Evaluation(model="m", answers={qid: NoulAnswer.of(0.25)}, usage=Usage(input=5))

    split = Capabilities(batching=False, max_concurrent_requests=4)
    judge = DecisionModel.from_backend(MockBackend(respond, capabilities=split), "m")

    async def main() -> tuple[float | None, DecisionErrorKind, list[tuple[Usage, float | None]]]:
        evaluation = await judge.evaluate("s", {"a": Noul("a?"), "b": Noul("b?")})
        spend = SpendLog()
        with recording_decision_spend(spend):
            try:
                await judge.with_timeout(0.3).evaluate("s", {"a": Noul("a?"), "slow": Noul("s?")})
            except DecisionError as error:
                return evaluation.p_true("b"), error.kind, spend.records
        raise AssertionError("no timeout")

    p, kind, records = anyio.run(main, backend="trio")
    assert p == 0.25 and kind is DecisionErrorKind.TIMEOUT
    assert records == [(Usage(input=5), None)]
