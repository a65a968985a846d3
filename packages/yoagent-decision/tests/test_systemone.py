"""SystemOne backends on the wire (respx): TypeSafe's Jev, OpenCode Zen, a local server."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import httpx
import pytest
import respx
from decision_helpers import FAST_RETRY, NO_RETRY, SECRET, price_table

from yoagent.core import Usage
from yoagent.core.provider import set_price_resolver
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Noul,
    Score,
    SystemOneBackend,
)

TYPESAFE_URL = "https://api.typesafe.ai/v1/systemone"
LOCAL_URL = "http://127.0.0.1:8000/v1/systemone"

QUESTIONS = {
    "urgent": Noul("Does this convey urgency?"),
    "team": Choice("Which team?", ["billing", "technical", "sales"]),
    "mood": Score("How frustrated?", ["calm", "frustrated", "angry"]),
}

ANSWERS: dict[str, Any] = {
    "urgent": {"type": "noul", "noul": 0.9},
    "team": {
        "type": "choice",
        "choice": "technical",
        "probabilities": {"billing": 0.1, "technical": 0.85, "sales": 0.05},
        "confidence": 0.7,
    },
    "mood": {
        "type": "score",
        "score": 1.4,
        "legend": {"0": "calm", "1": "frustrated", "2": "angry"},
        "probabilities": {"0": 0.1, "1": 0.4, "2": 0.5},
        "confidence": 0.25,
    },
}


def reply(answers: dict[str, Any] | None = None, **extra: Any) -> httpx.Response:
    body: dict[str, Any] = {
        "model": "jev-1.13.0",
        "answers": ANSWERS if answers is None else answers,
        "usage": {"input_tokens": 1_000_000, "output_tokens": 7},
    }
    body.update(extra)
    return httpx.Response(200, json=body)


def local() -> DecisionModel:
    return DecisionModel.local("http://127.0.0.1:8000").with_retry(FAST_RETRY)


# --- the request ----------------------------------------------------------------------------


@respx.mock
async def test_the_request_keeps_key_order_question_order_and_option_order() -> None:
    route = respx.post(LOCAL_URL).mock(return_value=reply())
    questions = {
        "urgent": Noul("Urgent?", if_true="Customer is blocked", if_false="No deadline"),
        "team": Choice("Team?", {"sales": None, "billing": "Invoices, refunds"}),
        "mood": Score("Mood?", ["calm", {"level": "angry"}]),
    }
    with pytest.raises(DecisionError):  # the canned answers do not fit: only the body matters
        await local().evaluate({"ticket": "help"}, questions)
    sent = route.calls[0].request
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    body = json.loads(sent.content)
    assert list(body) == ["state", "model", "questions"]
    assert body["state"] == {"ticket": "help"}
    assert body["model"] == "jev-latest"
    assert list(body["questions"]) == ["urgent", "team", "mood"]
    assert body["questions"]["urgent"] == {
        "type": "noul",
        "instructions": "Urgent?",
        "criteria": {"true": "Customer is blocked", "false": "No deadline"},
    }
    assert list(body["questions"]["team"]["criteria"]) == ["sales", "billing"]
    assert body["questions"]["team"]["criteria"] == {"sales": None, "billing": "Invoices, refunds"}
    assert body["questions"]["mood"]["criteria"] == ["calm", {"level": "angry"}]


@respx.mock
async def test_a_noul_without_criteria_sends_none() -> None:
    route = respx.post(LOCAL_URL).mock(return_value=reply({"q": {"type": "noul", "noul": 0.2}}))
    await local().noul("text", "Is it?")
    assert json.loads(route.calls[0].request.content)["questions"]["q"] == {
        "type": "noul",
        "instructions": "Is it?",
    }


@pytest.mark.parametrize(
    "base",
    [
        "http://127.0.0.1:8000",
        "http://127.0.0.1:8000/",
        " http://127.0.0.1:8000/v1 ",
        "http://127.0.0.1:8000/v1/systemone",
        "http://127.0.0.1:8000/v1/systemone/",
    ],
)
def test_every_spelling_of_a_base_url_reaches_the_same_endpoint(base: str) -> None:
    assert SystemOneBackend(base).endpoint_url() == LOCAL_URL


def test_a_base_url_with_a_query_keeps_the_path_before_it() -> None:
    backend = SystemOneBackend("http://127.0.0.1:8000/v1?token=abc&x=1")
    assert backend.endpoint_url() == f"{LOCAL_URL}?token=abc&x=1"


@respx.mock
async def test_a_token_in_the_urls_query_is_scrubbed_from_an_error_body_that_echoes_it() -> None:
    token = "SECRET-TOKEN-123456"
    respx.post(f"{LOCAL_URL}?token={token}").mock(
        return_value=httpx.Response(404, text=f"no route for POST /v1/systemone?token={token}")
    )
    model = DecisionModel.local(f"http://127.0.0.1:8000/v1?token={token}").with_retry(NO_RETRY)
    with pytest.raises(DecisionError) as caught:
        await model.evaluate("s", QUESTIONS)
    assert "no route for POST" in str(caught.value)
    assert token not in str(caught.value)


# --- answers --------------------------------------------------------------------------------


@respx.mock
async def test_every_answer_kind_is_read_with_the_reported_model_and_usage() -> None:
    respx.post(LOCAL_URL).mock(return_value=reply())
    evaluation = await local().evaluate("My card was charged twice!", QUESTIONS)
    assert evaluation.model == "jev-1.13.0"
    assert evaluation.usage == Usage(input=1_000_000, output=7)
    assert evaluation.cost_usd == 0.0  # local() is free
    assert list(evaluation.answers) == ["urgent", "team", "mood"]
    urgent = evaluation.noul("urgent")
    assert urgent is not None and urgent.p_true == 0.9
    assert urgent.confidence == pytest.approx(0.8)  # |2p - 1|: TypeSafe sends none
    team = evaluation.choice("team")
    assert team is not None and team.choice == "technical" and team.confidence == 0.7
    assert team.probabilities == (("billing", 0.1), ("technical", 0.85), ("sales", 0.05))
    mood = evaluation.score("mood")
    assert mood is not None and mood.score == 1.4 and mood.level == 2 and mood.label == "angry"
    assert mood.probabilities == (0.1, 0.4, 0.5)


@respx.mock
async def test_missing_confidence_choice_score_and_legend_are_computed() -> None:
    respx.post(LOCAL_URL).mock(
        return_value=reply(
            {
                "urgent": {"noul": 0.25, "confidence": None},
                "team": {"probabilities": {"billing": 0.2, "technical": 0.2, "sales": 0.6}},
                "mood": {"probabilities": [0.2, 0.3, 0.5], "legend": None},
            }
        )
    )
    evaluation = await local().evaluate("s", QUESTIONS)
    urgent, team, mood = (
        evaluation.noul("urgent"),
        evaluation.choice("team"),
        evaluation.score("mood"),
    )
    assert urgent is not None and urgent.confidence == pytest.approx(0.5)
    assert team is not None and team.choice == "sales"
    assert team.confidence == pytest.approx((3 * 0.6 - 1) / 2)
    assert mood is not None and mood.score == pytest.approx(0.3 + 2 * 0.5)
    assert mood.legend == ("calm", "frustrated", "angry")
    assert mood.confidence == pytest.approx((3 * 0.5 - 1) / 2)


@respx.mock
async def test_a_reported_confidence_wins_and_unknown_fields_are_ignored() -> None:
    respx.post(LOCAL_URL).mock(
        return_value=reply(
            {"q": {"type": "noul", "noul": 0.9, "confidence": 0.42, "rationale": "x"}},
            extra_top_level={"ignored": True},
        )
    )
    answer = await local().noul("s", "q?")
    assert answer.p_true == 0.9 and answer.confidence == 0.42


@pytest.mark.parametrize(
    ("answers", "fragment"),
    [
        ({"q": {"type": "noul"}}, "answers.q.noul: missing"),
        ({"q": {"type": "noul", "noul": None}}, "answers.q.noul: missing"),
        ({"q": {"type": "noul", "noul": "0.5"}}, "answers.q.noul"),
        ({"q": {"type": "noul", "noul": True}}, "answers.q.noul"),
        ({"q": {"type": "choice", "noul": 0.5}}, "type 'choice' answers a noul question"),
        ({}, "answers.q: missing"),
        ({"q": {"type": "noul", "noul": 1.5}}, "not a probability"),
        ({"q": {"type": "noul", "noul": -0.1}}, "not a probability"),
    ],
)
@respx.mock
async def test_an_unusable_noul_answer_is_a_bad_response(
    answers: dict[str, Any], fragment: str
) -> None:
    route = respx.post(LOCAL_URL).mock(return_value=reply(answers))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert fragment in str(caught.value)
    assert route.call_count == 1  # a billed answer is never retried


@respx.mock
async def test_a_nan_probability_is_a_bad_response() -> None:
    body = b'{"model": "m", "answers": {"q": {"type": "noul", "noul": NaN}}}'
    respx.post(LOCAL_URL).mock(return_value=httpx.Response(200, content=body))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert "nan" in str(caught.value).lower()


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (
            {"probabilities": {"billing": 0.5, "refunds": 0.5}},
            "'refunds' is not one of the options",
        ),
        (
            {"probabilities": {"billing": 0.5, "technical": 0.5}},
            "option 'sales' has no probability",
        ),
        ({"probabilities": {"billing": 0.5, "technical": 0.5, "sales": None}}, "sales: missing"),
        ({"probabilities": {"billing": 0.5, "technical": 0.4, "sales": 0.4}}, "sum to 1.3000"),
        (
            {"choice": "marketing", "probabilities": {"billing": 1, "technical": 0, "sales": 0}},
            "'marketing' is not one of the options",
        ),
        ({"probabilities": [0.2, 0.3, 0.5]}, "missing or not an object"),
    ],
)
@respx.mock
async def test_an_unusable_choice_answer_is_a_bad_response(
    answer: dict[str, Any], fragment: str
) -> None:
    respx.post(LOCAL_URL).mock(return_value=reply({"q": answer}))
    with pytest.raises(DecisionError) as caught:
        await local().choice("s", "Team?", ["billing", "technical", "sales"])
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert fragment in str(caught.value)


@respx.mock
async def test_choice_probabilities_rounded_by_typesafe_are_accepted() -> None:
    respx.post(LOCAL_URL).mock(
        return_value=reply({"q": {"probabilities": {"a": 0.33, "b": 0.33, "c": 0.33}}})
    )
    answer = await local().choice("s", "Which?", ["a", "b", "c"])
    assert answer.choice == "a"  # a tie goes to the option listed first


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ({"probabilities": {"0": 0.5, "3": 0.5}}, "'3' is not a level index below 3"),
        ({"probabilities": {"0": 0.5, "x": 0.5}}, "'x' is not a level index below 3"),
        ({"probabilities": {"0": 0.5, "1": 0.5}}, "level 2 has no probability"),
        ({"probabilities": [0.5, 0.5]}, "not one entry per level"),
        ({"probabilities": [0.2, 0.3, 0.5], "score": 2.5}, "not a level between 0 and 2"),
    ],
)
@respx.mock
async def test_an_unusable_score_answer_is_a_bad_response(
    answer: dict[str, Any], fragment: str
) -> None:
    respx.post(LOCAL_URL).mock(return_value=reply({"q": answer}))
    with pytest.raises(DecisionError) as caught:
        await local().score("s", "Mood?", ["calm", "frustrated", "angry"])
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert fragment in str(caught.value)


@respx.mock
async def test_answers_nobody_asked_for_are_dropped() -> None:
    respx.post(LOCAL_URL).mock(
        return_value=reply({"q": {"noul": 0.3}, "smuggled": {"type": "noul", "noul": 1.0}})
    )
    evaluation = await local().evaluate("s", {"q": Noul("q?")})
    assert list(evaluation.answers) == ["q"]


@respx.mock
async def test_per_answer_input_tokens_are_summed_without_top_level_usage() -> None:
    body = {
        "model": "m",
        "answers": {"a": {"noul": 0.1, "input_tokens": 30}, "b": {"noul": 0.2, "input_tokens": 12}},
    }
    respx.post(LOCAL_URL).mock(return_value=httpx.Response(200, json=body))
    evaluation = await local().evaluate("s", {"a": Noul("a?"), "b": Noul("b?")})
    assert evaluation.usage == Usage(input=42)


@respx.mock
async def test_no_usage_at_all_is_not_reported_and_a_missing_model_falls_back() -> None:
    respx.post(LOCAL_URL).mock(
        return_value=httpx.Response(200, json={"model": "", "answers": {"q": {"noul": 0.1}}})
    )
    evaluation = await local().evaluate("s", {"q": Noul("q?")})
    assert evaluation.usage is None
    assert evaluation.model == "jev-latest"
    assert evaluation.cost_usd == 0.0  # a free model stays $0 without usage


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 529])
@respx.mock
async def test_rate_limits_and_overload_are_retried_then_reported(status: int) -> None:
    route = respx.post(LOCAL_URL).mock(return_value=httpx.Response(status, text="slow down"))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    error = caught.value
    assert error.kind is DecisionErrorKind.RATE_LIMITED and error.retryable
    assert error.status == status and error.body == "slow down" and error.retry_after is None
    assert route.call_count == 4  # the first try and three retries


@respx.mock
async def test_a_rate_limit_then_success_answers() -> None:
    route = respx.post(LOCAL_URL).mock(
        side_effect=[httpx.Response(429), reply({"q": {"noul": 0.6}})]
    )
    answer = await local().noul("s", "q?")
    assert answer.p_true == 0.6 and route.call_count == 2


@respx.mock
async def test_retry_after_overrides_the_backoff() -> None:
    route = respx.post(LOCAL_URL).mock(
        side_effect=[
            httpx.Response(429, headers={"retry-after": "0.1"}),
            reply({"q": {"noul": 0.6}}),
        ]
    )
    started = time.monotonic()
    await DecisionModel.local("http://127.0.0.1:8000").noul("s", "q?")  # default: 1 s backoff
    elapsed = time.monotonic() - started
    assert route.call_count == 2
    # the server's 0.1 s, not the backoff (1 s, at least 0.8 s with its jitter)
    assert 0.09 <= elapsed < 0.75


@respx.mock
async def test_retry_after_is_capped_at_the_maximum_delay() -> None:
    respx.post(LOCAL_URL).mock(
        side_effect=[
            httpx.Response(529, headers={"retry-after": "600"}),
            reply({"q": {"noul": 0.6}}),
        ]
    )
    retry = FAST_RETRY.__class__(max_retries=1, initial_delay=0.0, max_delay=0.2, jitter=0.0)
    started = time.monotonic()
    await DecisionModel.local("http://127.0.0.1:8000").with_retry(retry).noul("s", "q?")
    assert time.monotonic() - started < 5.0


@respx.mock
async def test_the_rate_limit_error_carries_the_retry_after_it_was_given() -> None:
    respx.post(LOCAL_URL).mock(return_value=httpx.Response(429, headers={"retry-after": "2.5"}))
    model = DecisionModel.local("http://127.0.0.1:8000").with_retry(NO_RETRY)
    with pytest.raises(DecisionError) as caught:
        await model.noul("s", "q?")
    assert caught.value.retry_after == 2.5
    assert "retry after 2.5s" in str(caught.value)


@respx.mock
async def test_422_is_invalid_and_not_retried() -> None:
    route = respx.post(LOCAL_URL).mock(
        return_value=httpx.Response(422, json={"detail": "state too long"})
    )
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.INVALID and not caught.value.retryable
    assert "server rejected the request (422)" in str(caught.value)
    assert "state too long" in str(caught.value)
    assert route.call_count == 1


@pytest.mark.parametrize("status", [400, 404, 500, 503])
@respx.mock
async def test_other_statuses_are_http_errors_with_a_truncated_body(status: int) -> None:
    route = respx.post(LOCAL_URL).mock(return_value=httpx.Response(status, text="x" * 5_000))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    error = caught.value
    assert error.kind is DecisionErrorKind.HTTP and error.status == status
    assert error.body is not None and len(error.body.encode()) <= 2_000 + len("…".encode())
    assert route.call_count == 1


@pytest.mark.parametrize(
    "body", [b"<html>oops</html>", b"", b'{"answers": {"q": {"noul": 0.5}}'], ids=str
)
@respx.mock
async def test_a_malformed_success_is_a_bad_response_and_not_retried(body: bytes) -> None:
    route = respx.post(LOCAL_URL).mock(return_value=httpx.Response(200, content=body))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE and not caught.value.retryable
    assert route.call_count == 1


_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{margin:0}</style>"
    "</head><body><h1>502 Bad Gateway</h1></body></html>"
)


@respx.mock
async def test_a_web_page_is_summarised_by_its_title_never_shown_raw() -> None:
    """A proxy's error page, or a portal's page answered with 200, reached the tool
    gate's denial (and the model) as raw HTML (issue 27)."""
    route = respx.post(LOCAL_URL).mock(
        return_value=httpx.Response(502, text=_PAGE, headers={"content-type": "text/html"})
    )
    model = local().with_retry(NO_RETRY)
    with pytest.raises(DecisionError) as caught:
        await model.noul("s", "q?")
    assert str(caught.value) == (
        "decision model returned HTTP 502: an HTML page (title: 502 Bad Gateway)"
    )
    route.mock(return_value=httpx.Response(200, text=_PAGE))  # no content type: by its start
    with pytest.raises(DecisionError) as caught:
        await model.noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert "<" not in str(caught.value)
    assert "an HTML page (title: 502 Bad Gateway)" in str(caught.value)


@respx.mock
async def test_an_oversized_success_is_a_bad_response_and_an_oversized_error_is_cut() -> None:
    route = respx.post(LOCAL_URL).mock(return_value=httpx.Response(200, content=b" " * 9_000_000))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE and "over 8 MiB" in str(caught.value)
    route.mock(return_value=httpx.Response(500, content=b"e" * 9_000_000))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.HTTP
    assert len((caught.value.body or "").encode()) <= 2_003


@pytest.mark.parametrize("key", ["line\nbreak", "café", "bell\x07"])
async def test_a_key_a_header_cannot_carry_is_refused_before_sending(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", f"{SECRET}{key}")
    with respx.mock(assert_all_called=False) as router:
        with pytest.raises(DecisionError) as caught:
            await DecisionModel.jev().noul("s", "q?")
        assert not router.calls
    assert caught.value.kind is DecisionErrorKind.INVALID
    assert "$TYPESAFE_API_KEY cannot be sent" in str(caught.value)
    assert SECRET not in str(caught.value)


@respx.mock
async def test_a_success_that_is_not_an_object_is_a_bad_response() -> None:
    respx.post(LOCAL_URL).mock(return_value=httpx.Response(200, json=[1, 2]))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert "an array" in str(caught.value)


@respx.mock
async def test_transport_failures_are_retried() -> None:
    route = respx.post(LOCAL_URL).mock(
        side_effect=[httpx.ConnectError("refused"), reply({"q": {"noul": 0.4}})]
    )
    assert (await local().noul("s", "q?")).p_true == 0.4
    assert route.call_count == 2


@respx.mock
async def test_transport_failures_end_as_a_retryable_transport_error() -> None:
    route = respx.post(LOCAL_URL).mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.TRANSPORT and caught.value.retryable
    assert route.call_count == 4


@respx.mock
async def test_a_body_httpx_cannot_decode_is_a_bad_response_not_retried() -> None:
    route = respx.post(LOCAL_URL).mock(side_effect=httpx.DecodingError("bad gzip"))
    with pytest.raises(DecisionError) as caught:
        await local().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE and not caught.value.retryable
    assert "DecodingError: bad gzip" in str(caught.value)
    assert route.call_count == 1


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:8000", "http://[::1:8000", "127.0.0.1:8000"])
async def test_a_malformed_url_is_invalid_and_not_retried(url: str) -> None:
    model = DecisionModel.local(url)  # default retries: a retried error would take seconds
    started = time.monotonic()
    with pytest.raises(DecisionError) as caught:
        await model.noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.INVALID and not caught.value.retryable
    assert time.monotonic() - started < 0.9


async def test_a_real_connection_refusal_is_a_transport_error() -> None:
    model = DecisionModel.local("http://127.0.0.1:9").with_retry(NO_RETRY)
    with pytest.raises(DecisionError) as caught:
        await model.noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.TRANSPORT


# --- keys -----------------------------------------------------------------------------------


@respx.mock
async def test_jev_reads_its_key_and_base_url_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    model = DecisionModel.jev().with_retry(NO_RETRY)  # built before the variables exist
    monkeypatch.setenv("TYPESAFE_API_KEY", f"  {SECRET}\n")
    monkeypatch.setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:8000/v1")
    route = respx.post(LOCAL_URL).mock(return_value=reply({"q": {"noul": 0.5}}))
    await model.noul("s", "q?")
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
    assert json.loads(route.calls[0].request.content)["model"] == "jev-latest"


@pytest.mark.parametrize("value", [None, "", "   "])
async def test_a_missing_or_blank_key_fails_before_sending(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is not None:
        monkeypatch.setenv("TYPESAFE_API_KEY", value)
    with respx.mock(assert_all_called=False) as router:
        with pytest.raises(DecisionError) as caught:
            await DecisionModel.jev().noul("s", "q?")
        assert not router.calls
    assert caught.value.kind is DecisionErrorKind.MISSING_API_KEY
    assert caught.value.variable is not None and "TYPESAFE_API_KEY" in caught.value.variable
    assert "set TYPESAFE_API_KEY" in str(caught.value)


@respx.mock
async def test_opencode_presets_send_their_model_ids_and_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENCODE_API_KEY", SECRET)
    route = respx.post("https://opencode.ai/zen/v1/systemone").mock(
        return_value=reply({"q": {"noul": 0.5}})
    )
    await DecisionModel.jev_opencode().noul("s", "q?")
    await DecisionModel.jev_opencode_free().noul("s", "q?")
    models = [json.loads(call.request.content)["model"] for call in route.calls]
    assert models == ["jev-1.13", "jev-1.13-free"]
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
async def test_a_refused_key_names_its_variable_and_never_the_key(
    monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    monkeypatch.setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:8000")
    respx.post(LOCAL_URL).mock(
        return_value=httpx.Response(status, text=f"invalid key {SECRET} for this account")
    )
    with pytest.raises(DecisionError) as caught:
        await DecisionModel.jev().noul("s", "q?")
    text = str(caught.value) + repr(caught.value) + str(caught.value.body)
    assert "$TYPESAFE_API_KEY" in text
    assert SECRET not in text
    assert "[redacted]" in text


@respx.mock
async def test_a_key_given_in_code_is_sent_and_never_shown() -> None:
    route = respx.post(LOCAL_URL).mock(return_value=httpx.Response(401, text=SECRET))
    model = DecisionModel.local("http://127.0.0.1:8000").with_api_key(SECRET)
    assert SECRET not in repr(model) and SECRET not in repr(model.backend)
    with pytest.raises(DecisionError) as caught:
        await model.noul("s", "q?")
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in str(caught.value) and "with_api_key" in str(caught.value)


@respx.mock
async def test_a_given_client_is_used_for_every_call() -> None:
    route = respx.post(LOCAL_URL).mock(return_value=reply({"q": {"noul": 0.5}}))
    async with httpx.AsyncClient(headers={"x-pool": "shared"}) as client:
        model = local().with_client(client)
        await model.noul("s", "q?")
        await model.noul("s", "q?")
    assert [call.request.headers["x-pool"] for call in route.calls] == ["shared", "shared"]


def test_reprs_name_key_variables_never_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    text = repr(DecisionModel.jev()) + repr(DecisionModel.jev_opencode())
    assert "$TYPESAFE_API_KEY" in text and "$OPENCODE_API_KEY" in text
    assert SECRET not in text


@pytest.mark.parametrize(
    "url",
    [
        "https://judge-user:url-SECRET@judge.example:8443/v1/systemone?sig=sig-SECRET",
        "ftp://judge-user:url-SECRET@127.0.0.1:8000/v1/systemone?sig=sig-SECRET",
    ],
)
async def test_credentials_and_query_of_a_url_are_never_shown(url: str) -> None:
    backend = SystemOneBackend("http://h").with_endpoint_url(url).with_retry(NO_RETRY)
    shown = repr(DecisionModel.from_backend(backend, "m"))
    assert "judge.example:8443/v1/systemone?…" in shown or "127.0.0.1:8000" in shown
    if url.startswith("ftp:"):
        with pytest.raises(DecisionError) as caught:
            await DecisionModel.from_backend(backend, "m").noul("s", "q?")
        assert caught.value.kind is DecisionErrorKind.INVALID
        shown += str(caught.value) + repr(caught.value)
        assert "ftp://127.0.0.1:8000/v1/systemone?…" in str(caught.value)
    assert "SECRET" not in shown and "judge-user" not in shown


# --- pricing --------------------------------------------------------------------------------


@respx.mock
async def test_jev_is_priced_by_the_reported_version_on_typesafes_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    respx.post(TYPESAFE_URL).mock(return_value=reply({"q": {"noul": 0.5}}))
    model = DecisionModel.jev()
    unpriced = await model.evaluate("s", {"q": Noul("q?")})
    assert unpriced.cost_usd is None  # nothing priced until a resolver is installed
    set_price_resolver(price_table)
    priced = await model.evaluate("s", {"q": Noul("q?")})
    assert priced.cost_usd == pytest.approx(0.042)  # 1M input tokens at $0.042/M


@respx.mock
async def test_an_alias_or_unlisted_version_is_unpriced_never_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    set_price_resolver(price_table)
    route = respx.post(TYPESAFE_URL)
    for model_id in ("jev-latest", "jev-9.9.9"):
        route.mock(return_value=reply({"q": {"noul": 0.5}}, model=model_id))
        evaluation = await DecisionModel.jev().evaluate("s", {"q": Noul("q?")})
        assert evaluation.cost_usd is None


@respx.mock
async def test_jev_pointed_at_another_host_is_unpriced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    monkeypatch.setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:8000")
    set_price_resolver(price_table)
    respx.post(LOCAL_URL).mock(return_value=reply({"q": {"noul": 0.5}}))
    evaluation = await DecisionModel.jev().evaluate("s", {"q": Noul("q?")})
    assert evaluation.model == "jev-1.13.0" and evaluation.cost_usd is None


@respx.mock
async def test_a_priced_model_without_reported_usage_is_unpriced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    set_price_resolver(price_table)
    respx.post(TYPESAFE_URL).mock(
        return_value=httpx.Response(
            200, json={"model": "jev-1.13.0", "answers": {"q": {"noul": 1}}}
        )
    )
    evaluation = await DecisionModel.jev().evaluate("s", {"q": Noul("q?")})
    assert evaluation.usage is None and evaluation.cost_usd is None


@respx.mock
async def test_gateways_are_unpriced_and_with_cost_prices_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from yoagent.core import CostConfig

    monkeypatch.setenv("OPENCODE_API_KEY", SECRET)
    set_price_resolver(price_table)
    respx.post("https://opencode.ai/zen/v1/systemone").mock(return_value=reply({"q": {"noul": 1}}))
    gateway = DecisionModel.jev_opencode()
    assert (await gateway.evaluate("s", {"q": Noul("q?")})).cost_usd is None
    priced = gateway.with_cost(CostConfig(input=2.0))
    assert (await priced.evaluate("s", {"q": Noul("q?")})).cost_usd == pytest.approx(2.0)
    assert math.isclose((await gateway.with_cost(CostConfig()).noul("s", "q?")).p_true, 1.0)
