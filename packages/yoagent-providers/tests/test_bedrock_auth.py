"""Bedrock authentication: SigV4 checked against botocore from what the server got, bearer
keys, the resolution order, the shared AWS files, regions, refusals and secrets."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
import respx
from bedrock_fixtures import (
    ACCESS_KEY,
    BEDROCK_URL,
    FIXED_TIME,
    SECRET_KEY,
    SESSION_TOKEN,
    STREAM_PATH,
    bedrock_config,
    body,
    exception_frame,
    fixed_env,
    replay_bedrock,
    text_events,
)
from provider_helpers import stream_config

from yoagent.core import ErrorKind, ModelConfig, ProviderError
from yoagent.core.provider import resolve_api_key, with_env_key
from yoagent.providers import BedrockProvider, models
from yoagent.providers._aws_credentials import BearerAuth, region_from_host, resolve_auth

REPLY = body(text_events("ok"))
BEARER = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlMDEyMzQ1Njc4OQ=="


def botocore_authorization(request: httpx.Request, secret: str, token: str | None) -> str:
    """The Authorization botocore computes for the request as received (server side)."""
    auth = pytest.importorskip("botocore.auth", reason="botocore is the oracle (dev only)")
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    received = request.headers["authorization"]
    scope = received.split("Credential=", 1)[1].split(",", 1)[0].split("/")
    signed = received.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    headers = {
        name: request.headers[name]
        for name in signed
        if name not in ("x-amz-date", "x-amz-security-token")
    }
    theirs = AWSRequest(method=request.method, url=str(request.url), headers=headers)
    theirs.data = request.content
    signer = auth.SigV4Auth(Credentials(scope[0], secret, token), scope[3], scope[2])
    when = datetime.strptime(request.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        signer.add_auth(theirs)
    return str(theirs.headers["Authorization"])


async def test_a_static_key_signs_the_exact_bytes_sent_as_botocore_would() -> None:
    _, _, route = await replay_bedrock(REPLY)
    request: httpx.Request = route.calls.last.request
    assert request.url.raw_path.decode() == STREAM_PATH
    assert request.headers["x-amz-content-sha256"] == hashlib.sha256(request.content).hexdigest()
    assert request.headers["x-amz-date"] == "20150830T123600Z"
    assert request.headers["host"] == "bedrock-runtime.us-east-1.amazonaws.com"
    authorization = request.headers["authorization"]
    assert authorization.startswith(
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/20150830/us-east-1/bedrock/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature="
    )
    assert "x-amz-security-token" not in request.headers
    assert botocore_authorization(request, SECRET_KEY, None) == authorization


async def test_the_model_id_colon_is_double_encoded_only_in_the_canonical_uri() -> None:
    from yoagent.providers._sigv4 import canonical_uri

    _, _, route = await replay_bedrock(REPLY)
    path = route.calls.last.request.url.raw_path.decode()
    assert "%3A0" in path
    assert "%253A0" in canonical_uri(path)


async def test_a_session_token_is_sent_and_signed() -> None:
    config = stream_config(bedrock_config(api_key=f"ASIAEXAMPLE:{SECRET_KEY}:{SESSION_TOKEN}"))
    _, _, route = await replay_bedrock(REPLY, config=config)
    request = route.calls.last.request
    assert request.headers["x-amz-security-token"] == SESSION_TOKEN
    assert "x-amz-security-token" in request.headers["authorization"].split("SignedHeaders=")[1]
    assert (
        botocore_authorization(request, SECRET_KEY, SESSION_TOKEN)
        == (request.headers["authorization"])
    )


async def test_environment_credentials_and_region_sign_a_loopback_endpoint() -> None:
    config = stream_config(bedrock_config(api_key="", base_url="http://127.0.0.1:9911/"))
    env = {
        "AWS_ACCESS_KEY_ID": "ASIAENVEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_SESSION_TOKEN": SESSION_TOKEN,
        "AWS_REGION": "eu-west-3",
        "AWS_DEFAULT_REGION": "ap-south-1",
    }
    _, _, route = await replay_bedrock(REPLY, config=config, env=env)
    request = route.calls.last.request
    assert str(request.url) == "http://127.0.0.1:9911" + STREAM_PATH
    assert "/20150830/eu-west-3/bedrock/aws4_request" in request.headers["authorization"]
    assert request.headers["host"] == "127.0.0.1:9911"
    assert (
        botocore_authorization(request, SECRET_KEY, SESSION_TOKEN)
        == (request.headers["authorization"])
    )


async def test_the_region_in_the_host_wins_over_the_environment() -> None:
    config = stream_config(
        bedrock_config(base_url="https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com")
    )
    _, _, route = await replay_bedrock(REPLY, config=config, env={"AWS_REGION": "eu-west-3"})
    assert "/us-gov-west-1/bedrock/" in route.calls.last.request.headers["authorization"]


async def test_aws_default_region_is_read_after_aws_region() -> None:
    config = stream_config(bedrock_config(base_url="http://127.0.0.1:9911"))
    _, _, route = await replay_bedrock(
        REPLY, config=config, env={"AWS_DEFAULT_REGION": "sa-east-1"}
    )
    assert "/sa-east-1/bedrock/" in route.calls.last.request.headers["authorization"]


async def test_without_a_base_url_the_endpoint_follows_the_region() -> None:
    config = stream_config(bedrock_config(base_url=""))
    _, _, route = await replay_bedrock(REPLY, config=config, env={"AWS_REGION": "ca-central-1"})
    assert route.calls.last.request.url.host == "bedrock-runtime.ca-central-1.amazonaws.com"
    config = stream_config(models.bedrock("amazon.nova-pro-v1:0", region="ap-southeast-2"))
    config.model.api_key = f"{ACCESS_KEY}:{SECRET_KEY}"
    _, _, route = await replay_bedrock(REPLY, config=config)
    assert route.calls.last.request.url.host == "bedrock-runtime.ap-southeast-2.amazonaws.com"


@pytest.mark.parametrize(
    ("host", "region"),
    [
        ("bedrock-runtime.us-east-1.amazonaws.com", "us-east-1"),
        ("BEDROCK-RUNTIME.EU-WEST-1.AMAZONAWS.COM.", "eu-west-1"),
        ("bedrock-runtime-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
        ("bedrock-runtime.cn-north-1.amazonaws.com.cn", "cn-north-1"),
        ("bedrock-runtime.eu-central-1.api.aws", "eu-central-1"),
        ("bedrock-runtime.eusc-de-east-1.amazonaws.eu", "eusc-de-east-1"),
        ("bedrock-runtime.us-isob-east-1.sc2s.sgov.gov", "us-isob-east-1"),
        ("vpce-0a1b-c2d3.bedrock-runtime.ap-northeast-1.vpce.amazonaws.com", "ap-northeast-1"),
        ("bedrock.us-east-1.amazonaws.com", None),
        ("bedrock-runtime.us-east-1.example.com", None),
        ("bedrock-runtime.notaregion.amazonaws.com", None),
        ("127.0.0.1", None),
    ],
)
def test_the_region_is_read_from_runtime_hosts_of_every_partition(
    host: str, region: str | None
) -> None:
    assert region_from_host(host) == region


async def test_no_region_anywhere_is_an_auth_error_before_sending() -> None:
    config = stream_config(bedrock_config(base_url="http://127.0.0.1:9911"))
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(REPLY, config=config)
    assert caught.value.kind is ErrorKind.AUTH
    assert "AWS_REGION" in caught.value.message


async def test_a_bedrock_api_key_is_sent_as_a_bearer_token_unsigned() -> None:
    env = {
        "AWS_BEARER_TOKEN_BEDROCK": BEARER,
        "AWS_ACCESS_KEY_ID": "AKIAX",
        "AWS_SECRET_ACCESS_KEY": "s",
    }
    _, _, route = await replay_bedrock(
        REPLY, config=stream_config(bedrock_config(api_key="")), env=env
    )
    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {BEARER}"
    assert "x-amz-date" not in request.headers
    _, _, route = await replay_bedrock(
        REPLY, config=stream_config(bedrock_config(api_key="bedrock-api-key-YmVkcm9jaw=="))
    )
    assert (
        route.calls.last.request.headers["authorization"] == "Bearer bedrock-api-key-YmVkcm9jaw=="
    )


async def test_an_authorization_header_in_the_config_is_sent_alone() -> None:
    config = stream_config(bedrock_config(headers={"Authorization": "Bearer from-a-gateway"}))
    env = {"AWS_BEARER_TOKEN_BEDROCK": BEARER}
    _, _, route = await replay_bedrock(REPLY, config=config, env=env)
    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer from-a-gateway"
    assert "x-amz-date" not in request.headers and "x-amz-content-sha256" not in request.headers


def _refusal(
    api_key: str = "", env: dict[str, str] | None = None
) -> tuple[ModelConfig, dict[str, str]]:
    return bedrock_config(api_key=api_key), fixed_env(**(env or {}))


@pytest.mark.parametrize(
    ("api_key", "env", "named"),
    [
        ("AKIAEXAMPLE:", {}, "access:secret"),
        ("a:b:c:d", {}, "access:secret"),
        ("ASIAEXAMPLE:secretvalue", {}, "temporary"),
        ("", {"AWS_ACCESS_KEY_ID": "ASIAENV", "AWS_SECRET_ACCESS_KEY": "x"}, "AWS_SESSION_TOKEN"),
        ("", {"AWS_ACCESS_KEY_ID": "AKIAENV"}, "AWS_SECRET_ACCESS_KEY"),
        ("", {"AWS_SECRET_ACCESS_KEY": "only-the-secret"}, "AWS_ACCESS_KEY_ID"),
        ("", {"AWS_BEARER_TOKEN_BEDROCK": "ABSK with space"}, "AWS_BEARER_TOKEN_BEDROCK"),
        ("AKIAIOSFODNN7EXAMPLE", {}, "access key id"),
        ("ABSK!not*base64", {}, "never has"),
        ("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", {}, "secret access key"),
        ("AKIA\u00e9X:secret", {}, "non-ASCII"),
        ("", {"AWS_BEARER_TOKEN_BEDROCK": "ABSK\udcff"}, "not valid text"),
        ("", {}, "no AWS credentials"),
    ],
    ids=[
        "empty secret",
        "four parts",
        "ASIA without token",
        "ASIA env without token",
        "half pair: no secret",
        "half pair: no access key",
        "bearer with whitespace",
        "bearer is an access key id",
        "bearer not base64",
        "bare secret",
        "non-ASCII access key",
        "undecodable env",
        "nothing",
    ],
)
async def test_unusable_credentials_are_refused_before_anything_is_sent(
    api_key: str, env: dict[str, str], named: str
) -> None:
    config, environment = _refusal(api_key, env)
    provider = BedrockProvider(config, env=environment, clock=lambda: FIXED_TIME)
    async with provider, respx.mock(assert_all_called=False) as router:
        route = router.post(url__regex=".*").mock(return_value=httpx.Response(200))
        with pytest.raises(ProviderError) as caught:
            await provider.stream(stream_config(config), lambda d: None)
    assert not route.called
    assert caught.value.kind is ErrorKind.AUTH
    assert named in caught.value.message
    assert "only-the-secret" not in caught.value.message


def test_a_bearer_key_with_an_unknown_prefix_is_sent_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = bedrock_config(api_key="Zm9vYmFyYmF6cXV4")
    with caplog.at_level(logging.WARNING):
        first = resolve_auth(config, fixed_env())
        resolve_auth(config, fixed_env())
    assert type(first).__name__ == "BearerAuth"
    assert len([r for r in caplog.records if "does not start with" in r.getMessage()]) == 1


async def test_a_user_header_named_like_a_signed_one_is_refused_on_the_sigv4_path() -> None:
    config = stream_config(bedrock_config(headers={"X-Amz-Date": "20000101T000000Z"}))
    with pytest.raises(ProviderError) as caught:
        await replay_bedrock(REPLY, config=config)
    assert caught.value.kind is ErrorKind.OTHER
    assert "X-Amz-Date" in caught.value.message


# --- the shared files ------------------------------------------------------------------


def write_files(tmp_path: Path, credentials: str = "", config: str = "") -> dict[str, str]:
    (tmp_path / "credentials").write_text(credentials)
    (tmp_path / "config").write_text(config)
    return {
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
    }


async def test_the_default_profile_of_the_credentials_file_signs(tmp_path: Path) -> None:
    env = write_files(
        tmp_path,
        credentials=(
            f"[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = {SECRET_KEY}\n"
        ),
        config="[default]\nregion = us-west-2\n",
    )
    config = stream_config(bedrock_config(api_key="", base_url=""))
    _, _, route = await replay_bedrock(REPLY, config=config, env=env)
    request = route.calls.last.request
    assert request.url.host == "bedrock-runtime.us-west-2.amazonaws.com"
    assert "Credential=AKIAFILE/20150830/us-west-2/bedrock/" in request.headers["authorization"]
    assert botocore_authorization(request, SECRET_KEY, None) == request.headers["authorization"]


async def test_aws_profile_picks_a_config_file_profile_with_its_session_token(
    tmp_path: Path,
) -> None:
    env = write_files(
        tmp_path,
        credentials="[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = x\n",
        config=(
            "[profile work]\n"
            "aws_access_key_id = ASIAWORK\n"
            f"aws_secret_access_key = {SECRET_KEY}\n"
            f"aws_session_token = {SESSION_TOKEN}\n"
            "s3 =\n  max_concurrent_requests = 4\n"
        ),
    )
    env["AWS_PROFILE"] = "work"
    _, _, route = await replay_bedrock(
        REPLY, config=stream_config(bedrock_config(api_key="")), env=env
    )
    request = route.calls.last.request
    assert "Credential=ASIAWORK/" in request.headers["authorization"]
    assert request.headers["x-amz-security-token"] == SESSION_TOKEN


def test_the_credentials_file_wins_over_the_config_file_for_one_profile(tmp_path: Path) -> None:
    env = write_files(
        tmp_path,
        credentials="[dev]\naws_access_key_id = AKIACRED\naws_secret_access_key = a\n",
        config="[profile dev]\naws_access_key_id = AKIACONF\naws_secret_access_key = b\n",
    )
    auth = resolve_auth(bedrock_config(api_key=""), fixed_env(**env, AWS_PROFILE="dev"))
    assert type(auth).__name__ == "SigV4Auth"
    assert auth.credentials.access_key == "AKIACRED"  # type: ignore[union-attr]


def test_environment_keys_win_over_the_files(tmp_path: Path) -> None:
    env = write_files(
        tmp_path, credentials="[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = a\n"
    )
    env.update(AWS_ACCESS_KEY_ID="AKIAENV", AWS_SECRET_ACCESS_KEY="b")
    auth = resolve_auth(bedrock_config(api_key=""), fixed_env(**env))
    assert auth.credentials.access_key == "AKIAENV"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("credentials", "config", "profile", "named"),
    [
        ("", "[profile sso]\nsso_session = corp\nregion = us-east-1\n", "sso", "sso_session"),
        (
            "",
            "[profile r]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = d\n",
            "r",
            "role_arn",
        ),
        ("", "", "missing", "is in neither"),
        ("[p]\naws_access_key_id = AKIAHALF\n", "", "p", "aws_secret_access_key"),
        ("aws_secret_access_key = leaked-secret-value\n", "", "default", "before any [section]"),
        ("[p]\naws_secret_access_key leaked-secret-value\n", "", "p", "line 2"),
    ],
    ids=["sso", "assume role", "missing profile", "half pair", "no section", "bad line"],
)
def test_file_problems_are_auth_errors_that_never_quote_the_file(
    tmp_path: Path, credentials: str, config: str, profile: str, named: str
) -> None:
    env = write_files(tmp_path, credentials=credentials, config=config)
    with pytest.raises(ProviderError) as caught:
        resolve_auth(bedrock_config(api_key=""), fixed_env(**env, AWS_PROFILE=profile))
    assert caught.value.kind is ErrorKind.AUTH
    assert named in caught.value.message
    assert "leaked-secret-value" not in caught.value.message


def test_an_absent_default_profile_falls_through_to_the_missing_credentials_error(
    tmp_path: Path,
) -> None:
    env = write_files(
        tmp_path, credentials="[other]\naws_access_key_id = A\naws_secret_access_key = b\n"
    )
    with pytest.raises(ProviderError, match="no AWS credentials"):
        resolve_auth(bedrock_config(api_key=""), fixed_env(**env))


# --- secrets ---------------------------------------------------------------------------


def leaky_paths() -> list[Any]:
    echo = f"bad signature for {SECRET_KEY} with token {SESSION_TOKEN}"
    return [
        pytest.param(403, f'{{"message": "{echo}"}}'.encode(), None, id="403 echo"),
        pytest.param(500, f'{{"message": "{echo}"}}'.encode(), None, id="500 echo"),
        pytest.param(
            200,
            body(text_events("x")[:2]) + exception_frame("validationException", echo),
            None,
            id="exception frame",
        ),
        pytest.param(200, b"", httpx.ConnectError(echo), id="network error"),
    ]


@pytest.mark.parametrize(("status", "payload", "exc"), leaky_paths())
async def test_the_secret_key_and_session_token_never_appear_in_errors_logs_or_reprs(
    caplog: pytest.LogCaptureFixture, status: int, payload: bytes, exc: Exception | None
) -> None:
    model = bedrock_config(api_key=f"ASIAEXAMPLE:{SECRET_KEY}:{SESSION_TOKEN}")
    provider = BedrockProvider(model, env=fixed_env(), clock=lambda: FIXED_TIME)
    with caplog.at_level(logging.DEBUG):
        async with provider, respx.mock() as router:
            route = router.post(BEDROCK_URL + STREAM_PATH)
            if exc is not None:
                route.mock(side_effect=exc)
            else:
                route.mock(
                    return_value=httpx.Response(
                        status,
                        content=payload,
                        headers={"content-type": "application/vnd.amazon.eventstream"},
                    )
                )
            with pytest.raises(ProviderError) as caught:
                await provider.stream(stream_config(model), lambda d: None)
    auth = resolve_auth(model, fixed_env())
    texts = [str(caught.value), repr(caught.value), caught.value.message]
    texts += [r.getMessage() for r in caplog.records] + [str(r.args) for r in caplog.records]
    texts += [repr(provider), repr(model), repr(auth), str(auth)]
    assert "[redacted]" in caught.value.message
    for text in texts:
        assert SECRET_KEY not in text
        assert SESSION_TOKEN not in text


AWS_KEY_VARIABLES = (
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def test_the_vendor_row_reads_the_bearer_key_then_the_key_pair_and_no_generic_key() -> None:
    assert models.key_variables_for("bedrock") == AWS_KEY_VARIABLES
    assert models.api_key_variables()["bedrock"][0] == "AWS_BEARER_TOKEN_BEDROCK"
    env = {"API_KEY": "generic", "YOAGENT_API_KEY": "generic"}
    assert models.find_api_key("bedrock", env) is None
    env |= {"AWS_ACCESS_KEY_ID": " AKIAX ", "AWS_SESSION_TOKEN": "tok"}
    assert models.find_api_key("bedrock", env) is None  # half a pair is no key
    env["AWS_SECRET_ACCESS_KEY"] = "secret"
    assert models.find_api_key("bedrock", env) == ("AWS_ACCESS_KEY_ID", "AKIAX:secret:tok")
    del env["AWS_SESSION_TOKEN"]
    assert models.find_api_key("bedrock", env) == ("AWS_ACCESS_KEY_ID", "AKIAX:secret")
    env["AWS_BEARER_TOKEN_BEDROCK"] = BEARER
    assert models.find_api_key("bedrock", env) == ("AWS_BEARER_TOKEN_BEDROCK", BEARER)


def test_core_never_gives_a_bedrock_config_a_generic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in AWS_KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("API_KEY", "generic")
    monkeypatch.setenv("YOAGENT_API_KEY", "generic")
    config = models.bedrock("global.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert resolve_api_key(config) is None
    assert with_env_key(config).api_key == ""
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", BEARER)
    assert resolve_api_key(config) == ("AWS_BEARER_TOKEN_BEDROCK", BEARER)
    # Still left empty: the provider reads the environment itself, on every request.
    assert with_env_key(config).api_key == ""


def test_a_config_naming_its_own_variable_reads_the_bearer_key_from_it() -> None:
    model = bedrock_config(api_key="", key_variable="MY_BEDROCK_KEY")
    env = fixed_env(MY_BEDROCK_KEY=BEARER, AWS_BEARER_TOKEN_BEDROCK="bedrock-api-key-other")
    auth = resolve_auth(model, env)
    assert auth == BearerAuth(token=BEARER, origin="MY_BEDROCK_KEY")


def test_credentials_origin_names_the_variable_or_the_profile_never_a_generic_key(
    tmp_path: Path,
) -> None:
    env = write_files(tmp_path) | fixed_env(API_KEY="generic", YOAGENT_API_KEY="generic")
    assert models.credentials_origin("bedrock", env) is None
    (tmp_path / "credentials").write_text(
        f"[work]\naws_access_key_id = AKIAFILE\naws_secret_access_key = {SECRET_KEY}\n"
    )
    env["AWS_PROFILE"] = "work"
    origin = models.credentials_origin("bedrock", env)
    assert origin == f"profile 'work' in {tmp_path / 'credentials'}"
    env |= {"AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    assert models.credentials_origin("bedrock", env) == "AWS_ACCESS_KEY_ID"
    env["AWS_BEARER_TOKEN_BEDROCK"] = BEARER
    assert models.credentials_origin("bedrock", env) == "AWS_BEARER_TOKEN_BEDROCK"


def test_credentials_origin_raises_the_requests_auth_error_for_an_unusable_profile(
    tmp_path: Path,
) -> None:
    env = write_files(tmp_path, config="[profile sso]\nsso_session = corp\nregion = eu-west-1\n")
    env = fixed_env(**env, AWS_PROFILE="sso")
    with pytest.raises(ProviderError) as caught:
        models.credentials_origin("bedrock", env)
    assert caught.value.kind is ErrorKind.AUTH
    assert "sso_session" in caught.value.message
    assert "aws configure export-credentials --profile sso" in caught.value.message
