"""OpenAI's Decisions API on the wire (respx): mapping, answers by name, refusals, usage."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx
from decision_helpers import NO_RETRY, SECRET, SpendLog, price_table

from yoagent.core import Usage
from yoagent.core.provider import set_price_resolver
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Noul,
    OpenAiDecisionBackend,
    Score,
)

URL = "https://api.openai.com/v1/decisions"
QUESTIONS = {
    "urgent": Noul({"ask": "Urgent?"}, if_true="blocked", if_false="no deadline"),
    "team": Choice("Team?", {"billing": "money", "technical": None}),
    "mood": Score("Mood?", ["calm", "angry"]),
}
ANSWERS: list[dict[str, Any]] = [
    {"type": "predicate", "name": "urgent", "probability": 0.8},
    {
        "type": "choice",
        "name": "team",
        "choice": "technical",
        "probabilities": [
            {"value": "technical", "probability": 0.75},
            {"value": "billing", "probability": 0.25},
        ],
        "confidence": 0.5,
    },
    {
        "type": "score",
        "name": "mood",
        "score": 0.9,
        "probabilities": [
            {"value": 0, "label": "calm", "probability": 0.1},
            {"value": 1, "label": "angry", "probability": 0.9},
        ],
        "confidence": 0.8,
    },
]
USAGE = {
    "input_tokens": 1_000_000,
    "input_tokens_details": {"cached_tokens": 400_000, "cache_write_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 1_000_005,
}


def reply(answers: list[dict[str, Any]] | None = None, **extra: Any) -> httpx.Response:
    body = {"model": "gpt-6-luna", "answers": ANSWERS if answers is None else answers}
    body["usage"] = USAGE
    body.update(extra)
    return httpx.Response(200, json=body)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", f" {SECRET} ")
    return SECRET


def luna() -> DecisionModel:
    return DecisionModel.gpt_6_luna().with_retry(NO_RETRY)


@respx.mock
async def test_the_request_maps_each_question_kind(key: str) -> None:
    route = respx.post(URL).mock(return_value=reply())
    await luna().evaluate({"ticket": "help"}, QUESTIONS)
    sent = route.calls[0].request
    assert sent.headers["authorization"] == f"Bearer {key}"
    body = json.loads(sent.content)
    assert body["model"] == "gpt-6-luna"
    assert body["input"] == '{\n  "ticket": "help"\n}'
    assert body["questions"] == [
        {
            "type": "predicate",
            "name": "urgent",
            "instructions": (
                '{\n  "ask": "Urgent?"\n}\n\nTrue when: blocked\nFalse when: no deadline'
            ),
        },
        {
            "type": "choice",
            "name": "team",
            "instructions": "Team?",
            "choices": [{"value": "billing", "description": "money"}, {"value": "technical"}],
        },
        {
            "type": "score",
            "name": "mood",
            "instructions": "Mood?",
            "levels": [{"label": "calm"}, {"label": "angry"}],
        },
    ]
    assert "safety_identifier" not in body


@respx.mock
async def test_a_safety_identifier_is_sent_when_set(key: str) -> None:
    route = respx.post("http://127.0.0.1:9000/v1/decisions").mock(return_value=reply())
    backend = (
        OpenAiDecisionBackend()
        .with_base_url("http://127.0.0.1:9000/v1/")
        .with_safety_identifier("user-42")
    )
    await DecisionModel.from_openai_backend(backend, "gpt-6-luna").evaluate("s", QUESTIONS)
    assert json.loads(route.calls[0].request.content)["safety_identifier"] == "user-42"
    with pytest.raises(ValueError, match="128"):
        OpenAiDecisionBackend().with_safety_identifier("x" * 129)


def test_a_url_ending_in_decisions_is_used_as_is() -> None:
    backend = OpenAiDecisionBackend().with_base_url("https://gw.example/openai/v1/decisions/")
    assert backend.endpoint_url() == "https://gw.example/openai/v1/decisions"


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://gw.example/v1?api-version=2", "https://gw.example/v1/decisions?api-version=2"),
        ("https://gw.example/v1/decisions/?k=a/b", "https://gw.example/v1/decisions?k=a/b"),
    ],
)
def test_a_query_in_the_base_url_stays_after_the_path(base: str, url: str) -> None:
    assert OpenAiDecisionBackend().with_base_url(base).endpoint_url() == url


@respx.mock
async def test_a_request_goes_to_the_path_before_the_base_urls_query(key: str) -> None:
    route = respx.post("http://127.0.0.1:9000/v1/decisions", params={"tenant": "t1"}).mock(
        return_value=reply()
    )
    backend = OpenAiDecisionBackend().with_base_url("http://127.0.0.1:9000/v1/?tenant=t1")
    await DecisionModel.from_openai_backend(backend, "gpt-6-luna").evaluate("s", QUESTIONS)
    assert route.call_count == 1
    assert str(route.calls[0].request.url) == "http://127.0.0.1:9000/v1/decisions?tenant=t1"


@respx.mock
async def test_every_answer_kind_is_read_and_matched_by_name(key: str) -> None:
    respx.post(URL).mock(return_value=reply(list(reversed(ANSWERS))))
    evaluation = await luna().evaluate("s", QUESTIONS)
    assert list(evaluation.answers) == ["urgent", "team", "mood"]
    urgent = evaluation.noul("urgent")
    assert urgent is not None and urgent.p_true == 0.8
    assert urgent.confidence == pytest.approx(0.6)  # no predicate confidence: |2p - 1|
    team = evaluation.choice("team")
    assert team is not None and team.choice == "technical"
    assert team.probabilities == (("billing", 0.25), ("technical", 0.75))  # option order
    mood = evaluation.score("mood")
    assert mood is not None and mood.probabilities == (0.1, 0.9) and mood.score == 0.9
    assert evaluation.usage == Usage(input=600_000, output=5, cache_read=400_000)


@respx.mock
async def test_unnamed_answers_are_matched_by_position_when_counts_match(key: str) -> None:
    unnamed = [{**answer, "name": None} for answer in ANSWERS]
    respx.post(URL).mock(return_value=reply(unnamed))
    evaluation = await luna().evaluate("s", QUESTIONS)
    assert evaluation.p_true("urgent") == 0.8


@respx.mock
async def test_unnamed_answers_with_another_count_are_missing(key: str) -> None:
    unnamed = [{**answer, "name": None} for answer in ANSWERS[:2]]
    respx.post(URL).mock(return_value=reply(unnamed))
    with pytest.raises(DecisionError) as caught:
        await luna().evaluate("s", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert "answers.urgent: missing" in str(caught.value)


@respx.mock
async def test_a_refusal_names_the_question_is_not_retried_and_still_bills(key: str) -> None:
    from yoagent.decision import recording_decision_spend

    answers = [ANSWERS[0], {"type": "refusal", "name": "team", "refusal": "no"}, ANSWERS[2]]
    route = respx.post(URL).mock(return_value=reply(answers))
    spend = SpendLog()
    with recording_decision_spend(spend), pytest.raises(DecisionError) as caught:
        await DecisionModel.gpt_6_luna().evaluate("s", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.REFUSED and not caught.value.retryable
    assert caught.value.question == "team"
    assert "`team`" in str(caught.value)
    assert route.call_count == 1
    assert spend.usage == Usage(input=600_000, output=5, cache_read=400_000)


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ({"type": "choice", "name": "urgent", "choice": "x"}, "type 'choice' answers a noul"),
        ({"type": "predicate", "name": "urgent"}, "answers.urgent.probability: missing"),
        ({"type": "predicate", "name": "urgent", "probability": 2}, "not a probability"),
    ],
)
@respx.mock
async def test_an_unusable_answer_is_a_bad_response(
    key: str, answer: dict[str, Any], fragment: str
) -> None:
    respx.post(URL).mock(return_value=reply([answer, *ANSWERS[1:]]))
    with pytest.raises(DecisionError) as caught:
        await luna().evaluate("s", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert fragment in str(caught.value)


@respx.mock
async def test_a_choice_value_outside_the_options_is_refused(key: str) -> None:
    bad = {**ANSWERS[1], "probabilities": [{"value": "sales", "probability": 1.0}]}
    respx.post(URL).mock(return_value=reply([ANSWERS[0], bad, ANSWERS[2]]))
    with pytest.raises(DecisionError, match="'sales' is not one of the options"):
        await luna().evaluate("s", QUESTIONS)


@respx.mock
async def test_a_score_index_out_of_range_is_refused(key: str) -> None:
    bad = {**ANSWERS[2], "probabilities": [{"value": 2, "probability": 1.0}]}
    respx.post(URL).mock(return_value=reply([ANSWERS[0], ANSWERS[1], bad]))
    with pytest.raises(DecisionError, match="2 is not a level index below 2"):
        await luna().evaluate("s", QUESTIONS)


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (529, "rate_limited")])
@respx.mock
async def test_rate_limits_are_retried(key: str, status: int, kind: str) -> None:
    route = respx.post(URL).mock(side_effect=[httpx.Response(status), reply()])
    from decision_helpers import FAST_RETRY

    await DecisionModel.gpt_6_luna().with_retry(FAST_RETRY).evaluate("s", QUESTIONS)
    assert route.call_count == 2


@respx.mock
async def test_422_is_invalid_and_a_malformed_success_is_not_retried(key: str) -> None:
    route = respx.post(URL).mock(return_value=httpx.Response(422, json={"error": "too long"}))
    with pytest.raises(DecisionError) as caught:
        await luna().evaluate("s", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.INVALID
    route.mock(return_value=httpx.Response(200, text="not json"))
    with pytest.raises(DecisionError) as caught:
        await DecisionModel.gpt_6_luna().evaluate("s", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert route.call_count == 2


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
async def test_a_refused_key_names_openai_api_key(key: str, status: int) -> None:
    respx.post(URL).mock(return_value=httpx.Response(status, json={"error": {"message": key}}))
    with pytest.raises(DecisionError) as caught:
        await luna().evaluate("s", QUESTIONS)
    assert "$OPENAI_API_KEY" in str(caught.value) and key not in str(caught.value)


async def test_no_key_fails_before_sending() -> None:
    with respx.mock(assert_all_called=False) as router:
        with pytest.raises(DecisionError) as caught:
            await luna().evaluate("s", QUESTIONS)
        assert not router.calls
    assert caught.value.kind is DecisionErrorKind.MISSING_API_KEY
    assert caught.value.variable == "OPENAI_API_KEY"


def test_the_key_is_never_in_a_repr(key: str) -> None:
    model = DecisionModel.gpt_6_luna().with_api_key(key)
    assert key not in repr(model) and "[redacted]" in repr(model)


@respx.mock
async def test_luna_is_priced_per_input_token_on_openais_host_only(key: str) -> None:
    set_price_resolver(price_table)
    respx.post(URL).mock(return_value=reply())
    evaluation = await luna().evaluate("s", QUESTIONS)
    assert evaluation.cost_usd == pytest.approx(0.1)  # 1M input tokens, cached ones included
    respx.post("http://127.0.0.1:9000/v1/decisions").mock(return_value=reply())
    proxied = OpenAiDecisionBackend().with_base_url("http://127.0.0.1:9000/v1")
    model = DecisionModel.from_openai_backend(proxied, "gpt-6-luna").with_retry(NO_RETRY)
    assert (await model.evaluate("s", QUESTIONS)).cost_usd is None
