"""HTTP and transport failures become the right ProviderError, and never show the key."""

from __future__ import annotations

import json
import logging
import re

import anyio
import httpx
import pytest
import respx
from bedrock_fixtures import exception_frame, frame
from bedrock_fixtures import text_events as bedrock_text
from provider_helpers import (
    ANTHROPIC_URL,
    OPENAI_URL,
    PROTOCOLS,
    SECRET,
    anthropic_config,
    openai_config,
    replay,
    stream_config,
)
from stream_fixtures import (
    anthropic_sse,
    anthropic_text,
    gemini_sse,
    gemini_text,
    openai_sse,
    openai_text,
    responses_sse,
    responses_text,
)

from yoagent.core import ApiProtocol, ErrorKind, ProviderError
from yoagent.providers import AnthropicProvider, OpenAiCompletionsProvider
from yoagent.providers._http_errors import KeySource, url_problem


def anthropic_error(kind: str, message: str) -> bytes:
    return f'{{"type":"error","error":{{"type":"{kind}","message":"{message}"}}}}'.encode()


@pytest.mark.parametrize(
    ("status", "body", "headers", "kind", "retry_after"),
    [
        (
            429,
            anthropic_error("rate_limit_error", "slow down"),
            {"retry-after": "7"},
            ErrorKind.RATE_LIMITED,
            7.0,
        ),
        (529, anthropic_error("overloaded_error", "Overloaded"), {}, ErrorKind.RATE_LIMITED, None),
        (503, b"upstream unavailable", {"retry-after-ms": "1500"}, ErrorKind.RATE_LIMITED, 1.5),
        # A capacity error whose text looks like an overflow is still a rate limit.
        (
            429,
            anthropic_error("rate_limit_error", "too many tokens per minute"),
            {},
            ErrorKind.RATE_LIMITED,
            None,
        ),
        (
            400,
            anthropic_error("invalid_request_error", "prompt is too long: 250000 tokens > 200000"),
            {},
            ErrorKind.CONTEXT_OVERFLOW,
            None,
        ),
        (
            413,
            anthropic_error("request_too_large", "Request exceeds the maximum size"),
            {},
            ErrorKind.CONTEXT_OVERFLOW,
            None,
        ),
        (
            400,
            b'{"error": {"message": "bad field", "type": "invalid_request_error"}}',
            {},
            ErrorKind.API,
            None,
        ),
        (500, b"<html>oops</html>", {}, ErrorKind.API, None),
        (
            200,
            b'{"error": {"type": "overloaded_error", "message": "busy"}}',
            {"content-type": "application/json"},
            ErrorKind.RATE_LIMITED,
            None,
        ),
    ],
)
async def test_http_statuses_and_bodies_are_classified(
    status: int, body: bytes, headers: dict[str, str], kind: ErrorKind, retry_after: float | None
) -> None:
    with pytest.raises(ProviderError) as caught:
        await replay(body, anthropic=True, status=status, headers=headers)
    assert caught.value.kind is kind
    assert caught.value.retry_after == retry_after


@pytest.mark.parametrize(
    ("status", "body", "headers", "shown"),
    [
        (
            404,
            b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>\n"
            b"<center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>",
            {"content-type": "text/html"},
            "HTTP 404: an HTML page (title: 404 Not Found)",
        ),
        (
            502,
            b"<html><head>\n<title>\n  502 Bad &amp; Gateway\n</title></head><body>x</body></html>",
            {},  # no content type: recognised by its start
            "HTTP 502: an HTML page (title: 502 Bad & Gateway)",
        ),
        (500, b"<html>oops</html>", {"content-type": "text/html"}, "HTTP 500: an HTML page"),
        (405, b'{"error": {"message": "Method Not Allowed"}}', {}, "HTTP 405: Method Not Allowed"),
        (404, b"", {}, "HTTP 404"),
    ],
)
async def test_an_html_page_is_summarised_and_a_missing_endpoint_names_its_status(
    status: int, body: bytes, headers: dict[str, str], shown: str
) -> None:
    """A server's HTML error page reached the user raw; a 404 or 405 (a path the server
    does not have: a protocol it does not speak) did not say which status it was."""
    with pytest.raises(ProviderError) as caught:
        await replay(body, anthropic=False, status=status, headers=headers)
    assert caught.value.message == shown
    assert caught.value.status == status


async def test_auth_failure_names_the_variable_never_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    config = stream_config(anthropic_config(api_key=""))
    with pytest.raises(ProviderError) as caught:
        await replay(
            anthropic_error("authentication_error", "invalid x-api-key"),
            anthropic=True,
            status=401,
            config=config,
        )
    assert caught.value.kind is ErrorKind.AUTH
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert SECRET not in str(caught.value)


async def test_auth_failure_without_a_key_says_which_variable_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "YOAGENT_API_KEY", "API_KEY"):
        monkeypatch.delenv(name, raising=False)
    config = stream_config(openai_config(api_key=""))
    with pytest.raises(ProviderError) as caught:
        await replay(
            b'{"error": {"message": "missing key"}}', anthropic=False, status=403, config=config
        )
    assert caught.value.kind is ErrorKind.AUTH
    assert "set OPENAI_API_KEY" in str(caught.value)


async def test_connection_refused_is_a_network_error() -> None:
    config = stream_config(openai_config(base_url="http://127.0.0.1:9/v1"))
    async with OpenAiCompletionsProvider(config.model) as provider:
        with pytest.raises(ProviderError) as caught:
            await provider.stream(config, lambda d: None)
    assert caught.value.kind is ErrorKind.NETWORK


def _leaky_paths() -> list[tuple[str, bool, int, bytes | None, type[Exception] | None]]:
    echo = f'{{"error": {{"message": "bad key {SECRET} (Bearer {SECRET})", "type": "x"}}}}'.encode()
    return [
        ("401", True, 401, echo, None),
        ("429", False, 429, echo, None),
        ("500 echoing the key", True, 500, echo, None),
        ("in-stream error", False, 200, None, None),
        ("network error", True, 200, None, httpx.ConnectError),
        ("read timeout", False, 200, None, httpx.ReadTimeout),
    ]


@pytest.mark.parametrize(
    ("label", "anthropic", "status", "body", "exc"),
    _leaky_paths(),
    ids=[p[0] for p in _leaky_paths()],
)
async def test_the_key_never_appears_in_errors_or_logs(
    caplog: pytest.LogCaptureFixture,
    label: str,
    anthropic: bool,
    status: int,
    body: bytes | None,
    exc: type[Exception] | None,
) -> None:
    config = stream_config(anthropic_config() if anthropic else openai_config())
    url = ANTHROPIC_URL + "/v1/messages" if anthropic else OPENAI_URL + "/chat/completions"
    if body is None and exc is None:
        in_stream = {"error": {"message": f"key {SECRET} rejected", "code": "invalid_api_key"}}
        body = (
            anthropic_sse([*anthropic_text()[:2], {"type": "error", **in_stream}])
            if anthropic
            else openai_sse([*openai_text()[:1], in_stream], done=False)
        )
    provider = (
        AnthropicProvider(config.model) if anthropic else OpenAiCompletionsProvider(config.model)
    )
    with caplog.at_level(logging.DEBUG):
        async with provider, respx.mock() as mock:
            route = mock.post(url)
            if exc is not None:
                route.mock(side_effect=exc(f"failed talking with key {SECRET}"))
            else:
                assert body is not None
                route.mock(
                    return_value=httpx.Response(
                        status, content=body, headers={"content-type": "text/event-stream"}
                    )
                )
            with pytest.raises(ProviderError) as caught:
                await provider.stream(config, lambda d: None)
    texts = [str(caught.value), repr(caught.value), caught.value.message]
    texts += [record.getMessage() for record in caplog.records]
    texts += [str(record.args) for record in caplog.records]
    # The server's text did reach the error, scrubbed.
    assert "[redacted]" in caught.value.message, label
    for text in texts:
        assert SECRET not in text, label


@pytest.mark.parametrize(
    "bad_key",
    [
        "sk-ant-pasted\nsecond-line-0123456789",
        "sk-ant-smart\u2019quote-0123456789",
        "sk\x1bescape-key-0123",
    ],
    ids=["line break", "non-ascii", "control"],
)
@pytest.mark.parametrize("anthropic", [True, False], ids=["anthropic", "openai"])
async def test_a_key_that_cannot_be_a_header_is_an_auth_error_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, bad_key: str, anthropic: bool
) -> None:
    variable = "ANTHROPIC_API_KEY" if anthropic else "OPENAI_API_KEY"
    monkeypatch.setenv(variable, bad_key)
    model = anthropic_config(api_key="") if anthropic else openai_config(api_key="")
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderError) as caught:
        await replay(
            anthropic_sse(anthropic_text()), anthropic=anthropic, config=stream_config(model)
        )
    assert caught.value.kind is ErrorKind.AUTH
    assert variable in caught.value.message
    texts = [str(caught.value), *(record.getMessage() for record in caplog.records)]
    for piece in re.split(r"[\n\x1b\u2019]", bad_key):
        assert all(piece not in text for text in texts)


async def test_a_user_header_that_cannot_be_sent_is_named_never_shown() -> None:
    model = openai_config(headers={"x-team": "caf\u00e9-team-42"})
    with pytest.raises(ProviderError) as caught:
        await replay(openai_sse(openai_text()), anthropic=False, config=stream_config(model))
    assert caught.value.kind is ErrorKind.OTHER
    assert "x-team" in caught.value.message
    assert "team-42" not in caught.value.message


async def test_a_key_echoed_where_the_message_is_cut_leaks_no_part_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "plainkey0123456789ABCDEFGHIJ"  # no well-known key shape: only the exact match scrubs it
    monkeypatch.setenv("OPENAI_API_KEY", key)
    message = "x" * 480 + " key " + key  # the 500-character cut lands inside the key
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    with pytest.raises(ProviderError) as caught:
        await replay(
            body.encode(),
            anthropic=False,
            status=400,
            config=stream_config(openai_config(api_key="")),
        )
    assert key[:6] not in caught.value.message


async def test_an_overflow_phrase_after_a_long_preamble_is_still_an_overflow() -> None:
    message = (
        "Request rejected. " + "details " * 100 + "This model's maximum context length is 8192"
    )
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    with pytest.raises(ProviderError) as caught:
        await replay(body.encode(), anthropic=False, status=400)
    assert caught.value.kind is ErrorKind.CONTEXT_OVERFLOW
    assert len(caught.value.message) < 600


@pytest.mark.parametrize(
    "base_url",
    [
        "api.openai.com/v1",
        "ftp://example.test/v1",
        "http://[::1/v1",
        "http://127.0.0.1:99999/v1",
        "http://127.0.0.1:0/v1",
        "http:///v1",
    ],
)
async def test_a_base_url_that_cannot_work_is_a_configuration_error_not_retried(
    base_url: str,
) -> None:
    config = stream_config(openai_config(base_url=base_url))
    async with OpenAiCompletionsProvider(config.model) as provider:
        with pytest.raises(ProviderError) as caught:
            await provider.stream(config, lambda d: None)
    assert caught.value.kind is ErrorKind.OTHER
    assert not caught.value.kind.retryable
    assert "base_url" in caught.value.message


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("api", list(PROTOCOLS), ids=[a.value for a in PROTOCOLS])
def test_an_out_of_range_port_is_a_configuration_error_on_every_backend(
    api: ApiProtocol, backend: str
) -> None:
    # The socket layer raised OverflowError: an ExceptionGroup under asyncio, a retried
    # NETWORK error under trio.
    model = PROTOCOLS[api].model(base_url="http://127.0.0.1:99999/v1")

    async def main() -> ProviderError:
        async with PROTOCOLS[api].provider(model) as provider:
            with pytest.raises(ProviderError) as caught:
                await provider.stream(stream_config(model), lambda d: None)  # type: ignore[attr-defined]
        return caught.value

    error = anyio.run(main, backend=backend)
    assert error.kind is ErrorKind.OTHER
    assert "port 99999 is out of range" in error.message


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://api.example.com/v1", None),
        ("http://127.0.0.1:8080", None),
        ("ftp://example.com", "the URL must start with http:// or https://"),
        ("http:///v1", "the URL has no host"),
        ("http://127.0.0.1:0/v1", "port 0 is out of range (1-65535)"),
        ("http://127.0.0.1:99999/v1", "port 99999 is out of range (1-65535)"),
    ],
)
def test_a_url_is_judged_the_same_as_text_or_parsed_and_every_time(
    url: str, problem: str | None
) -> None:
    # Text is judged once and remembered (a provider sends every request to one URL).
    assert url_problem(url) == url_problem(url) == url_problem(httpx.URL(url)) == problem


def _in_stream_error(api: ApiProtocol) -> bytes:
    """A stream that starts a reply, then reports an error echoing the key."""
    error = {"message": f"key {SECRET} rejected", "code": "invalid_api_key"}
    if api is ApiProtocol.BEDROCK_CONVERSE_STREAM:
        started = b"".join(frame(name, payload) for name, payload in bedrock_text()[:2])
        return started + exception_frame("validationException", error["message"])
    if api is ApiProtocol.ANTHROPIC_MESSAGES:
        return anthropic_sse([*anthropic_text()[:2], {"type": "error", "error": error}])
    if api is ApiProtocol.OPENAI_COMPLETIONS:
        return openai_sse([*openai_text()[:1], {"error": error}], done=False)
    if api in (ApiProtocol.OPENAI_RESPONSES, ApiProtocol.AZURE_OPENAI_RESPONSES):
        return responses_sse([*responses_text()[:2], {"type": "error", "error": error}])
    google = {"code": 401, "message": error["message"], "status": "UNAUTHENTICATED"}
    return gemini_sse([*gemini_text()[:1], {"error": google}])


LEAKS = ["401 echo", "500 echo", "in-stream error", "connect error", "read timeout"]


@pytest.mark.parametrize("path", LEAKS)
@pytest.mark.parametrize("api", list(PROTOCOLS), ids=[a.value for a in PROTOCOLS])
async def test_the_key_never_appears_in_errors_or_logs_on_any_protocol(
    caplog: pytest.LogCaptureFixture, api: ApiProtocol, path: str
) -> None:
    protocol = PROTOCOLS[api]
    config = stream_config(protocol.model())
    echo = f'{{"error": {{"message": "bad key {SECRET} (Bearer {SECRET})", "type": "x"}}}}'
    with caplog.at_level(logging.DEBUG):
        async with protocol.provider(config.model) as provider, respx.mock() as mock:
            route = mock.post(protocol.url())
            if path == "connect error":
                route.mock(side_effect=httpx.ConnectError(f"failed talking with key {SECRET}"))
            elif path == "read timeout":
                route.mock(side_effect=httpx.ReadTimeout(f"stalled with key {SECRET}"))
            else:
                status, body = {
                    "401 echo": (401, echo.encode()),
                    "500 echo": (500, echo.encode()),
                    "in-stream error": (200, _in_stream_error(api)),
                }[path]
                route.mock(
                    return_value=httpx.Response(
                        status, content=body, headers={"content-type": "text/event-stream"}
                    )
                )
            with pytest.raises(ProviderError) as caught:
                await provider.stream(config, lambda d: None)  # type: ignore[attr-defined]
    texts = [str(caught.value), repr(caught.value), caught.value.message]
    texts += [record.getMessage() for record in caplog.records]
    texts += [str(record.args) for record in caplog.records]
    texts += [repr(provider), repr(config)]
    assert "[redacted]" in caught.value.message  # the server's text did arrive, scrubbed
    for text in texts:
        assert SECRET not in text
    if path == "401 echo":
        assert caught.value.kind is ErrorKind.AUTH


def test_no_object_holding_a_secret_shows_it_in_its_repr() -> None:
    # A repr reaches logs and error reports (a traceback's locals): KeySource printed
    # every secret it was built to scrub.
    from datetime import UTC, datetime

    from yoagent.providers._sigv4 import AwsCredentials, sign
    from yoagent.providers._vertex_auth import _Token  # pyright: ignore[reportPrivateUsage]

    session = "session-token-" + SECRET
    signature = sign(
        method="POST",
        path="/",
        query="",
        headers=[("host", "example.test")],
        payload_sha256="0" * 64,
        credentials=AwsCredentials("AKIDEXAMPLE", SECRET, session),
        region="us-east-1",
        service="bedrock",
        when=datetime(2026, 1, 1, tzinfo=UTC),
    )
    shown = [
        repr(KeySource(origin="OPENAI_API_KEY", hint="OPENAI_API_KEY", secrets=(SECRET,))),
        repr(_Token(SECRET, 0.0, (session,))),
        repr(signature),
    ]
    for text in shown:
        assert SECRET not in text and session not in text, text
    assert "OPENAI_API_KEY" in shown[0]
    assert signature.signature not in shown[2]
