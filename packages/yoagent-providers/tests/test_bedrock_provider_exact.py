"""The Bedrock provider word for word: the URL and headers it sends, a clock before 1970,
each credential's origin and secrets in a refused request's error, the process environment,
and its wire cache."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
import respx
from bedrock_fixtures import (
    EVENTSTREAM,
    FIXED_TIME,
    REPLY_TEXT,
    bedrock_config,
    fixed_env,
    replay_bedrock,
)
from provider_helpers import Chunks, stream_config

from yoagent.core import ErrorKind, ModelConfig, ProviderError, TextContent, UserMessage
from yoagent.providers import BedrockProvider
from yoagent.providers.bedrock import converse_stream_url

UNPREFIXED = "Zm9vYmFyYmF6cXV4"
GATEWAY_SECRET = "gw-secret-value-1"


async def refused(
    model: ModelConfig,
    answer: Callable[[httpx.Request], httpx.Response],
    env: dict[str, str] | None = None,
) -> ProviderError:
    provider = BedrockProvider(model, env=fixed_env(**(env or {})), clock=lambda: FIXED_TIME)
    async with provider, respx.mock() as router:
        router.post(url__regex=".*").mock(side_effect=answer)
        with pytest.raises(ProviderError) as caught:
            await provider.stream(stream_config(model), lambda _: None)
    return caught.value


def echo(status: int, text: str) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(status, json={"message": text})


def test_the_url_keeps_the_base_path_and_makes_the_model_id_one_segment() -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.model-v1:0"
    assert str(converse_stream_url("https://gw.test/BOX/", arn)) == (
        "https://gw.test/BOX/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3A"
        "inference-profile%2Fus.model-v1%3A0/converse-stream"
    )


def test_the_provider_keeps_the_model_it_was_given() -> None:
    model = bedrock_config()
    assert BedrockProvider(model).config is model


async def test_a_signed_request_sends_exactly_its_headers() -> None:
    _, _, route = await replay_bedrock(REPLY_TEXT)
    request = route.calls.last.request
    assert request.headers["accept"] == EVENTSTREAM["content-type"]
    assert request.headers["content-type"] == "application/json"
    assert set(request.headers) == {
        "host",
        "accept",
        "accept-encoding",
        "connection",
        "user-agent",
        "content-length",
        "content-type",
        "x-amz-date",
        "x-amz-content-sha256",
        "authorization",
    }


async def test_a_clock_before_1970_is_refused_in_its_own_words() -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(REPLY_TEXT, clock=-1.0)
    assert caught.value.kind is ErrorKind.AUTH
    assert caught.value.message == "the system clock reads before 1970: SigV4 needs the real time"


async def test_without_a_base_url_or_a_region_the_empty_host_is_named() -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(REPLY_TEXT, config=stream_config(bedrock_config(base_url="")))
    assert caught.value.message == (
        "cannot tell which AWS region to sign for: '' is not a "
        "bedrock-runtime.<region>.amazonaws.com host; set AWS_REGION"
    )


async def test_a_clock_complaint_on_a_403_says_to_check_the_clock_and_keeps_its_status() -> None:
    expired = "Signature expired: 20150830T123600Z is now earlier than 20150830T124100Z"
    error = await refused(bedrock_config(), echo(403, expired))
    assert error.status == 403
    assert error.kind is ErrorKind.AUTH
    assert error.message == (
        f"the server refused the key from ModelConfig.api_key (403): {expired} (check this "
        "machine's clock: a SigV4 signature is only accepted within minutes of the server's "
        "time)"
    )
    other = await refused(bedrock_config(), echo(403, "Access denied"))
    assert (
        other.message == "the server refused the key from ModelConfig.api_key (403): Access denied"
    )
    elsewhere = await refused(bedrock_config(), echo(400, expired))
    assert elsewhere.message == expired


async def test_a_refused_gateway_header_is_named_and_its_secret_scrubbed() -> None:
    model = bedrock_config(api_key="", headers={"Authorization": f"Bearer {GATEWAY_SECRET}"})
    error = await refused(model, echo(403, f"denied {GATEWAY_SECRET}"))
    assert (
        error.message
        == "the server refused the key from ModelConfig.headers (403): denied [redacted]"
    )


async def test_a_refused_bearer_key_is_named_and_scrubbed() -> None:
    model = bedrock_config(api_key=UNPREFIXED)
    error = await refused(model, echo(403, f"bad key {UNPREFIXED}"))
    assert (
        error.message
        == "the server refused the key from ModelConfig.api_key (403): bad key [redacted]"
    )


async def test_a_refused_signature_is_scrubbed_wherever_the_server_echoes_it() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        signature = request.headers["authorization"].rsplit("Signature=", 1)[1]
        return httpx.Response(
            403, json={"message": f"we calculated {signature[::-1]}, not {signature}"}
        )

    error = await refused(bedrock_config(), answer)
    assert error.message.startswith("the server refused the key from ModelConfig.api_key (403): ")
    assert error.message.endswith(", not [redacted]")


async def test_every_header_signing_sets_that_the_config_also_sets_is_named() -> None:
    model = bedrock_config(headers={"X-Amz-Date": "20000101T000000Z", "Host": "elsewhere"})
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(REPLY_TEXT, config=stream_config(model))
    assert caught.value.kind is ErrorKind.OTHER
    assert caught.value.message == (
        "ModelConfig.headers sets Host, X-Amz-Date, which SigV4 signing sets itself"
    )


async def test_without_an_environment_given_the_process_environment_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("YOAGENT_TEST_PROCESS_BEDROCK_KEY", "bedrock-api-key-process")
    model = bedrock_config(api_key="", key_variable="YOAGENT_TEST_PROCESS_BEDROCK_KEY")
    provider = BedrockProvider(model, clock=lambda: FIXED_TIME)
    async with provider, respx.mock() as router:
        route = router.post(url__regex=".*").mock(
            return_value=httpx.Response(200, headers=EVENTSTREAM, stream=Chunks([REPLY_TEXT]))
        )
        await provider.stream(stream_config(model), lambda _: None)
    assert route.calls.last.request.headers["authorization"] == "Bearer bedrock-api-key-process"


async def test_the_provider_keeps_one_wire_cache_across_requests() -> None:
    # An in-place edit of a block goes unseen while the cache holds the message (the
    # documented limit): the proof that the second request reused the first's conversion.
    block = TextContent(text="first")
    model = bedrock_config()
    config = stream_config(model, messages=[UserMessage(content=[block])])
    provider = BedrockProvider(model, env=fixed_env(), clock=lambda: FIXED_TIME)
    async with provider, respx.mock() as router:
        route = router.post(url__regex=".*").mock(
            side_effect=lambda _: httpx.Response(
                200, headers=EVENTSTREAM, stream=Chunks([REPLY_TEXT])
            )
        )
        await provider.stream(config, lambda _: None)
        block.text = "edited"
        await provider.stream(config, lambda _: None)
    texts = [
        json.loads(call.request.content)["messages"][0]["content"][0]["text"]
        for call in route.calls
    ]
    assert texts == ["first", "first"]
