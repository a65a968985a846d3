"""LogprobBackend: decisions from any OpenAI-compatible ``/chat/completions`` server that
returns logprobs (llama.cpp's llama-server, vLLM, SGLang, LM Studio, a hosted API).

Each question is one completion of one token at temperature 0. The prompt shows the state,
the question and one label per answer — ``A``/``B`` (yes/no), ``A``, ``B``, … (options),
``0``…``9`` (levels) — and the answer is read from the first token's ``top_logprobs``,
never from the text. A general LLM's label probabilities are only roughly calibrated:
measure them with ``calibrate`` and set ``temperature`` from its suggestion.
"""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Self
from urllib.parse import urlsplit

from pydantic import ValidationError

from yoagent.core import Usage
from yoagent.core.support import endpoint_from_base

from ._answers import Answer, ChoiceAnswer, Evaluation, NoulAnswer, ScoreAnswer, add_usage
from ._backend import HttpBackend, host_of
from ._errors import DecisionError
from ._http import NoKey, encode_json
from ._questions import Capabilities, Choice, Noul, Question, QuestionKind, Request, Score
from ._systemone_wire import level_text
from ._wire import Count, Number, WireModel

DEFAULT_TOP_LOGPROBS = 20
"""OpenAI's cap on ``top_logprobs``; also the default Choice limit."""
MAX_LETTER_LABELS = 26
MAX_CONCURRENT_QUESTIONS = 8
DEFAULT_MIN_LABEL_MASS = 0.5
PROBABILITY_FLOOR = 1e-9
"""The least probability any label ends with, so no answer reads as certainty."""

KINDS = frozenset({QuestionKind.NOUL, QuestionKind.CHOICE, QuestionKind.SCORE})
"""The kinds this backend answers, listed explicitly: a new kind is unsupported until
someone decides its labels."""


class TopLogprob(WireModel):
    """One candidate token of ``top_logprobs``."""

    token: str
    logprob: Number


class _TokenLogprobs(WireModel):
    top_logprobs: tuple[TopLogprob, ...] = ()


class _Logprobs(WireModel):
    content: list[_TokenLogprobs] | None = None


class _ChatChoice(WireModel):
    logprobs: _Logprobs | None = None


class _ChatUsage(WireModel):
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None


class ChatCompletion(WireModel):
    """The parts of a chat completion this backend reads."""

    model: str | None = None
    choices: tuple[_ChatChoice, ...] = ()
    usage: _ChatUsage | None = None

    def first_token(self) -> tuple[TopLogprob, ...]:
        """The first generated token's ``top_logprobs``."""
        logprobs = self.choices[0].logprobs if self.choices else None
        if logprobs is None or not logprobs.content:
            raise DecisionError.bad_response("the response has no logprobs for its first token")
        return logprobs.content[0].top_logprobs

    def to_usage(self) -> Usage | None:
        """``prompt_tokens`` / ``completion_tokens``, or ``None`` when not reported."""
        if self.usage is None or self.usage.prompt_tokens is None:
            return None
        return Usage(input=self.usage.prompt_tokens, output=self.usage.completion_tokens or 0)


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is loopback: ``localhost``, ``*.localhost``, 127.0.0.0/8 or
    ``::1`` (``0.0.0.0`` is not)."""
    host = host_of(url)
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def labels_for(question: Question) -> list[str]:
    """One label per answer, in answer order."""
    match question:
        case Noul():
            return ["A", "B"]
        case Choice(items=items):
            return [chr(ord("A") + index) for index in range(len(items))]
        case Score(levels=levels):
            return [str(index) for index in range(len(levels))]


def _render(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def prompt(state: object, question: Question, labels: Sequence[str]) -> str:
    """The single-label prompt for one question."""
    match question:
        case Noul(if_true=if_true, if_false=if_false):
            yes = "Yes" if if_true is None else f"Yes — {_render(if_true)}"
            no = "No" if if_false is None else f"No — {_render(if_false)}"
            lines = [f"{labels[0]}: {yes}", f"{labels[1]}: {no}"]
        case Choice(items=items):
            lines = [
                f"{label}: {name}"
                if description is None
                else f"{label}: {name} — {_render(description)}"
                for label, (name, description) in zip(labels, items, strict=True)
            ]
        case Score(levels=levels):
            lines = [
                f"{label}: {_render(level)}" for label, level in zip(labels, levels, strict=True)
            ]
    scale = " (the levels are ordered, lowest first)" if isinstance(question, Score) else ""
    return (
        "Read the state, then answer the question with a single label.\n\n"
        f"<state>\n{_render(state)}\n</state>\n\n"
        f"Question: {_render(question.instructions)}\n\n"
        f"Labels{scale}:\n" + "\n".join(lines) + "\n\n"
        f"Reply with exactly one label — one of {', '.join(labels)} — and nothing else."
    )


def label_distribution(
    top: Sequence[TopLogprob],
    labels: Sequence[str],
    *,
    temperature: float = 1.0,
    min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
) -> list[float]:
    """The distribution over ``labels`` read from one token's ``top_logprobs``.

    Tokens are trimmed and upper-cased and tokens naming the same label are summed. No
    label at all, or labels holding less than ``min_label_mass`` of the probability, is
    ``BAD_RESPONSE`` (a ``<think>`` token or a word is noise, not an answer). A label absent
    from the top K gets ``min(smallest reported p, 1 − Σ reported)`` (within [1e-9, 1]).
    Then ``p^(1/T)``, renormalised; every label stays at least 1e-9, so no answer is 0 or 1.
    """
    reported = [math.exp(entry.logprob) for entry in top if math.isfinite(entry.logprob)]
    mass = dict.fromkeys(labels, 0.0)
    present: set[str] = set()
    for entry in top:
        label = entry.token.strip().upper()
        if label in mass and math.isfinite(entry.logprob):
            mass[label] += math.exp(entry.logprob)
            present.add(label)
    if not present:
        raise DecisionError.bad_response(
            f"none of the labels {', '.join(labels)} is among the first token's top logprobs"
        )
    covered = math.fsum(mass[label] for label in present)
    if covered < min_label_mass:
        raise DecisionError.bad_response(
            f"the labels cover only {covered:.3f} of the first token's probability "
            f"(at least {min_label_mass} is needed)"
        )
    absent_mass = min(min(reported), max(1.0 - math.fsum(reported), 0.0))
    absent_mass = min(max(absent_mass, PROBABILITY_FLOOR), 1.0)
    logits = [
        math.log(mass[label] if label in present else absent_mass) / temperature for label in labels
    ]
    top_logit = max(logits)
    weights = [math.exp(logit - top_logit) for logit in logits]
    total = math.fsum(weights)
    # Every label at least the floor: an absent one (a tiny temperature would underflow it)
    # and a reported one less likely than that, so no answer reads as certainty.
    probs = [max(w / total, PROBABILITY_FLOOR) for w in weights]
    total = math.fsum(probs)
    return [p / total for p in probs]


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            merged[key] = _deep_merge(current, value)  # pyright: ignore[reportUnknownArgumentType]
        else:
            merged[key] = value
    return merged


class LogprobBackend(HttpBackend):
    """Decisions from an OpenAI-compatible ``/chat/completions`` endpoint with logprobs.

    ``base_url`` may be the host (``http://localhost:8080`` gets ``/v1``), a base with a path
    (``https://api.groq.com/openai/v1``), or the full ``…/chat/completions`` URL. No key
    unless :meth:`with_api_key`; no environment variable is read. One request per question,
    at most 8 in flight (the model splits a request). ``temperature`` rescales the label
    probabilities (``p^(1/T)``), not the sampling (always 0).
    """

    __slots__ = ("_base_url", "_extra_body", "_min_label_mass", "_temperature", "_top_logprobs")

    def __init__(
        self,
        base_url: str,
        *,
        temperature: float = 1.0,
        top_logprobs: int = DEFAULT_TOP_LOGPROBS,
        max_choice_options: int = DEFAULT_TOP_LOGPROBS,
        min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        if not (math.isfinite(temperature) and temperature > 0):
            raise ValueError(
                f"the logprob temperature must be finite and positive, got {temperature}"
            )
        if not 2 <= max_choice_options <= MAX_LETTER_LABELS:
            raise ValueError(f"max_choice_options must be 2 to 26, got {max_choice_options}")
        if top_logprobs < 1:
            raise ValueError(f"top_logprobs must be at least 1, got {top_logprobs}")
        if not 0.0 <= min_label_mass <= 1.0:
            raise ValueError(f"min_label_mass must be in [0, 1], got {min_label_mass}")
        capabilities = Capabilities(
            question_kinds=KINDS,
            max_choice_options=max_choice_options,
            max_score_levels=10,
            batching=False,
            max_concurrent_requests=MAX_CONCURRENT_QUESTIONS,
            local=is_loopback_url(base_url),
        )
        super().__init__(NoKey(), capabilities)
        self._base_url = base_url
        self._temperature = temperature
        self._top_logprobs = top_logprobs
        self._min_label_mass = min_label_mass
        self._extra_body: dict[str, Any] = _deep_merge({}, extra_body or {})

    def with_thinking_disabled(self) -> Self:
        """Send ``chat_template_kwargs: {enable_thinking: false}`` (a reasoning model's first
        token is ``<think>``, which cannot be read as a label). Not the default: OpenAI
        rejects fields it does not know."""
        extra = _deep_merge(self._extra_body, {"chat_template_kwargs": {"enable_thinking": False}})
        return self._copy(_extra_body=extra)

    @property
    def temperature(self) -> float:
        """The scaling temperature."""
        return self._temperature

    @property
    def is_local(self) -> bool:
        """Whether the host is loopback."""
        return self._capabilities.local

    def endpoint_url(self) -> str:
        """The URL requests go to."""
        return endpoint_from_base(self._base_url, _chat_completions_at)

    def body(self, request: Request, question: Question) -> dict[str, Any]:
        """One question's request body (the core fields win over ``extra_body``)."""
        labels = labels_for(question)
        core = {
            "model": request.model,
            "messages": [{"role": "user", "content": prompt(request.state, question, labels)}],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": max(self._top_logprobs, len(labels)),
        }
        return {**self._extra_body, **core}

    async def evaluate(self, request: Request) -> Evaluation:
        """Answer each question with its own completion, one after another (the model
        splits a request to run them concurrently)."""
        answers: dict[str, Answer] = {}
        usage: Usage | None = Usage()
        model = request.model
        for qid, question in request.questions.items():
            try:
                answered, one = await self._ask(request, qid, question)
            except DecisionError as error:
                # What the questions before this one (and this one, if answered) billed.
                billed = [
                    part
                    for part in (usage if answers else None, error.billed and error.billed.usage)
                    if part is not None
                ]
                if billed:
                    error.with_billed(Evaluation(model=model, usage=sum(billed, Usage())))
                raise
            answers[qid] = answered
            usage = add_usage(usage, one.usage)
            model = one.model
        return Evaluation(model=model, answers=answers, usage=usage)

    async def _ask(
        self, request: Request, qid: str, question: Question
    ) -> tuple[Answer, Evaluation]:
        if question.kind not in KINDS:
            raise DecisionError.unsupported(f"questions.{qid}: {question.kind} questions")
        labels = labels_for(question)

        def read(data: Any) -> Evaluation:
            try:
                completion = ChatCompletion.model_validate(data)
            except ValidationError as error:
                problem = error.errors()[0]
                path = ".".join(str(part) for part in problem["loc"])
                raise DecisionError.bad_response(f"{path}: {problem['msg']}") from None
            model = completion.model if completion.model else request.model
            billed = Evaluation(model=model, usage=completion.to_usage())
            try:
                probs = label_distribution(
                    completion.first_token(),
                    labels,
                    temperature=self._temperature,
                    min_label_mass=self._min_label_mass,
                )
            except DecisionError as error:
                raise DecisionError.bad_response(f"answers.{qid}: {error.detail}").with_billed(
                    billed
                ) from None
            return Evaluation(
                model=model, answers={qid: _answer(question, probs)}, usage=billed.usage
            )

        evaluation = await self._post(encode_json(self.body(request, question)), read)
        return evaluation.answers[qid], evaluation


def _answer(question: Question, probs: list[float]) -> Answer:
    match question:
        case Noul():
            return NoulAnswer.of(probs[0])
        case Choice(items=items):
            return ChoiceAnswer.of(zip([name for name, _ in items], probs, strict=True))
        case Score(levels=levels):
            return ScoreAnswer.of(probs, [level_text(level) for level in levels])


def _chat_completions_at(base: str) -> str:
    if base.endswith("/chat/completions"):
        return base
    has_path = bool(urlsplit(base).path.strip("/")) if "://" in base else "/" in base
    return f"{base}/chat/completions" if has_path else f"{base}/v1/chat/completions"
