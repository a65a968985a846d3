"""classify(): one place turns what a server said into a ProviderError kind."""

from __future__ import annotations

import pytest

from yoagent.core import ErrorKind, ProviderError
from yoagent.core.provider import OVERFLOW_PHRASES, classify, parse_retry_after


@pytest.mark.parametrize("status", [429, 503, 529])
def test_rate_limit_statuses(status: int) -> None:
    error = classify(status=status, message="busy", retry_after=2.5)
    assert error.kind is ErrorKind.RATE_LIMITED
    assert error.retry_after == 2.5
    assert error.status == status


@pytest.mark.parametrize(
    "code",
    [
        "overloaded_error",
        "rate_limit_exceeded",
        "too_many_requests",
        "no_capacity",
        "UNAVAILABLE",
        529,
        503,
    ],
)
def test_structured_rate_limit_codes(code: object) -> None:
    assert classify(status=400, codes=(code,), message="x").kind is ErrorKind.RATE_LIMITED


def test_rate_limits_are_checked_before_overflow_phrases() -> None:
    error = classify(status=429, message="prompt is too long for the current capacity")
    assert error.kind is ErrorKind.RATE_LIMITED
    error = classify(codes=("no_capacity",), message="maximum context length exceeded")
    assert error.kind is ErrorKind.RATE_LIMITED


@pytest.mark.parametrize("phrase", OVERFLOW_PHRASES)
def test_every_overflow_phrase_is_an_overflow(phrase: str) -> None:
    assert (
        classify(status=400, message=f"Error: {phrase.upper()} (details)").kind
        is ErrorKind.CONTEXT_OVERFLOW
    )


def test_auth_api_and_in_stream_429() -> None:
    assert classify(status=401, message="invalid x-api-key").kind is ErrorKind.AUTH
    assert classify(status=403, message="forbidden").kind is ErrorKind.AUTH
    assert classify(status=500, message="internal").kind is ErrorKind.API
    assert classify(codes=(429,), message="quota").kind is ErrorKind.API
    assert classify(status=413, message="").kind is ErrorKind.CONTEXT_OVERFLOW
    assert classify(message="").message == "unknown error"


def test_only_rate_limits_and_network_are_retryable() -> None:
    assert {kind for kind in ErrorKind if kind.retryable} == {
        ErrorKind.RATE_LIMITED,
        ErrorKind.NETWORK,
    }


def test_str_names_the_kind() -> None:
    assert str(
        ProviderError(ErrorKind.AUTH, "the server refused the key from ANTHROPIC_API_KEY (401)")
    ) == ("AUTH: the server refused the key from ANTHROPIC_API_KEY (401)")


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None),
        ({"retry-after": "-1"}, None),
        ({"retry-after-ms": "soon", "retry-after": "2"}, 2.0),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "inf", "retry-after": "1"}, 1.0),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


@pytest.mark.parametrize("code", [429, "RESOURCE_EXHAUSTED", "429"])
def test_an_in_stream_quota_error_is_api_not_an_overflow(code: object) -> None:
    error = classify(
        codes=(code,), message="Quota exceeded: too many tokens per minute, token limit"
    )
    assert error.kind is ErrorKind.API
    assert error.message == "Quota exceeded: too many tokens per minute, token limit"


def test_an_infinite_or_nan_retry_after_never_sleeps_forever() -> None:
    from yoagent.core import RetryConfig

    policy = RetryConfig(max_retry_after=60.0)
    assert policy.delay(0, retry_after=float("inf")) == 60.0
    assert 0.8 <= policy.delay(0, retry_after=float("nan")) <= 1.2
