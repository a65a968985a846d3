"""OpenAI's Decisions API, the exact edges of reading an answer: what the server said wins
over what yoagent would compute (choice, score, confidence), option order, boolean option
values, every refusal of a malformed answer word for word, and usage with cached and
cache-written tokens. (Added from mutation testing: each pins a behaviour a surviving
mutant changed.)"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx
from decision_helpers import NO_RETRY, SECRET

from yoagent.core import Usage
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Evaluation,
    Noul,
    OpenAiDecisionBackend,
    Request,
    Score,
)
from yoagent.decision._openai import parse_decisions_response

QUESTIONS = {
    "urgent": Noul("Urgent?"),
    "team": Choice("Team?", ["zeta", "alpha"]),  # option order is not alphabetical
    "mood": Score("Mood?", ["calm", "angry"]),
}
REQUEST = Request("gpt-6-luna", "s", QUESTIONS)
PREDICATE: dict[str, Any] = {"type": "predicate", "name": "urgent", "probability": 0.8}
CHOICE: dict[str, Any] = {
    "type": "choice",
    "name": "team",
    "probabilities": [
        {"value": "alpha", "probability": 0.75},
        {"value": "zeta", "probability": 0.25},
    ],
}
SCORE: dict[str, Any] = {
    "type": "score",
    "name": "mood",
    "probabilities": [
        {"value": 0, "label": "calm", "probability": 0.1},
        {"value": 1, "label": "angry", "probability": 0.9},
    ],
}


def parsed(*answers: dict[str, Any], **extra: Any) -> Evaluation:
    return parse_decisions_response({"answers": list(answers), **extra}, REQUEST)


def refusal(*answers: dict[str, Any], **extra: Any) -> DecisionError:
    with pytest.raises(DecisionError) as caught:
        parsed(*answers, **extra)
    return caught.value


# -- what the server said wins ----------------------------------------------------------------


def test_the_servers_choice_score_and_confidences_are_kept() -> None:
    evaluation = parsed(
        {**PREDICATE, "confidence": 0.9},
        {**CHOICE, "choice": "zeta", "confidence": 0.3},  # not the likeliest option
        {**SCORE, "score": 0.7, "confidence": 0.2},
    )
    urgent, team, mood = (
        evaluation.noul("urgent"),
        evaluation.choice("team"),
        evaluation.score("mood"),
    )
    assert urgent is not None and team is not None and mood is not None
    assert urgent.confidence == 0.9
    assert (team.choice, team.confidence) == ("zeta", 0.3)
    assert (mood.score, mood.confidence) == (0.7, 0.2)


def test_what_the_server_leaves_out_is_computed_in_option_order() -> None:
    evaluation = parsed(PREDICATE, CHOICE, SCORE)
    team = evaluation.choice("team")
    assert team is not None
    assert team.probabilities == (("zeta", 0.25), ("alpha", 0.75))  # option order
    assert team.choice == "alpha"
    assert team.confidence == pytest.approx(0.5)  # (2 · 0.75 − 1) / 1
    mood = evaluation.score("mood")
    assert mood is not None and mood.legend == ("calm", "angry")
    assert mood.confidence == pytest.approx(0.8)


def test_boolean_option_values_name_the_options_true_and_false() -> None:
    request = Request("gpt-6-luna", "s", {"ok": Choice("Fine?", ["false", "true"])})
    answer = {
        "type": "choice",
        "name": "ok",
        "choice": True,
        "probabilities": [
            {"value": True, "probability": 0.7},
            {"value": False, "probability": 0.3},
        ],
    }
    choice = parse_decisions_response({"answers": [answer]}, request).choice("ok")
    assert choice is not None and choice.choice == "true"
    assert choice.probabilities == (("false", 0.3), ("true", 0.7))


# -- malformed answers, word for word ---------------------------------------------------------


def test_a_body_that_is_not_an_object_or_has_no_answers_array() -> None:
    with pytest.raises(DecisionError) as not_object:
        parse_decisions_response([PREDICATE], REQUEST)
    assert not_object.value.detail == "the response is not a JSON object"
    no_array = refusal(answers={"urgent": PREDICATE})
    assert no_array.detail == "the response has no `answers` array"


def test_an_answer_of_the_wrong_shape_names_its_index_and_field() -> None:
    error = refusal(PREDICATE, {**CHOICE, "probabilities": "most likely alpha"})
    assert error.kind is DecisionErrorKind.BAD_RESPONSE
    assert error.detail.startswith("answers[1].probabilities: ")
    assert "list" in error.detail


@pytest.mark.parametrize(
    ("choice", "detail"),
    [
        ({**CHOICE, "probabilities": []}, "answers.team.probabilities: missing"),
        (
            {**CHOICE, "probabilities": [{"value": "alpha"}]},
            "answers.team.probabilities.alpha: missing",
        ),
        (
            {**CHOICE, "probabilities": [{"value": "beta", "probability": 1.0}]},
            "answers.team.probabilities: 'beta' is not one of the options",
        ),
    ],
)
def test_a_choice_without_usable_probabilities(choice: dict[str, Any], detail: str) -> None:
    error = refusal(PREDICATE, choice, SCORE)
    assert (error.kind, error.detail) == (DecisionErrorKind.BAD_RESPONSE, detail)


@pytest.mark.parametrize(
    ("entries", "detail"),
    [
        (
            [{"value": 1, "probability": 0.9}],
            "answers.mood.probabilities: level 0 has no probability",
        ),
        (
            [{"value": 0, "probability": 0.9}],
            "answers.mood.probabilities: level 1 has no probability",
        ),
        (
            [{"value": True, "probability": 0.9}, {"value": 0, "probability": 0.1}],
            "answers.mood.probabilities: True is not a level index below 2",
        ),
        (
            [{"value": "1", "probability": 0.9}, {"value": 0, "probability": 0.1}],
            "answers.mood.probabilities: '1' is not a level index below 2",
        ),
    ],
)
def test_a_score_without_one_probability_per_level_index(
    entries: list[dict[str, Any]], detail: str
) -> None:
    error = refusal(PREDICATE, CHOICE, {**SCORE, "probabilities": entries})
    assert (error.kind, error.detail) == (DecisionErrorKind.BAD_RESPONSE, detail)


def test_a_refusal_says_the_model_declined() -> None:
    error = refusal(PREDICATE, {"type": "refusal", "name": "team"}, SCORE)
    assert error.kind is DecisionErrorKind.REFUSED
    assert str(error) == (
        "decision model refused to answer question `team`: the model declined to answer (refusal)"
    )


# -- usage ------------------------------------------------------------------------------------


def test_cached_and_cache_written_tokens_are_apart_from_fresh_input() -> None:
    details = {"cached_tokens": 300, "cache_write_tokens": 200}
    usage = {"input_tokens": 1_000, "output_tokens": 4, "input_tokens_details": details}
    assert parsed(PREDICATE, CHOICE, SCORE, usage=usage).usage == Usage(
        input=500, output=4, cache_read=300, cache_write=200
    )
    every = {"input_tokens": 500, "input_tokens_details": details}
    assert parsed(PREDICATE, CHOICE, SCORE, usage=every).usage == Usage(
        input=0, cache_read=300, cache_write=200
    )


@pytest.mark.parametrize("extra", [{}, {"usage": {"input_tokens": -1}}, {"usage": "lots"}])
def test_usage_not_reported_or_unreadable_is_none(extra: dict[str, Any]) -> None:
    assert parsed(PREDICATE, CHOICE, SCORE, **extra).usage is None
    assert refusal(PREDICATE, **extra).billed == Evaluation(model="gpt-6-luna", usage=None)


# -- the backend's settings -------------------------------------------------------------------


def test_safety_identifiers_of_one_to_128_characters() -> None:
    assert (
        OpenAiDecisionBackend().with_safety_identifier("x" * 128).body(REQUEST)["safety_identifier"]
        == "x" * 128
    )
    for bad in ("", "x" * 129):
        with pytest.raises(ValueError, match="safety identifier") as refused:
            OpenAiDecisionBackend().with_safety_identifier(bad)
        assert str(refused.value) == (
            f"a safety identifier has 1 to 128 characters, got {len(bad)}"
        )


def test_the_endpoint_and_host() -> None:
    assert OpenAiDecisionBackend().is_openai_host()
    proxied = OpenAiDecisionBackend().with_base_url(" http://127.0.0.1:9000/BOX/ ")
    assert proxied.endpoint_url() == "http://127.0.0.1:9000/BOX/decisions"
    assert not proxied.is_openai_host()


def test_json_text_is_sent_as_itself() -> None:
    request = Request("gpt-6-luna", {"name": "café"}, {"q": Noul({"ask": "Ünïcode?"})})
    body = OpenAiDecisionBackend().body(request)
    assert body["input"] == '{\n  "name": "café"\n}'
    assert body["questions"][0]["instructions"] == '{\n  "ask": "Ünïcode?"\n}'


@respx.mock
async def test_a_key_variable_of_your_own_is_read_at_call_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    route = respx.post("https://api.openai.com/v1/decisions").mock(
        return_value=httpx.Response(200, json={"answers": [PREDICATE]})
    )
    backend = OpenAiDecisionBackend().with_api_key_env("MY_DECISIONS_KEY").with_retry(NO_RETRY)
    model = DecisionModel.from_openai_backend(backend, "gpt-6-luna")
    with pytest.raises(DecisionError) as missing:
        await model.evaluate("s", {"urgent": Noul("Urgent?")})
    assert missing.value.variable == "MY_DECISIONS_KEY"
    monkeypatch.setenv("MY_DECISIONS_KEY", SECRET)
    await model.evaluate("s", {"urgent": Noul("Urgent?")})
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
    assert json.loads(route.calls[0].request.content)["model"] == "gpt-6-luna"


def test_an_entry_of_the_wrong_shape_names_the_whole_path() -> None:
    error = refusal(
        PREDICATE, {**CHOICE, "probabilities": [{"value": "alpha", "probability": "x"}]}
    )
    assert error.detail == "answers[1].probabilities.0.probability: Input should be a valid number"
