"""Cloudflare Workers AI's Clef on the wire (respx): the envelope, its errors, its token."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx
from decision_helpers import NO_RETRY, SECRET, price_table

from yoagent.core.provider import set_price_resolver
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Noul,
    Score,
    SystemOneBackend,
    parse_systemone_response,
)
from yoagent.decision._questions import Request

CLEF_URL = "https://api.cloudflare.com/client/v4/accounts/acct/ai/run/@cf/cloudflare/clef"
FLASH_URL = "https://api.cloudflare.com/client/v4/accounts/acct/ai/run/@cf/cloudflare/clef-flash"


def wrapped(result: object, *, success: bool = True, errors: Any = ()) -> httpx.Response:
    body = {"result": result, "success": success, "errors": list(errors), "messages": []}
    return httpx.Response(200, json=body)


RESULT = {
    "model": "clef",
    "answers": {
        "n": {"type": "noul", "noul": 0.7},
        "c": {
            "type": "choice",
            "choice": "b",
            "probabilities": {"a": 0.3, "b": 0.7},
            "confidence": 0.4,
        },
        "s": {
            "type": "score",
            "score": 0.5,
            "legend": {"0": "low", "1": "high"},
            "probabilities": {"0": 0.5, "1": 0.5},
            "confidence": 0.0,
        },
    },
    "usage": {"input_tokens": 2_000_000, "output_tokens": 3},
}
QUESTIONS = {"n": Noul("n?"), "c": Choice("c?", ["a", "b"]), "s": Score("s?", ["low", "high"])}


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", SECRET)
    return SECRET


def clef() -> DecisionModel:
    return DecisionModel.clef(" acct ").with_retry(NO_RETRY)


@respx.mock
async def test_clef_posts_the_systemone_request_to_its_model_url(token: str) -> None:
    route = respx.post(CLEF_URL).mock(return_value=wrapped(RESULT))
    evaluation = await clef().evaluate("state", QUESTIONS)
    sent = route.calls[0].request
    assert sent.headers["authorization"] == f"Bearer {token}"
    body = json.loads(sent.content)
    assert list(body) == ["state", "model", "questions"] and body["model"] == "clef"
    assert evaluation.p_true("n") == 0.7
    choice, score = evaluation.choice("c"), evaluation.score("s")
    assert choice is not None and choice.choice == "b"
    assert score is not None and score.legend == ("low", "high")


@respx.mock
async def test_clef_flash_has_its_own_url_and_id(token: str) -> None:
    route = respx.post(FLASH_URL).mock(return_value=wrapped({**RESULT, "model": "clef-flash"}))
    await DecisionModel.clef_flash("acct").evaluate("state", QUESTIONS)
    assert json.loads(route.calls[0].request.content)["model"] == "clef-flash"


@respx.mock
async def test_the_second_token_variable_is_read_when_the_first_is_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLOUDFLARE_AUTH_TOKEN", SECRET)
    route = respx.post(CLEF_URL).mock(return_value=wrapped(RESULT))
    await clef().evaluate("state", QUESTIONS)
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"


async def test_no_token_names_both_variables_and_sends_nothing() -> None:
    with respx.mock(assert_all_called=False) as router:
        with pytest.raises(DecisionError) as caught:
            await clef().evaluate("state", QUESTIONS)
        assert not router.calls
    assert caught.value.kind is DecisionErrorKind.MISSING_API_KEY
    assert caught.value.variable == "CLOUDFLARE_API_TOKEN or CLOUDFLARE_AUTH_TOKEN"


@respx.mock
async def test_a_result_sent_as_text_is_parsed(token: str) -> None:
    respx.post(CLEF_URL).mock(return_value=wrapped(json.dumps(RESULT)))
    assert (await clef().evaluate("state", QUESTIONS)).p_true("n") == 0.7


@pytest.mark.parametrize("result", ["not json", 42, None, ["a"]], ids=str)
@respx.mock
async def test_a_result_that_is_not_a_response_is_a_bad_response(token: str, result: Any) -> None:
    route = respx.post(CLEF_URL).mock(return_value=wrapped(result))
    with pytest.raises(DecisionError) as caught:
        await clef().evaluate("state", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert route.call_count == 1


@respx.mock
async def test_success_false_with_the_schema_error_is_invalid(token: str) -> None:
    errors = [{"code": 5006, "message": "Type mismatch of '/questions'"}]
    respx.post(CLEF_URL).mock(return_value=wrapped(None, success=False, errors=errors))
    with pytest.raises(DecisionError) as caught:
        await clef().evaluate("state", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.INVALID
    assert "Type mismatch of '/questions'" in str(caught.value)


@respx.mock
async def test_any_other_success_false_is_a_backend_error(token: str) -> None:
    errors = [{"code": 3000, "message": "internal"}]
    route = respx.post(CLEF_URL).mock(return_value=wrapped(None, success=False, errors=errors))
    with pytest.raises(DecisionError) as caught:
        await clef().with_retry(NO_RETRY).evaluate("state", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.BACKEND and not caught.value.retryable
    assert "internal" in str(caught.value)
    assert route.call_count == 1


@respx.mock
async def test_the_daily_allocation_429_is_not_retried(token: str) -> None:
    body = {"success": False, "errors": [{"code": 3036, "message": "daily free allocation used"}]}
    route = respx.post(CLEF_URL).mock(return_value=httpx.Response(429, json=body))
    model = DecisionModel.clef("acct")  # default retries: a retry would wait a second
    with pytest.raises(DecisionError) as caught:
        await model.evaluate("state", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.HTTP and caught.value.status == 429
    assert not caught.value.retryable
    assert "daily free allocation used" in str(caught.value)
    assert route.call_count == 1


@respx.mock
async def test_a_capacity_429_is_rate_limited_and_keeps_the_body(token: str) -> None:
    body = {"success": False, "errors": [{"code": 3040, "message": "out of capacity"}]}
    respx.post(CLEF_URL).mock(return_value=httpx.Response(429, json=body))
    with pytest.raises(DecisionError) as caught:
        await clef().evaluate("state", QUESTIONS)
    assert caught.value.kind is DecisionErrorKind.RATE_LIMITED
    assert "out of capacity" in (caught.value.body or "")


@pytest.mark.parametrize("status", [401, 403])
@respx.mock
async def test_a_refused_token_names_its_variable_and_keeps_cloudflares_message(
    token: str, status: int
) -> None:
    body = {"success": False, "errors": [{"code": 10000, "message": "Authentication error"}]}
    respx.post(CLEF_URL).mock(return_value=httpx.Response(status, json=body))
    with pytest.raises(DecisionError) as caught:
        await clef().evaluate("state", QUESTIONS)
    text = str(caught.value)
    assert caught.value.kind is DecisionErrorKind.HTTP
    assert "Authentication error" in text and "$CLOUDFLARE_API_TOKEN" in text
    assert token not in text


@respx.mock
async def test_clef_is_list_priced_on_cloudflare_even_by_its_catalog_path(token: str) -> None:
    set_price_resolver(price_table)
    route = respx.post(CLEF_URL).mock(return_value=wrapped(RESULT))
    assert (await clef().evaluate("s", QUESTIONS)).cost_usd == pytest.approx(0.48)
    route.mock(return_value=wrapped({**RESULT, "model": "@cf/cloudflare/clef"}))
    assert (await clef().evaluate("s", QUESTIONS)).cost_usd == pytest.approx(0.48)
    route.mock(return_value=wrapped({**RESULT, "model": "clef-9"}))
    assert (await clef().evaluate("s", QUESTIONS)).cost_usd is None


@respx.mock
async def test_clef_through_a_proxy_is_unpriced(token: str) -> None:
    set_price_resolver(price_table)
    respx.post("https://proxy.example/run/clef").mock(return_value=wrapped(RESULT))
    backend = SystemOneBackend.workers_ai("acct", "@cf/cloudflare/clef").with_endpoint_url(
        "https://proxy.example/run/clef"
    )
    model = DecisionModel.clef("acct")
    proxied = DecisionModel(backend, "clef", pricing=model.pricing)
    assert (await proxied.evaluate("s", QUESTIONS)).cost_usd is None


def test_parse_systemone_response_unwraps_the_envelope_for_other_transports() -> None:
    request = Request("clef", "s", QUESTIONS)
    evaluation = parse_systemone_response({"result": RESULT, "success": True}, request)
    assert evaluation.model == "clef" and evaluation.p_true("n") == 0.7
    with pytest.raises(DecisionError) as caught:
        parse_systemone_response({"success": False, "errors": []}, request)
    assert caught.value.kind is DecisionErrorKind.BACKEND
