"""The HTTP side's exact edges: a key that does not look like one is still scrubbed from
what a server echoes, bodies at the read limits and in several chunks, the headers sent,
Cloudflare error lists holding junk, a web page named as one only by its content type,
a refused key's text, and how many attempts a retry that ran out of time says it made.
(Added from mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
import respx
from decision_helpers import FAST_RETRY, NO_RETRY

from yoagent.core import RetryConfig
from yoagent.decision import (
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Noul,
    SystemOneBackend,
    _http,
)
from yoagent.decision._http import excerpt, with_retries

URL = "http://127.0.0.1:8000/v1/systemone"
PLAIN_KEY = "correcthorsebatterystaple"
"""A key that has no key's shape: only knowing it was sent can scrub it."""
QUESTIONS = {"q": Noul("q?")}
ANSWER = b'{"answers":{"q":{"noul":0.25}}}'


def local() -> DecisionModel:
    return DecisionModel.local("http://127.0.0.1:8000").with_retry(NO_RETRY)


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def failure(model: DecisionModel) -> DecisionError:
    with pytest.raises(DecisionError) as caught:
        await model.evaluate("s", QUESTIONS)
    return caught.value


# -- what is sent, and scrubbed -------------------------------------------------------------


@respx.mock
async def test_a_key_without_a_keys_shape_is_scrubbed_from_what_the_server_echoes() -> None:
    route = respx.post(URL).mock(
        side_effect=[
            httpx.Response(500, text=f"bad key: {PLAIN_KEY}"),
            httpx.Response(200, text=f"not json, and your key is {PLAIN_KEY}"),
        ]
    )
    model = local().with_api_key(PLAIN_KEY)
    for _ in range(2):
        assert PLAIN_KEY not in str(await failure(model))
    sent = route.calls[0].request
    assert sent.headers["authorization"] == f"Bearer {PLAIN_KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "application/json"


async def test_a_password_a_parser_cuts_at_an_unencoded_question_mark_is_not_shown() -> None:
    model = DecisionModel.local("http://user:sekret-part?tail-part@127.0.0.1:8000/v1")
    error = await failure(model.with_retry(NO_RETRY))
    assert "sekret-part" not in str(error) and "tail-part" not in str(error)
    assert "[redacted]" in str(error)


def test_the_key_source_in_a_repr() -> None:
    assert repr(SystemOneBackend("http://h")).startswith("SystemOneBackend(endpoint=")
    assert "key=none," in repr(SystemOneBackend("http://h"))
    clef = SystemOneBackend.workers_ai("acc", "@cf/cloudflare/clef")
    assert "key=$CLOUDFLARE_API_TOKEN or $CLOUDFLARE_AUTH_TOKEN," in repr(clef)


# -- bodies at the limits and in chunks -----------------------------------------------------


@respx.mock
async def test_a_success_of_exactly_the_limit_is_read_whole_across_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_http, "MAX_RESPONSE_BYTES", len(ANSWER))
    monkeypatch.setattr(_http, "MAX_ERROR_READ", 8)  # an error's limit, not a success's
    respx.post(URL).mock(
        side_effect=[
            httpx.Response(200, content=chunks(ANSWER[:10], ANSWER[10:])),
            httpx.Response(200, content=chunks(ANSWER[:10], ANSWER[10:] + b" ")),
        ]
    )
    assert (await local().evaluate("s", QUESTIONS)).p_true("q") == 0.25
    over = await failure(local())
    assert over.kind is DecisionErrorKind.BAD_RESPONSE
    assert over.detail.startswith("the response is over ")


@respx.mock
async def test_an_error_body_is_read_up_to_its_limit_across_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_http, "MAX_ERROR_READ", 8)
    respx.post(URL).mock(return_value=httpx.Response(500, content=chunks(b"abcde", b"fghij")))
    error = await failure(local())
    assert (error.status, error.body) == (500, "abcdefgh")


def test_an_excerpt_at_exactly_its_limit_is_whole_and_a_cut_one_drops_a_split_character() -> None:
    assert excerpt("abc", 3) == "abc"
    assert excerpt("ééé", 3) == "é…"  # the second "é" is cut in half: dropped


# -- how an error status reads --------------------------------------------------------------


@respx.mock
async def test_a_cloudflare_error_list_holding_junk_still_finds_the_daily_limit() -> None:
    body = {"success": False, "errors": ["oops", {"code": "3036"}, {"code": 3036}]}
    route = respx.post(URL).mock(return_value=httpx.Response(429, json=body))
    error = await failure(DecisionModel.local("http://127.0.0.1:8000"))  # default retries
    assert (error.kind, error.status) == (DecisionErrorKind.HTTP, 429)
    assert route.call_count == 1


@respx.mock
async def test_a_web_page_is_known_by_its_content_type_alone() -> None:
    page = "Sorry!\n<html><head><title>Gateway down</title></head></html>"
    respx.post(URL).mock(
        side_effect=[
            httpx.Response(502, text=page, headers={"content-type": "text/html"}),
            httpx.Response(502, text=page, headers={"content-type": "text/plain"}),
        ]
    )
    assert (await failure(local())).body == "an HTML page (title: Gateway down)"
    assert (await failure(local())).body == page


@respx.mock
async def test_a_refused_key_with_no_body_says_only_where_the_key_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "k")
    monkeypatch.setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:8000")
    respx.post(URL).mock(return_value=httpx.Response(401))
    error = await failure(DecisionModel.jev().with_retry(NO_RETRY))
    assert (error.kind, error.status, error.body) == (
        DecisionErrorKind.HTTP,
        401,
        "(key from $TYPESAFE_API_KEY)",
    )


# -- retries that run out of time -----------------------------------------------------------


@pytest.mark.parametrize(
    ("retry", "said"),
    [
        (RetryConfig(initial_delay=60.0, max_delay=60.0, jitter=0.0), "1 attempt)"),
        (
            RetryConfig(initial_delay=0.01, multiplier=10_000.0, max_delay=60.0, jitter=0.0),
            "2 attempts)",
        ),
    ],
)
async def test_a_transport_failure_out_of_time_says_how_many_attempts(
    retry: RetryConfig, said: str
) -> None:
    async def refused() -> None:
        raise DecisionError.transport("refused")

    with anyio.fail_after(5), pytest.raises(DecisionError) as caught:
        await with_retries(retry, refused)
    assert caught.value.detail == f"refused (retried until the time limit: {said}"


@respx.mock
async def test_a_retry_is_logged_with_its_error(caplog: pytest.LogCaptureFixture) -> None:
    respx.post(URL).mock(
        side_effect=[httpx.ConnectError("refused"), httpx.Response(200, content=ANSWER)]
    )
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        await local().with_retry(FAST_RETRY).evaluate("s", QUESTIONS)
    assert [r.getMessage() for r in caplog.records] == [
        "decision model error (attempt 1/3), retrying in 0.0s: decision model transport error: "
        "ConnectError: refused"
    ]


# -- keys that cannot be sent ---------------------------------------------------------------


async def test_a_key_that_cannot_be_sent_says_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given = await failure(local().with_api_key("line\nbreak"))
    assert given.detail == (
        "the key from with_api_key cannot be sent: it holds a line break, a control character "
        "or a non-ASCII character; check its value"
    )
    empty = await failure(local().with_api_key("  "))
    assert empty.variable == "a non-empty key (the one given to with_api_key is empty)"
    monkeypatch.setenv("TYPESAFE_API_KEY", " ")
    blank = await failure(DecisionModel.jev())
    assert blank.variable == "TYPESAFE_API_KEY (set, but empty)"


# -- the body sent, and what comes back -----------------------------------------------------


@respx.mock
async def test_the_body_is_compact_utf_8_json() -> None:
    route = respx.post(URL).mock(return_value=httpx.Response(200, content=ANSWER))
    await local().evaluate({"name": "café"}, QUESTIONS)
    assert (
        route.calls[0].request.content
        == (
            '{"state":{"name":"café"},"model":"jev-latest","questions":{"q":{"type":"noul",'
            '"instructions":"q?"}}}'
        ).encode()
    )


@respx.mock
async def test_a_given_client_sends_the_same_request_and_scrubs_the_same_way() -> None:
    route = respx.post(URL).mock(
        side_effect=[httpx.Response(200, content=ANSWER), httpx.Response(500, text=PLAIN_KEY)]
    )
    async with httpx.AsyncClient() as client:
        model = local().with_api_key(PLAIN_KEY).with_client(client)
        assert (await model.evaluate("s", QUESTIONS)).p_true("q") == 0.25
        assert PLAIN_KEY not in str(await failure(model))
    sent = route.calls[0].request
    assert sent.headers["authorization"] == f"Bearer {PLAIN_KEY}"
    assert sent.content.startswith(b'{"state":"s"')


async def broken_after(first: bytes) -> AsyncIterator[bytes]:
    yield first
    raise httpx.ReadError("connection reset")


@respx.mock
async def test_a_body_that_breaks_off_after_a_success_is_billed_not_retried() -> None:
    route = respx.post(URL).mock(
        side_effect=[
            httpx.Response(200, content=broken_after(b'{"answers"')),
            httpx.Response(500, content=broken_after(b"oops")),
            httpx.Response(200, content=ANSWER),
        ]
    )
    answered = await failure(local().with_retry(FAST_RETRY))
    assert (answered.kind, answered.detail) == (
        DecisionErrorKind.BAD_RESPONSE,
        "could not read the response body: ReadError",
    )
    assert route.call_count == 1
    # an error status whose body breaks off: nothing was billed, so it is retried
    assert (await local().with_retry(FAST_RETRY).evaluate("s", QUESTIONS)).p_true("q") == 0.25
    assert route.call_count == 3


@respx.mock
async def test_what_a_status_or_body_that_is_not_a_success_reads_as() -> None:
    page = "Sorry!\n<html><title>Maintenance</title></html>"
    respx.post(URL).mock(
        side_effect=[
            httpx.Response(300, json={"answers": {"q": {"noul": 0.25}}}),
            httpx.Response(500, content=b"\xff oops"),
            httpx.Response(200, text=page, headers={"content-type": "text/html"}),
            httpx.Response(200, text="n" * 300),
        ]
    )
    redirect = await failure(local())
    assert (redirect.kind, redirect.status) == (DecisionErrorKind.HTTP, 300)
    assert (await failure(local())).body == "\ufffd oops"
    html = await failure(local())
    assert html.detail.endswith("): an HTML page (title: Maintenance)")
    text = await failure(local())
    assert text.detail.endswith("): " + "n" * 200 + "…")


@respx.mock
async def test_an_error_through_a_given_client_is_an_http_error_scrubbed() -> None:
    respx.post(URL).mock(return_value=httpx.Response(500, text=f"echo {PLAIN_KEY}"))
    async with httpx.AsyncClient() as client:
        error = await failure(local().with_api_key(PLAIN_KEY).with_client(client))
    assert (error.kind, error.status) == (DecisionErrorKind.HTTP, 500)
    assert error.body is not None and PLAIN_KEY not in error.body and error.body.startswith("echo ")
