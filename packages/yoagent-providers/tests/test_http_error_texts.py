"""The texts of the one place that turns wire failures into ``ProviderError``s, word for
word: which field of an error body is the message, which values are codes, where a long
message is cut, what an auth failure says, what each transport failure is called, and the
debug line each leaves (secrets scrubbed throughout)."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from yoagent.core import ErrorKind
from yoagent.providers._http_errors import (
    KeySource,
    _error_fields,  # pyright: ignore[reportPrivateUsage]
    from_http_status,
    from_stream_error,
    from_transport,
    url_problem,
)

SECRET = "sk-test-SECRET-0123456789abcdef"
KEY = KeySource(origin="EXAMPLE_API_KEY", hint="EXAMPLE_API_KEY", secrets=(SECRET,))
NO_KEY = KeySource(origin="", hint="EXAMPLE_API_KEY")
JSON = httpx.Headers({"content-type": "application/json"})


def body(value: object) -> bytes:
    return json.dumps(value).encode()


# --- which field is the message, which values are codes --------------------------------


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        ([{"error": {"message": "first"}}, {"error": {"message": "second"}}], ("first", ())),
        ([], ("", ())),
        ("text", ("", ())),
        (
            {"error": {"type": "error", "code": 5, "status": "RESOURCE_EXHAUSTED"}},
            ("", (5, "RESOURCE_EXHAUSTED")),
        ),
        ({"type": "overloaded_error", "code": None, "status": ["x"]}, ("", ("overloaded_error",))),
        ({"error": {"detail": "from detail"}, "message": "outer"}, ("from detail", ())),
        ({"error": {"code": 1}, "message": "outer"}, ("outer", (1,))),
        ({"error": "plain_code", "message": "the message"}, ("the message", ())),
        ({"error": "plain text"}, ("plain text", ())),
        ({"message": 42}, ("", ())),
    ],
)
def test_an_error_bodys_message_and_codes(
    payload: object, fields: tuple[str, tuple[object, ...]]
) -> None:
    assert _error_fields(payload) == fields


def test_a_structured_status_code_classifies_the_error() -> None:
    payload = {"error": {"status": "RESOURCE_EXHAUSTED", "message": "tokens per minute"}}
    assert from_stream_error(payload, KEY).kind is ErrorKind.API
    error = from_http_status(400, JSON, body({"error": {"type": "rate_limit_error"}}), KEY)
    assert error.kind is ErrorKind.RATE_LIMITED


def test_an_error_event_without_a_message_says_so() -> None:
    error = from_stream_error({"error": {}}, KEY)
    assert (error.kind, error.message) == (ErrorKind.API, "the server sent an error event")


# --- the body's text -------------------------------------------------------------------


def test_a_body_that_is_not_utf8_is_read_with_replacements() -> None:
    error = from_http_status(500, httpx.Headers(), b"broken \xff body", KEY)
    assert error.message == "broken \ufffd body"


def test_a_json_message_wins_over_an_html_content_type() -> None:
    headers = httpx.Headers({"content-type": "text/html"})
    error = from_http_status(500, headers, body({"error": {"message": "real reason"}}), KEY)
    assert error.message == "real reason"


def test_a_page_is_known_by_its_content_type_alone() -> None:
    headers = httpx.Headers({"content-type": "text/html; charset=utf-8"})
    error = from_http_status(502, headers, b"Bad gateway, sorry", KEY)
    assert error.message == "HTTP 502: an HTML page"
    error = from_http_status(502, httpx.Headers(), b"Bad gateway, sorry", KEY)
    assert error.message == "Bad gateway, sorry"


@pytest.mark.parametrize(("length", "cut"), [(500, False), (501, True)])
def test_a_long_message_is_cut_past_500_characters_keeping_status_and_retry(
    length: int, cut: bool
) -> None:
    text = "y" * length
    headers = httpx.Headers({"content-type": "application/json", "retry-after": "9"})
    error = from_http_status(429, headers, body({"error": {"message": text}}), KEY)
    assert error.message == (text[:500] + "…" if cut else text)
    assert (error.kind, error.status, error.retry_after) == (ErrorKind.RATE_LIMITED, 429, 9.0)


def test_an_auth_failure_names_the_status_and_where_the_key_came_from() -> None:
    error = from_http_status(401, JSON, body({"error": {"message": f"bad {SECRET}"}}), KEY)
    assert error.message == "the server refused the key from EXAMPLE_API_KEY (401): bad [redacted]"
    error = from_http_status(403, JSON, body({"error": {"message": "who?"}}), NO_KEY)
    assert error.message == (
        "the server refused the request (403): no API key was sent; set EXAMPLE_API_KEY (who?)"
    )


# --- transport failures ------------------------------------------------------------------


def request() -> httpx.Request:
    return httpx.Request("POST", "https://api.example.test/v1/messages")


def test_an_unsupported_scheme_is_a_bad_url_scrubbed() -> None:
    exc = httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol 'ftp://{SECRET}'")
    error = from_transport(exc, KEY)
    assert (error.kind, error.message) == (
        ErrorKind.OTHER,
        "cannot send to the configured base_url: "
        "Request URL has an unsupported protocol 'ftp://[redacted]'",
    )


@pytest.mark.parametrize(
    ("exc", "what"),
    [
        (
            httpx.PoolTimeout("", request=request()),
            "no connection of the HTTP client's pool was free within its pool timeout "
            "(all its httpx.Limits.max_connections were in use)",
        ),
        (httpx.WriteTimeout("", request=request()), "the request timed out"),
        (httpx.DecodingError("", request=request()), "transport error (DecodingError)"),
    ],
)
def test_each_transport_failure_is_named_and_an_empty_detail_adds_nothing(
    exc: httpx.HTTPError, what: str
) -> None:
    error = from_transport(exc, KEY)
    assert (error.kind, error.message) == (ErrorKind.NETWORK, what)


# --- the debug lines ---------------------------------------------------------------------


def test_each_failure_leaves_one_scrubbed_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="yoagent.providers")
    from_http_status(500, JSON, body({"error": {"message": f"down {SECRET}"}}), KEY)
    from_stream_error({"error": {"message": "overloaded"}}, KEY)
    from_transport(httpx.ConnectError(f"refused {SECRET}", request=request()), KEY)
    assert [r.getMessage() for r in caplog.records if r.name == "yoagent.providers"] == [
        "HTTP 500 from provider: down [redacted]",
        "error event in stream: overloaded",
        "network failure: could not connect: refused [redacted]",
    ]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1", "Invalid port: ':1'"),
        ("http://h:0", "port 0 is out of range (1-65535)"),
        ("http://h:1", None),
        ("http://h:65535", None),
        ("http://h:65536", "port 65536 is out of range (1-65535)"),
    ],
)
def test_a_urls_problem_is_httpxs_own_words_or_its_port_out_of_range(
    url: str, problem: str | None
) -> None:
    assert url_problem(url) == problem
    assert url_problem(httpx.URL("http://h:1")) is None
