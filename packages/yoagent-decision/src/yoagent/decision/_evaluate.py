"""How a decision model answers: one attempt (validated, timed, split when the backend does
not batch, checked, priced, recorded), and the fallback chain with one deadline."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import anyio

from yoagent.core import Usage

from ._answers import Answer, Evaluation, add_usage
from ._backend import DecisionBackend
from ._check import check_complete
from ._errors import DecisionError, DecisionErrorKind, FallbackAttempt
from ._pricing import Pricing, price
from ._questions import Capabilities, Request
from ._spend import record_decision

logger = logging.getLogger("yoagent.decision")

_NOT_SENT = (
    DecisionErrorKind.MISSING_API_KEY,
    DecisionErrorKind.INVALID,
    DecisionErrorKind.UNSUPPORTED,
)
"""Errors a backend raises before it sends anything (unless they carry a billed part)."""


@dataclass(slots=True, frozen=True)
class Member:
    """One model of a chain: its backend, the id it asks for, its pricing, and its own
    limit per attempt."""

    backend: DecisionBackend
    model: str
    pricing: Pricing
    attempt_timeout: float | None = None

    def limit(self, remaining: float) -> float:
        """How long one attempt may take when ``remaining`` seconds are left."""
        if self.attempt_timeout is None:
            return remaining
        return min(self.attempt_timeout, remaining)


def _add_cost(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else math.fsum((a, b))


def _merge(parts: Sequence[Evaluation]) -> Evaluation:
    """One evaluation from the parts of a split request (answers in part order)."""
    answers: dict[str, Answer] = {}
    usage: Usage | None = Usage()
    cost: float | None = 0.0
    for part in parts:
        answers.update(part.answers)
        usage = add_usage(usage, part.usage)
        cost = _add_cost(cost, part.cost_usd)
    return Evaluation(model=parts[0].model, answers=answers, usage=usage, cost_usd=cost)


def _sent_marker(error: DecisionError, request: Request) -> DecisionError:
    """``error`` marked as a request sent (no spend known) unless it is one raised before
    sending: it is still recorded as a request."""
    if error.billed is None and error.kind not in _NOT_SENT:
        error.with_billed(Evaluation(model=request.model, usage=Usage()))
    return error


async def _call(backend: DecisionBackend, request: Request) -> Evaluation:
    """The backend's answer to ``request``, checked. Any failure is a DecisionError carrying
    what the request was billed for (an exception of a custom backend is ``BACKEND``)."""
    try:
        evaluation = await backend.evaluate(request)
    except DecisionError as error:
        raise _sent_marker(error, request) from None
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as error:
        failure = DecisionError.backend(f"{type(error).__name__}: {error}")
        raise _sent_marker(failure, request) from error
    if not isinstance(evaluation, Evaluation):  # pyright: ignore[reportUnnecessaryIsInstance]
        failure = DecisionError.bad_response(f"the backend returned {type(evaluation).__name__}")
        raise _sent_marker(failure, request)
    try:
        return check_complete(request, evaluation)
    except DecisionError as error:
        raise error.with_billed(evaluation.billed_only()) from None


async def _split(
    backend: DecisionBackend, request: Request, concurrency: int, billed: list[Evaluation]
) -> Evaluation:
    """One request per question, at most ``concurrency`` in flight, merged in request order.

    Every part that comes back adds what it was billed for to ``billed`` (kept by the
    caller, so a timeout still records it). After the first failure no new part starts;
    those in flight finish; the error of the earliest failed question is raised.
    """
    parts: dict[int, Evaluation] = {}
    failures: dict[int, DecisionError] = {}
    limiter = anyio.CapacityLimiter(max(concurrency, 1))

    async def ask(index: int, qid: str) -> None:
        async with limiter:
            if failures:
                return
            single = request.with_questions({qid: request.questions[qid]})
            try:
                part = await _call(backend, single)
            except DecisionError as error:
                if error.billed is not None:
                    billed.append(error.billed)
                failures[index] = error
                return
            billed.append(part.billed_only())
            parts[index] = part

    async with anyio.create_task_group() as group:
        for index, qid in enumerate(request.questions):
            group.start_soon(ask, index, qid)
    if failures:
        raise failures[min(failures)]
    return _merge([parts[index] for index in sorted(parts)])


async def attempt(member: Member, request: Request, limit: float) -> Evaluation:
    """One attempt on ``member`` within ``limit`` seconds: validated against its
    capabilities, split when it does not batch, checked, and priced. A failure carries the
    priced spend already billed (``error.billed``), ``None`` when nothing was sent."""
    capabilities: Capabilities = member.backend.capabilities()
    request.validate(capabilities)
    billed: list[Evaluation] = []
    result: Evaluation | None = None
    failure: DecisionError | None = None
    with anyio.move_on_after(max(limit, 0.0)):
        try:
            if capabilities.batching or len(request.questions) == 1:
                result = await _call(member.backend, request)
            else:
                result = await _split(
                    member.backend, request, capabilities.max_concurrent_requests, billed
                )
        except DecisionError as error:
            failure = error
    if result is not None:
        return replace(result, cost_usd=price(member.pricing, member.backend, result))
    if failure is None:  # the time ran out: the request was sent, its spend unknown
        failure = DecisionError.timed_out(limit)
        if not billed:
            billed.append(Evaluation(model=request.model, usage=Usage()))
    if billed:  # a split request: everything its parts were billed for
        failure.with_billed(_merge(billed))
    spent = failure.billed
    if spent is not None:
        failure.with_billed(replace(spent, cost_usd=price(member.pricing, member.backend, spent)))
    raise failure


def record(result: Evaluation | DecisionError) -> None:
    """Record one attempt's spend (a success, or a failure that was sent)."""
    spent = result if isinstance(result, Evaluation) else result.billed
    if spent is not None:
        record_decision(spent.usage, spent.cost_usd)


async def run_one(member: Member, request: Request, seconds: float) -> Evaluation:
    """One model, no fallbacks: one attempt, recorded."""
    try:
        evaluation = await attempt(member, request, member.limit(seconds))
    except DecisionError as error:
        record(error)
        raise
    record(evaluation)
    return evaluation


async def run_chain(members: Sequence[Member], request: Request, seconds: float) -> Evaluation:
    """Try each member in turn within one overall limit of ``seconds``.

    A request invalid for any backend fails at once, nothing sent. A member whose
    capabilities refuse the request is skipped unsent. Any member error falls through to
    the next — except ``REFUSED``, which ends the chain. The clock, not the error kind,
    says when the time is spent (then ``TIMEOUT`` of the whole chain). When every member
    failed: ``ALL_FAILED`` listing each.
    """
    request.validate(Capabilities.unlimited())
    deadline = anyio.current_time() + seconds
    attempts: list[FallbackAttempt] = []
    for index, member in enumerate(members):
        asked = request if index == 0 else request.with_model(member.model)
        try:
            asked.validate(member.backend.capabilities())
        except DecisionError as error:
            logger.debug("decision fallback: skipped %s: %s", asked.model, error)
            attempts.append(FallbackAttempt(asked.model, error, was_sent=False))
            continue
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            raise DecisionError.timed_out(seconds)
        try:
            evaluation = await attempt(member, asked, member.limit(remaining))
        except DecisionError as error:
            record(error)
            if error.kind is DecisionErrorKind.REFUSED:
                raise
            if anyio.current_time() >= deadline:
                raise DecisionError.timed_out(seconds).with_billed(error.billed) from error
            if index + 1 < len(members):
                logger.warning(
                    "decision model %s failed; trying its fallback: %s", asked.model, error
                )
            attempts.append(FallbackAttempt(asked.model, error, was_sent=True))
            continue
        record(evaluation)
        return evaluation
    raise DecisionError.all_failed(attempts)
