"""OpenAiDecisionBackend: OpenAI's Decisions API (``POST {base}/decisions``, gpt-6-luna).

| yoagent | Decisions API |
|---|---|
| state (text / JSON) | ``input`` (JSON pretty-printed) |
| question id | ``name`` |
| Noul | ``predicate`` (criteria appended to the instructions), answered ``probability`` |
| Choice | ``choice``, ``choices[].value`` + ``description`` |
| Score | ``score``, ``levels[].label``, answered by level index ``value`` |
| ``refusal`` answer | ``REFUSED`` naming the question (not retried; ends a fallback chain) |

Answers are matched by ``name``, and by position only when they are unnamed and there is
exactly one per question. A predicate has no confidence: ``|2p − 1|`` is computed. Images
are not supported. Tested against loopback servers only.
"""

from __future__ import annotations

import json
from typing import Any, Self

from pydantic import ValidationError

from yoagent.core import Usage
from yoagent.core.support import endpoint_from_base

from ._answers import Answer, ChoiceAnswer, Evaluation, NoulAnswer, ScoreAnswer
from ._backend import HttpBackend, host_of
from ._errors import DecisionError
from ._http import EnvKey, encode_json
from ._questions import Capabilities, Choice, Noul, Question, Request, Score, Structured
from ._systemone_wire import level_text, reported_model
from ._wire import Count, Number, WireModel

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
OPENAI_API_KEY_ENV = "OPENAI_API_KEY"
MAX_SAFETY_IDENTIFIER = 128


_WIRE_TYPE = {Noul: "predicate", Choice: "choice", Score: "score"}


class DecisionsEntry(WireModel):
    """One entry of an answer's ``probabilities``."""

    value: str | bool | int | None = None
    label: str | None = None
    probability: Number | None = None


class DecisionsAnswer(WireModel):
    """One answer of a Decisions response."""

    type: str | None = None
    name: str | None = None
    probability: Number | None = None
    choice: str | bool | None = None
    score: Number | None = None
    probabilities: list[DecisionsEntry] | None = None
    confidence: Number | None = None


class _InputDetails(WireModel):
    cached_tokens: Count = 0
    cache_write_tokens: Count = 0


class DecisionsUsage(WireModel):
    """``usage``: input tokens (cached ones included), output tokens."""

    input_tokens: Count
    output_tokens: Count = 0
    input_tokens_details: _InputDetails = _InputDetails()

    def to_usage(self) -> Usage:
        """As core's ``Usage``: cached and cache-written input tokens apart."""
        details = self.input_tokens_details
        fresh = max(self.input_tokens - details.cached_tokens - details.cache_write_tokens, 0)
        return Usage(
            input=fresh,
            output=self.output_tokens,
            cache_read=details.cached_tokens,
            cache_write=details.cache_write_tokens,
        )


def as_text(value: Structured) -> str:
    """Text as is; JSON pretty-printed (the API takes text)."""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


class OpenAiDecisionBackend(HttpBackend):
    """A client of OpenAI's Decisions API: ``POST https://api.openai.com/v1/decisions``, key
    from ``OPENAI_API_KEY`` at every call (trimmed), or :meth:`with_api_key`.

    Capabilities are the SystemOne presets' (OpenAI publishes no limits of its own).
    """

    __slots__ = ("_base_url", "_safety_identifier")

    _key_given_in_code = f"key given to with_api_key, not ${OPENAI_API_KEY_ENV}"

    def __init__(self, base_url: str = OPENAI_BASE_URL) -> None:
        super().__init__(EnvKey((OPENAI_API_KEY_ENV,)), Capabilities.systemone())
        self._base_url = base_url
        self._safety_identifier: str | None = None

    def with_base_url(self, base_url: str) -> Self:
        """Send to ``{base_url}/decisions`` (``/v1`` included in the base, as in OpenAI's
        SDKs); a URL already ending in ``/decisions`` is used as is."""
        return self._copy(_base_url=base_url)

    def with_api_key_env(self, variable: str) -> Self:
        """Read the key from ``variable`` at call time."""
        return self._copy(_key=EnvKey((variable,)))

    def with_safety_identifier(self, identifier: str) -> Self:
        """Send this ``safety_identifier`` (an opaque id of your end user, at most 128
        characters) for OpenAI's abuse monitoring."""
        if not identifier or len(identifier) > MAX_SAFETY_IDENTIFIER:
            raise ValueError(
                f"a safety identifier has 1 to {MAX_SAFETY_IDENTIFIER} characters, "
                f"got {len(identifier)}"
            )
        return self._copy(_safety_identifier=identifier)

    def endpoint_url(self) -> str:
        """The URL requests go to."""
        return endpoint_from_base(
            self._base_url,
            lambda base: base if base.endswith("/decisions") else f"{base}/decisions",
        )

    def is_openai_host(self) -> bool:
        """Whether requests go to OpenAI's own host (so its list price applies)."""
        return host_of(self.endpoint_url()) == OPENAI_HOST

    def body(self, request: Request) -> dict[str, Any]:
        """The request body: ``model``, ``input``, ``questions`` in order, and
        ``safety_identifier`` when set."""
        body: dict[str, Any] = {
            "model": request.model,
            "input": as_text(request.state),
            "questions": [question_json(qid, q) for qid, q in request.questions.items()],
        }
        if self._safety_identifier is not None:
            body["safety_identifier"] = self._safety_identifier
        return body

    async def evaluate(self, request: Request) -> Evaluation:
        """Send ``request`` in one batch and read the answers."""

        def read(data: Any) -> Evaluation:
            return parse_decisions_response(data, request)

        return await self._post(encode_json(self.body(request)), read)


def question_json(qid: str, question: Question) -> dict[str, Any]:
    """One question as the Decisions API takes it."""
    instructions = as_text(question.instructions)
    wire: dict[str, Any] = {"type": _WIRE_TYPE[type(question)], "name": qid}
    match question:
        case Noul(if_true=if_true, if_false=if_false):
            if if_true is not None and if_false is not None:
                instructions += (
                    f"\n\nTrue when: {as_text(if_true)}\nFalse when: {as_text(if_false)}"
                )
            wire["instructions"] = instructions
        case Choice(items=items):
            wire["instructions"] = instructions
            wire["choices"] = [
                {"value": name}
                if description is None
                else {"value": name, "description": as_text(description)}
                for name, description in items
            ]
        case Score(levels=levels):
            wire["instructions"] = instructions
            wire["levels"] = [{"label": as_text(level)} for level in levels]
    return wire


def _billed(data: dict[str, Any], request: Request) -> Evaluation:
    """What the response says it cost, answers aside (read first: a refusal still bills)."""
    usage: Usage | None = None
    raw = data.get("usage")
    if isinstance(raw, dict):
        try:
            usage = DecisionsUsage.model_validate(raw).to_usage()
        except ValidationError:
            usage = None
    return Evaluation(model=reported_model(data, request), usage=usage)


def parse_decisions_response(data: object, request: Request) -> Evaluation:
    """Read a Decisions response for ``request`` (shape only; values are validated by the
    model). Errors carry what the response says it was billed for."""
    if not isinstance(data, dict):
        raise DecisionError.bad_response("the response is not a JSON object")
    body: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    billed = _billed(body, request)
    try:
        answers = _answers(body, request)
    except DecisionError as error:
        raise error.with_billed(billed) from None
    return Evaluation(model=billed.model, answers=answers, usage=billed.usage)


def _answers(body: dict[str, Any], request: Request) -> dict[str, Answer]:
    raw = body.get("answers")
    if not isinstance(raw, list):
        raise DecisionError.bad_response("the response has no `answers` array")
    wires: list[DecisionsAnswer] = []
    for index, item in enumerate(raw):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        try:
            wires.append(DecisionsAnswer.model_validate(item))
        except ValidationError as error:
            problem = error.errors()[0]
            path = ".".join(str(part) for part in problem["loc"])
            raise DecisionError.bad_response(f"answers[{index}].{path}: {problem['msg']}") from None
    positional = len(wires) == len(request.questions)
    parsed: dict[str, Answer] = {}
    for index, (qid, question) in enumerate(request.questions.items()):
        wire = next((w for w in wires if w.name == qid), None)
        if wire is None and positional and wires[index].name is None:
            wire = wires[index]
        if wire is None:
            raise DecisionError.bad_response(f"answers.{qid}: missing")
        parsed[qid] = _answer(qid, wire, question)
    return parsed


def _answer(qid: str, wire: DecisionsAnswer, question: Question) -> Answer:
    if wire.type == "refusal":
        raise DecisionError.refused(qid, "the model declined to answer (refusal)")
    expected = _WIRE_TYPE[type(question)]
    if wire.type != expected:
        raise DecisionError.bad_response(
            f"answers.{qid}: type {wire.type!r} answers a {question.kind} question "
            f"(expected {expected!r})"
        )
    where = f"answers.{qid}.probabilities"
    match question:
        case Noul():
            if wire.probability is None:
                raise DecisionError.bad_response(f"answers.{qid}.probability: missing")
            return NoulAnswer.of(wire.probability, wire.confidence)
        case Choice():
            pairs: list[tuple[str, float]] = []
            for entry in wire.probabilities or []:
                value = _option_name(entry.value)
                if value not in question.names:
                    raise DecisionError.bad_response(
                        f"{where}: {value!r} is not one of the options"
                    )
                if entry.probability is None:
                    raise DecisionError.bad_response(f"{where}.{value}: missing")
                pairs.append((value, entry.probability))
            if not pairs:
                raise DecisionError.bad_response(f"{where}: missing")
            order = {name: index for index, name in enumerate(question.names)}
            pairs.sort(key=lambda pair: order[pair[0]])
            choice = None if wire.choice is None else _option_name(wire.choice)
            return ChoiceAnswer.of(pairs, choice=choice, confidence=wire.confidence)
        case Score(levels=levels):
            n = len(levels)
            probs: list[float | None] = [None] * n
            for entry in wire.probabilities or []:
                index = entry.value
                if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
                    raise DecisionError.bad_response(
                        f"{where}: {index!r} is not a level index below {n}"
                    )
                probs[index] = entry.probability
            missing = [index for index, p in enumerate(probs) if p is None]
            if missing:
                raise DecisionError.bad_response(f"{where}: level {missing[0]} has no probability")
            legend = [level_text(level) for level in levels]
            values = [p for p in probs if p is not None]
            return ScoreAnswer.of(values, legend, score=wire.score, confidence=wire.confidence)


def _option_name(value: object) -> str:
    """An option as yoagent names it (the API may echo a boolean value)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
