"""The SystemOne wire format: the request body, and the lenient reading of a response.

Lenient like the servers that speak it (TypeSafe, OpenCode Zen, Cloudflare's Clef,
self-hosted JevK5): unknown fields are ignored; a missing or null ``confidence``, ``choice``,
``score`` or ``legend`` is computed; a missing or null ``noul`` or probability is refused;
an answer whose ``type`` names another kind, a probability keyed by something that is not
an option (or not a level index below n) is refused. Values are then validated centrally,
like every backend's (``check_complete``).
"""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import ValidationError

from yoagent.core import Usage

from ._answers import Answer, ChoiceAnswer, Evaluation, NoulAnswer, ScoreAnswer
from ._errors import DecisionError
from ._http import MAX_ERROR_BODY, cloudflare_codes, excerpt
from ._questions import Choice, Noul, Question, Request, Score, question_wire
from ._wire import Count, Number, WireModel

CLOUDFLARE_SCHEMA_ERROR = 5006
"""Workers AI: the request does not match the model's input schema."""


class SystemOneAnswer(WireModel):
    """One answer as a SystemOne server sends it; every field optional on the wire."""

    type: str | None = None
    noul: Number | None = None
    choice: str | None = None
    probabilities: dict[str, Number | None] | list[Number | None] | None = None
    legend: dict[str, Any] | list[Any] | None = None
    score: Number | None = None
    confidence: Number | None = None
    input_tokens: Count | None = None


class SystemOneUsage(WireModel):
    """``usage``: ``input_tokens`` and ``output_tokens``."""

    input_tokens: Count | None = None
    output_tokens: Count | None = None


def request_body(request: Request) -> dict[str, Any]:
    """The body: ``state``, ``model``, ``questions`` (in order, keyed by your ids)."""
    return {
        "state": request.state,
        "model": request.model,
        "questions": {qid: question_wire(q) for qid, q in request.questions.items()},
    }


def reported_model(body: dict[str, Any], request: Request) -> str:
    """The versioned id that answered, else the requested one."""
    model = body.get("model")
    return model if isinstance(model, str) and model.strip() else request.model


def unwrap_envelope(body: object) -> dict[str, Any]:
    """The SystemOne response inside Cloudflare's ``{"result": ...}`` envelope (a plain
    response passes through). A 2xx ``"success": false`` is ``INVALID`` for the schema error
    5006 and ``BACKEND`` otherwise."""
    if not isinstance(body, dict):
        raise DecisionError.bad_response(f"the response is {_kind(body)}, not an object")
    data: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
    if "answers" in data:
        return data
    if data.get("success") is False:
        errors = data.get("errors")
        said = excerpt(json.dumps(errors), MAX_ERROR_BODY) if errors is not None else "(none given)"
        if CLOUDFLARE_SCHEMA_ERROR in cloudflare_codes(data):
            raise DecisionError.invalid(f"Cloudflare rejected the request: {said}")
        raise DecisionError.backend(f"Cloudflare reported failure: {said}")
    if "result" not in data:
        return data
    result = data["result"]
    if isinstance(result, str):  # a model may hand its JSON back as text
        try:
            result = json.loads(result)
        except ValueError:
            raise DecisionError.bad_response(
                f"Cloudflare's `result` is text, not a SystemOne response: {excerpt(result, 200)}"
            ) from None
    if not isinstance(result, dict):
        raise DecisionError.bad_response(
            f"Cloudflare's `result` is {_kind(result)}, not a SystemOne response"
        )
    return result  # pyright: ignore[reportUnknownVariableType]


def billed_by(body: dict[str, Any], request: Request) -> Evaluation:
    """What a response says it was billed for, answers aside: ``usage``, else the per-answer
    ``input_tokens``; ``usage`` ``None`` when it says nothing."""
    return Evaluation(model=reported_model(body, request), usage=_usage(body))


def _usage(body: dict[str, Any]) -> Usage | None:
    raw = body.get("usage")
    if isinstance(raw, dict):
        try:
            usage = SystemOneUsage.model_validate(raw)
        except ValidationError:
            usage = SystemOneUsage()
        if usage.input_tokens is not None:
            return Usage(input=usage.input_tokens, output=usage.output_tokens or 0)
    answers = body.get("answers")
    if not isinstance(answers, dict):
        return None
    counts: list[int] = []
    for answer in answers.values():  # pyright: ignore[reportUnknownVariableType]
        tokens = (
            cast("dict[str, object]", answer).get("input_tokens")
            if isinstance(answer, dict)
            else None
        )
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
            counts.append(tokens)
    return Usage(input=sum(counts)) if counts else None


def parse_systemone_response(body: object, request: Request) -> Evaluation:
    """Read a SystemOne response (Cloudflare's envelope unwrapped) for ``request``.

    Public for backends that move the request themselves. Checks shape only; the values
    are validated by the model like every backend's. A response that cannot be read
    raises ``BAD_RESPONSE`` carrying what it says it was billed for.
    """
    data = unwrap_envelope(body)
    try:
        return _parse(data, request)
    except DecisionError as error:
        raise error.with_billed(billed_by(data, request)) from None


def _parse(data: dict[str, Any], request: Request) -> Evaluation:
    answers = data.get("answers")
    if not isinstance(answers, dict):
        raise DecisionError.bad_response("the response has no `answers` object")
    parsed: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        raw = answers.get(qid)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if raw is None:
            raise DecisionError.bad_response(f"answers.{qid}: missing")
        try:
            wire = SystemOneAnswer.model_validate(raw)
        except ValidationError as error:
            raise DecisionError.bad_response(_first_problem(f"answers.{qid}", error)) from None
        if wire.type is not None and wire.type != question.kind.value:
            raise DecisionError.bad_response(
                f"answers.{qid}: type {wire.type!r} answers a {question.kind} question"
            )
        parsed[qid] = _answer(qid, wire, question)
    return Evaluation(model=reported_model(data, request), answers=parsed, usage=_usage(data))


def _answer(qid: str, wire: SystemOneAnswer, question: Question) -> Answer:
    match question:
        case Noul():
            if wire.noul is None:
                raise DecisionError.bad_response(f"answers.{qid}.noul: missing")
            return NoulAnswer.of(wire.noul, wire.confidence)
        case Choice():
            return _choice(qid, wire, question)
        case Score():
            return _score(qid, wire, question)


def _choice(qid: str, wire: SystemOneAnswer, question: Choice) -> ChoiceAnswer:
    where = f"answers.{qid}.probabilities"
    if not isinstance(wire.probabilities, dict):
        raise DecisionError.bad_response(f"{where}: missing or not an object")
    options = question.names
    for name, p in wire.probabilities.items():
        if name not in options:
            raise DecisionError.bad_response(f"{where}: {name!r} is not one of the options")
        if p is None:
            raise DecisionError.bad_response(f"{where}.{name}: missing")
    # Option order, so a tie resolves to the option listed first.
    pairs = [(name, p) for name in options if (p := wire.probabilities.get(name)) is not None]
    return ChoiceAnswer.of(pairs, choice=wire.choice, confidence=wire.confidence)


def _score(qid: str, wire: SystemOneAnswer, question: Score) -> ScoreAnswer:
    where = f"answers.{qid}.probabilities"
    n = len(question.levels)
    probs: list[float | None] = [None] * n
    match wire.probabilities:
        case dict() as by_level:
            for key, p in by_level.items():
                index = int(key) if key.isdigit() else -1
                if not 0 <= index < n:
                    raise DecisionError.bad_response(
                        f"{where}: {key!r} is not a level index below {n}"
                    )
                probs[index] = p
        case list() as in_order if len(in_order) == n:
            probs = list(in_order)
        case _:
            raise DecisionError.bad_response(f"{where}: missing, or not one entry per level")
    missing = [index for index, p in enumerate(probs) if p is None]
    if missing:
        raise DecisionError.bad_response(f"{where}: level {missing[0]} has no probability")
    legend = [level_text(level) for level in question.levels]
    match wire.legend:
        case dict() as by_level:
            for key, text in by_level.items():
                if key.isdigit() and int(key) < n:
                    legend[int(key)] = level_text(text)
        case list() as in_order if len(in_order) == n:
            legend = [level_text(text) for text in in_order]
        case _:
            pass
    values = [p for p in probs if p is not None]
    return ScoreAnswer.of(values, legend, score=wire.score, confidence=wire.confidence)


def level_text(level: object) -> str:
    """A level's text: a string as is, anything else as JSON."""
    return level if isinstance(level, str) else json.dumps(level, ensure_ascii=False)


def _first_problem(where: str, error: ValidationError) -> str:
    problem = error.errors()[0]
    path = ".".join(str(part) for part in problem["loc"] if not str(part).startswith("function"))
    return f"{where}.{path}: {problem['msg']}" if path else f"{where}: {problem['msg']}"


def _kind(value: object) -> str:
    match value:
        case None:
            return "null"
        case dict():
            return "an object"
        case list():
            return "an array"
        case str():
            return "text"
        case bool():
            return "a boolean"
        case _:
            return "a number"
