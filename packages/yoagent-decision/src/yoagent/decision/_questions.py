"""Typed questions (Noul, Choice, Score), the request carrying them, and what a backend can
answer (Capabilities), with the checks a request passes before anything is sent."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ._errors import DecisionError

Structured = str | dict[str, Any] | list[Any]
"""Text, or JSON (an object or an array): what a state, instructions and criteria may be."""

BYTES_PER_TOKEN = 4
"""The client-side token estimate: 4 bytes of compact JSON per token."""


class QuestionKind(StrEnum):
    """The three question types; the value is the SystemOne wire name."""

    NOUL = "noul"
    """Yes/no, answered with the probability of yes. ("Noul" is SystemOne's word.)"""
    CHOICE = "choice"
    """One option out of 2 or more, answered with a distribution over the options."""
    SCORE = "score"
    """A rating on an ordered scale of 2 to 10 levels, lowest first."""


@dataclass(slots=True, frozen=True)
class Noul:
    """A yes/no question, optionally with what a yes (``if_true``) and a no mean."""

    instructions: Structured
    if_true: Structured | None = None
    if_false: Structured | None = None

    @property
    def kind(self) -> QuestionKind:
        """``QuestionKind.NOUL``."""
        return QuestionKind.NOUL


@dataclass(slots=True, frozen=True)
class Choice:
    """Pick one of ``options``: names, or a mapping of name to a description (or ``None``).

    Option order is kept on the wire and in the answer.
    """

    instructions: Structured
    options: Sequence[str] | Mapping[str, Structured | None]
    items: tuple[tuple[str, Structured | None], ...] = field(init=False, repr=False)
    """The options as ``(name, description or None)`` pairs, in order."""

    def __post_init__(self) -> None:
        if isinstance(self.options, str):
            raise TypeError("Choice options must be a list of names or a mapping, not one string")
        if isinstance(self.options, Mapping):
            items = tuple((str(name), desc) for name, desc in self.options.items())
        else:
            items = tuple((name, None) for name in self.options)
        object.__setattr__(self, "items", items)

    @property
    def kind(self) -> QuestionKind:
        """``QuestionKind.CHOICE``."""
        return QuestionKind.CHOICE

    @property
    def names(self) -> tuple[str, ...]:
        """The option names, in order."""
        return tuple(name for name, _ in self.items)


@dataclass(slots=True, frozen=True)
class Score:
    """Rate on ``levels`` (2 to 10 descriptions), lowest first."""

    instructions: Structured
    levels: Sequence[Structured]

    def __post_init__(self) -> None:
        if isinstance(self.levels, str):
            raise TypeError("Score levels must be a list, not one string")
        object.__setattr__(self, "levels", tuple(self.levels))

    @property
    def kind(self) -> QuestionKind:
        """``QuestionKind.SCORE``."""
        return QuestionKind.SCORE


Question = Noul | Choice | Score
"""One typed question."""


@dataclass(slots=True, frozen=True, kw_only=True)
class Capabilities:
    """What a backend can answer, checked before a request is sent."""

    question_kinds: frozenset[QuestionKind] = frozenset(QuestionKind)
    """Kinds answered; anything else is ``UNSUPPORTED``, never emulated."""
    max_choice_options: int = 255
    max_score_levels: int = 10
    batching: bool = True
    """Whether one request may carry several questions (else one request per question)."""
    max_concurrent_requests: int = 1
    """Without batching: how many single-question requests may be in flight at once."""
    local: bool = False
    """Self-hosted: the state does not go to a third party. Informational."""
    max_request_tokens: int | None = None
    """Estimated tokens of the state plus every question, when the backend has a limit."""
    max_state_question_tokens: int | None = None
    """Estimated tokens of the state plus the longest question, when limited."""

    @classmethod
    def systemone(cls) -> Capabilities:
        """TypeSafe's hosted API (Jev 1.13): 255 options, 10 levels, 64k / 32k tokens."""
        return cls(max_request_tokens=64_000, max_state_question_tokens=32_000)

    @classmethod
    def unlimited(cls) -> Capabilities:
        """No limits: the structural checks every request must pass on any backend."""
        return cls(max_choice_options=2**31, max_score_levels=2**31)

    def supports(self, kind: QuestionKind) -> bool:
        """Whether ``kind`` is answered."""
        return kind in self.question_kinds

    def strictest(self, other: Capabilities) -> Capabilities:
        """What both this and ``other`` accept (for a request that must fit a whole chain)."""
        return Capabilities(
            question_kinds=self.question_kinds & other.question_kinds,
            max_choice_options=min(self.max_choice_options, other.max_choice_options),
            max_score_levels=min(self.max_score_levels, other.max_score_levels),
            batching=self.batching and other.batching,
            max_concurrent_requests=min(
                self.max_concurrent_requests, other.max_concurrent_requests
            ),
            local=self.local and other.local,
            max_request_tokens=_min_limit(self.max_request_tokens, other.max_request_tokens),
            max_state_question_tokens=_min_limit(
                self.max_state_question_tokens, other.max_state_question_tokens
            ),
        )


def _min_limit(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


@dataclass(slots=True, frozen=True)
class Request:
    """What a backend is asked: one ``state`` and named questions about it, in order."""

    model: str
    state: Structured
    questions: Mapping[str, Question]

    def __post_init__(self) -> None:
        object.__setattr__(self, "questions", dict(self.questions))

    def with_questions(self, questions: Mapping[str, Question]) -> Request:
        """The same state and model with other questions (a split request's part)."""
        return Request(self.model, self.state, questions)

    def with_model(self, model: str) -> Request:
        """The same request asking for another model id."""
        return Request(model, self.state, self.questions)

    def validate(self, capabilities: Capabilities) -> None:
        """Raise ``INVALID`` / ``UNSUPPORTED`` unless ``capabilities`` accept this request.

        The token limits are checked on an estimate (4 bytes of JSON per token), so a
        request near a limit may still be refused by the server with 422.
        """
        if not isinstance(self.model, str) or not self.model.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise DecisionError.invalid("model: must not be empty")
        _check_structured(self.state, "state")
        if not self.questions:
            raise DecisionError.invalid("questions: at least one question is required")
        for qid, question in self.questions.items():
            if not isinstance(qid, str) or not qid.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
                raise DecisionError.invalid("questions: a question id must not be empty")
            validate_question(qid, question, capabilities)
        problem = token_limit_problem(self.state, self.questions.values(), capabilities)
        if problem is not None:
            raise DecisionError.invalid(problem)


def validate_question(qid: str, question: object, capabilities: Capabilities) -> None:
    """Check one question against ``capabilities``; ``qid`` names it in the error."""
    if not isinstance(question, Noul | Choice | Score):
        raise DecisionError.unsupported(
            f"questions.{qid}: {type(question).__name__} is not a Noul, Choice or Score"
        )
    if not capabilities.supports(question.kind):
        raise DecisionError.unsupported(
            f"questions.{qid}: {question.kind} questions are not supported by this backend"
        )
    _check_structured(question.instructions, f"questions.{qid}.instructions")
    match question:
        case Noul(if_true=None, if_false=None):
            pass
        case Noul(if_true=if_true, if_false=if_false):
            if if_true is None or if_false is None:
                raise DecisionError.invalid(
                    f"questions.{qid}.criteria: a noul needs both if_true and if_false, or neither"
                )
            _check_structured(if_true, f"questions.{qid}.criteria.true")
            _check_structured(if_false, f"questions.{qid}.criteria.false")
        case Choice(items=items):
            _check_options(qid, items, capabilities)
        case Score(levels=levels):
            if len(levels) < 2:
                raise DecisionError.invalid(
                    f"questions.{qid}.criteria: a score needs at least 2 levels, got {len(levels)}"
                )
            if len(levels) > capabilities.max_score_levels:
                raise DecisionError.invalid(
                    f"questions.{qid}.criteria: {len(levels)} levels exceed the backend's limit "
                    f"of {capabilities.max_score_levels}"
                )
            for index, level in enumerate(levels):
                _check_structured(level, f"questions.{qid}.criteria[{index}]")


def _check_options(
    qid: str, items: Sequence[tuple[str, Structured | None]], capabilities: Capabilities
) -> None:
    if len(items) < 2:
        raise DecisionError.invalid(
            f"questions.{qid}.criteria: a choice needs at least 2 options, got {len(items)}"
        )
    if len(items) > capabilities.max_choice_options:
        raise DecisionError.invalid(
            f"questions.{qid}.criteria: {len(items)} options exceed the backend's limit of "
            f"{capabilities.max_choice_options}"
        )
    seen: set[str] = set()
    for name, description in items:
        if not isinstance(name, str) or not name.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise DecisionError.invalid(f"questions.{qid}.criteria: an option name is empty")
        if name in seen:
            raise DecisionError.invalid(f"questions.{qid}.criteria: duplicate option {name!r}")
        seen.add(name)
        if description is not None:
            _check_structured(description, f"questions.{qid}.criteria.{name}")


def _check_structured(value: object, where: str) -> None:
    """Text must be non-empty; JSON must be an object or an array."""
    if isinstance(value, str):
        if not value.strip():
            raise DecisionError.invalid(f"{where}: must not be empty")
        return
    if isinstance(value, dict | list):
        return
    raise DecisionError.invalid(
        f"{where}: must be a string, an object or an array, got {type(value).__name__}"
    )


# --- the SystemOne wire form (also what token estimates measure) ---------------------------


def question_wire(question: Question) -> dict[str, Any]:
    """A question as SystemOne sends it: ``type``, ``instructions``, then ``criteria``."""
    wire: dict[str, Any] = {"type": question.kind.value, "instructions": question.instructions}
    match question:
        case Noul(if_true=None) | Noul(if_false=None):
            pass
        case Noul(if_true=if_true, if_false=if_false):
            wire["criteria"] = {"true": if_true, "false": if_false}
        case Choice(items=items):
            wire["criteria"] = dict(items)
        case Score(levels=levels):
            wire["criteria"] = list(levels)
    return wire


def json_size(value: object) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return len(text.encode())


def estimate_tokens(value: object) -> int:
    """The client-side token estimate of ``value``'s JSON (4 bytes per token)."""
    return math.ceil(json_size(value) / BYTES_PER_TOKEN)


def token_limit_problem(
    state: object, questions: Iterable[Question], capabilities: Capabilities
) -> str | None:
    """Why ``state`` with ``questions`` exceeds the token limits, or ``None`` if it fits."""
    if capabilities.max_request_tokens is None and capabilities.max_state_question_tokens is None:
        return None
    state_tokens = estimate_tokens(state)
    question_tokens = [estimate_tokens(question_wire(q)) for q in questions]
    limit = capabilities.max_request_tokens
    total = state_tokens + sum(question_tokens)
    if limit is not None and total > limit:
        return (
            f"request: about {total} tokens (estimated) exceeds the backend's {limit}-token "
            "request limit; trim the state or split the questions"
        )
    limit = capabilities.max_state_question_tokens
    longest = state_tokens + max(question_tokens, default=0)
    if limit is not None and longest > limit:
        return (
            f"state: about {longest} tokens (estimated) for the state plus the longest "
            f"question exceeds the backend's {limit}-token limit"
        )
    return None
