"""The logprobs backend's exact edges: the prompt word for word, the distribution at its
bounds (mass exactly at the minimum, a tiny temperature, the floor after renormalising),
the settings' bounds, what a failed question was billed and by whom, and the endpoint of a
base with a path of its own. (Added from mutation testing: each pins a behaviour a
surviving mutant changed.)"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest
import respx
from decision_helpers import NO_RETRY, SpendLog

from yoagent.core import Usage
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    LogprobBackend,
    Noul,
    Request,
    Score,
    recording_decision_spend,
)
from yoagent.decision._logprobs import TopLogprob, label_distribution, prompt

URL = "http://127.0.0.1:8080/v1/chat/completions"


def completion(
    top: dict[str, float] | None, *, model: str | None = "served-llama", usage: Any = (50, 1)
) -> httpx.Response:
    """A one-token completion whose first token's top logprobs are ``top``
    (probabilities); ``None``: no logprobs at all."""
    choice: dict[str, Any] = {"message": {"role": "assistant", "content": "A"}}
    if top is not None:
        entries = [{"token": token, "logprob": math.log(p)} for token, p in top.items()]
        choice["logprobs"] = {"content": [{"token": "A", "logprob": 0.0, "top_logprobs": entries}]}
    body: dict[str, Any] = {"choices": [choice]}
    if model is not None:
        body["model"] = model
    if isinstance(usage, tuple):
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    elif usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def model(**options: Any) -> DecisionModel:
    backend = LogprobBackend("http://127.0.0.1:8080", **options).with_retry(NO_RETRY)
    return DecisionModel.from_logprob_backend(backend, "llama")


def tops(entries: dict[str, float]) -> list[TopLogprob]:
    return [TopLogprob(token=token, logprob=math.log(p)) for token, p in entries.items()]


# -- the prompt, word for word ----------------------------------------------------------------


def test_a_noul_prompt_without_criteria_word_for_word() -> None:
    assert prompt({"ticket": "café"}, Noul("Urgent?"), ["A", "B"]) == (
        "Read the state, then answer the question with a single label.\n\n"
        '<state>\n{\n  "ticket": "café"\n}\n</state>\n\n'
        "Question: Urgent?\n\n"
        "Labels:\nA: Yes\nB: No\n\n"
        "Reply with exactly one label — one of A, B — and nothing else."
    )


def test_a_score_prompt_says_the_levels_are_ordered() -> None:
    question = Score({"ask": "Mood?"}, ["calm", {"level": "angry"}])
    assert prompt("s", question, ["0", "1"]) == (
        "Read the state, then answer the question with a single label.\n\n"
        "<state>\ns\n</state>\n\n"
        'Question: {\n  "ask": "Mood?"\n}\n\n'
        "Labels (the levels are ordered, lowest first):\n"
        '0: calm\n1: {\n  "level": "angry"\n}\n\n'
        "Reply with exactly one label — one of 0, 1 — and nothing else."
    )
    choice = prompt("s", Choice("Which?", ["x", "y"]), ["A", "B"])
    assert "\nLabels:\nA: x\nB: y\n\n" in choice


# -- the distribution at its bounds -----------------------------------------------------------


def test_labels_holding_exactly_the_minimum_mass_are_read() -> None:
    probs = label_distribution(tops({"A": 0.5, "<think>": 0.5}), ["A", "B"])
    assert probs[0] == pytest.approx(1.0) and probs[1] == pytest.approx(2e-9)


def test_a_tiny_temperature_still_gives_a_distribution() -> None:
    """The logits are shifted by the largest before ``exp``: at T = 0.001 they are near
    -500, which ``exp`` alone would make 0 for every label."""
    probs = label_distribution(tops({"A": 0.6, "B": 0.4}), ["A", "B"], temperature=0.001)
    assert probs == pytest.approx([1.0, 1e-9], rel=1e-6)


def test_a_label_under_the_floor_ends_at_the_floor_after_renormalising() -> None:
    probs = label_distribution(tops({"A": 0.6, "B": 0.3, "C": 6e-10}), ["A", "B", "C"])
    assert probs == pytest.approx([2 / 3, 1 / 3, 1e-9], rel=1e-6)


def test_no_label_at_all_names_the_labels() -> None:
    with pytest.raises(DecisionError) as caught:
        label_distribution(tops({"<think>": 0.9}), ["A", "B", "C"])
    assert caught.value.detail == (
        "none of the labels A, B, C is among the first token's top logprobs"
    )


# -- the settings' bounds ---------------------------------------------------------------------


def test_the_settings_at_their_bounds() -> None:
    assert LogprobBackend("http://h", max_choice_options=2).capabilities().max_choice_options == 2
    assert LogprobBackend("http://h", top_logprobs=1) is not None
    for mass in (0.0, 1.0):
        assert LogprobBackend("http://h", min_label_mass=mass) is not None
    with pytest.raises(ValueError, match="top_logprobs") as top:
        LogprobBackend("http://h", top_logprobs=0)
    assert str(top.value) == "top_logprobs must be at least 1, got 0"
    with pytest.raises(ValueError, match="min_label_mass") as mass:
        LogprobBackend("http://h", min_label_mass=1.5)
    assert str(mass.value) == "min_label_mass must be in [0, 1], got 1.5"
    capabilities = LogprobBackend("http://h").capabilities()
    assert capabilities.max_score_levels == 10 and capabilities.max_concurrent_requests == 8


@respx.mock
async def test_the_minimum_label_mass_set_is_the_one_applied() -> None:
    respx.post(URL).mock(return_value=completion({"<think>": 0.7, "A": 0.2, "B": 0.1}))
    answer = await model(min_label_mass=0.25).noul("s", "q?")
    assert answer.p_true == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("localhost:8080", "localhost:8080/v1/chat/completions"),
        ("localhost:8080/api", "localhost:8080/api/chat/completions"),
        ("http://127.0.0.1:8080/XX", "http://127.0.0.1:8080/XX/chat/completions"),
    ],
)
def test_the_endpoint_of_a_base_with_or_without_a_path(base: str, url: str) -> None:
    assert LogprobBackend(base).endpoint_url() == url


# -- what a completion says, and what a failed one was billed ---------------------------------


@respx.mock
async def test_the_served_model_and_usage_are_reported() -> None:
    respx.post(URL).mock(
        side_effect=[
            completion({"A": 0.9, "B": 0.1}, usage={"prompt_tokens": 50}),
            completion({"A": 0.9, "B": 0.1}, model=None),
        ]
    )
    first = await model().evaluate("s", {"q": Noul("q?")})
    assert (first.model, first.usage) == ("served-llama", Usage(input=50, output=0))
    second = await model().evaluate("s", {"q": Noul("q?")})
    assert second.model == "llama"  # none served: the one asked for


@respx.mock
async def test_a_failed_question_carries_what_every_question_so_far_was_billed() -> None:
    """Asked directly, the backend answers the questions one after another; through a
    model, the request is split and each part billed apart: the total is the same."""

    def respond(request: httpx.Request) -> httpx.Response:
        if b"two?" in request.content:
            return completion({"<think>": 0.9, "A": 0.1})
        return completion({"A": 0.9, "B": 0.1})

    respx.post(URL).mock(side_effect=respond)
    questions = {"first": Noul("one?"), "second": Noul("two?")}
    backend = LogprobBackend("http://127.0.0.1:8080").with_retry(NO_RETRY)
    with pytest.raises(DecisionError) as direct:
        await backend.evaluate(Request("llama", "s", questions))
    spend = SpendLog()
    with recording_decision_spend(spend), pytest.raises(DecisionError) as split:
        await model().evaluate("s", questions)
    for error in (direct.value, split.value):
        assert error.kind is DecisionErrorKind.BAD_RESPONSE
        assert error.detail.startswith("answers.second: the labels cover only 0.100")
        assert error.billed is not None and error.billed.usage == Usage(input=100, output=2)
    assert direct.value.billed is not None
    assert direct.value.billed.model == "served-llama"  # the model that answered so far
    assert spend.usage == Usage(input=100, output=2)


@respx.mock
async def test_a_first_question_that_fails_is_billed_for_itself_under_the_asked_model() -> None:
    respx.post(URL).mock(return_value=completion({"<think>": 0.9, "A": 0.1}))
    with pytest.raises(DecisionError) as caught:
        await model().evaluate("s", {"q": Noul("q?")})
    assert caught.value.billed is not None
    assert (caught.value.billed.model, caught.value.billed.usage) == (
        "llama",
        Usage(input=50, output=1),
    )


@respx.mock
async def test_a_failed_question_with_no_usage_keeps_the_served_model() -> None:
    respx.post(URL).mock(return_value=completion({"<think>": 0.9, "A": 0.1}, usage=None))
    with pytest.raises(DecisionError) as caught:
        await model().evaluate("s", {"q": Noul("q?")})
    assert caught.value.billed is not None
    assert (caught.value.billed.model, caught.value.billed.usage) == ("served-llama", None)


@respx.mock
async def test_a_completion_without_logprobs_or_of_the_wrong_shape() -> None:
    respx.post(URL).mock(
        side_effect=[completion(None), httpx.Response(200, json={"choices": "none"})]
    )
    with pytest.raises(DecisionError) as no_logprobs:
        await model().evaluate("s", {"q": Noul("q?")})
    assert no_logprobs.value.detail == (
        "answers.q: the response has no logprobs for its first token"
    )
    with pytest.raises(DecisionError) as shape:
        await model().evaluate("s", {"q": Noul("q?")})
    assert shape.value.detail == "choices: Input should be a valid tuple"


async def test_a_key_that_cannot_be_sent_records_no_request() -> None:
    spend = SpendLog()
    with recording_decision_spend(spend), pytest.raises(DecisionError) as caught:
        await model().with_api_key("   ").evaluate("s", {"q": Noul("q?")})
    assert caught.value.kind is DecisionErrorKind.MISSING_API_KEY
    assert caught.value.billed is None
    assert spend.records == []


@respx.mock
async def test_a_score_is_answered_per_level() -> None:
    respx.post(URL).mock(return_value=completion({"0": 0.25, "1": 0.75}))
    answer = await model().score("s", "How much?", ["none", "lots"])
    assert answer.legend == ("none", "lots") and answer.score == pytest.approx(0.75)
    sent = json.loads(respx.calls[0].request.content)
    assert sent["top_logprobs"] == 20


@respx.mock
async def test_a_completion_of_the_wrong_shape_names_the_whole_path() -> None:
    entry = {"top_logprobs": [{"token": "A", "logprob": "high"}]}
    body = {"choices": [{"logprobs": {"content": [entry]}}]}
    respx.post(URL).mock(return_value=httpx.Response(200, json=body))
    with pytest.raises(DecisionError) as caught:
        await model().evaluate("s", {"q": Noul("q?")})
    assert caught.value.detail == (
        "choices.0.logprobs.content.0.top_logprobs.0.logprob: Input should be a valid number"
    )
