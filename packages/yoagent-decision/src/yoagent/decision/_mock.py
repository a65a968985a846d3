"""MockBackend: scripted answers for tests, no network; it records every request."""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Mapping

from yoagent.core import Usage

from ._answers import Answer, ChoiceAnswer, Evaluation, NoulAnswer, ScoreAnswer
from ._errors import DecisionError
from ._questions import Capabilities, Choice, Noul, Request, Score
from ._systemone_wire import level_text

Responder = Callable[[Request], Evaluation | Awaitable[Evaluation]]
"""Computes an evaluation from a request (sync or async); raise DecisionError to fail."""


def neutral_evaluation(request: Request) -> Evaluation:
    """Every question answered as uncertainly as it can be (0.5; uniform)."""
    answers: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        match question:
            case Noul():
                answers[qid] = NoulAnswer.of(0.5)
            case Choice(items=items):
                answers[qid] = ChoiceAnswer.of([(name, 1.0 / len(items)) for name, _ in items])
            case Score(levels=levels):
                legend = [level_text(level) for level in levels]
                answers[qid] = ScoreAnswer.of([1.0 / len(levels)] * len(levels), legend)
    return Evaluation(model=request.model, answers=answers, usage=Usage())


class MockBackend:
    """A scripted backend that records every request it receives.

    Answers come from, in order: the queue (:meth:`push`, :meth:`push_error`), then the
    ``responder``, then — when ``neutral`` — the most uncertain answer to everything.
    With none of these a request fails with ``BAD_RESPONSE``. Reports itself local.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        neutral: bool = False,
        capabilities: Capabilities | None = None,
    ) -> None:
        self._queue: deque[Evaluation | DecisionError] = deque()
        self._responder = responder
        self._neutral = neutral
        self._capabilities = capabilities if capabilities is not None else Capabilities(local=True)
        self.requests: list[Request] = []
        """Every request received, in order."""

    @classmethod
    def nouls(
        cls,
        probabilities: Mapping[str, float],
        *,
        usage: Usage | None = None,
        capabilities: Capabilities | None = None,
    ) -> MockBackend:
        """A mock answering each yes/no question by id from ``probabilities`` (a question
        it has no probability for gets no answer, which the model reports as missing)."""

        def respond(request: Request) -> Evaluation:
            answers: dict[str, Answer] = {
                qid: NoulAnswer.of(probabilities[qid])
                for qid in request.questions
                if qid in probabilities
            }
            return Evaluation(model=request.model, answers=answers, usage=usage or Usage())

        return cls(respond, capabilities=capabilities)

    def push(self, evaluation: Evaluation) -> MockBackend:
        """Answer the next unscripted request with ``evaluation``."""
        self._queue.append(evaluation)
        return self

    def push_error(self, error: DecisionError) -> MockBackend:
        """Fail the next unscripted request with ``error``."""
        self._queue.append(error)
        return self

    def capabilities(self) -> Capabilities:
        """What this mock claims to answer (everything, by default)."""
        return self._capabilities

    @property
    def request_count(self) -> int:
        """How many requests arrived."""
        return len(self.requests)

    async def evaluate(self, request: Request) -> Evaluation:
        """The next scripted result for ``request``."""
        self.requests.append(request)
        if self._queue:
            scripted = self._queue.popleft()
            if isinstance(scripted, DecisionError):
                raise scripted
            return scripted
        if self._responder is not None:
            result = self._responder(request)
            return await result if inspect.isawaitable(result) else result
        if self._neutral:
            return neutral_evaluation(request)
        raise DecisionError.bad_response("MockBackend has no scripted answer for this request")

    def __repr__(self) -> str:
        return f"MockBackend(requests={self.request_count})"
