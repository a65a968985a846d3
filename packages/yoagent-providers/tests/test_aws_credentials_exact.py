"""Bedrock's credentials and region, word for word: where each one came from, every refusal's
exact text, the shared files found under ``HOME`` and ``AWS_DEFAULT_PROFILE``, the files'
legacy and duplicate keys, and the process environment read when none is passed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from bedrock_fixtures import SECRET_KEY, SESSION_TOKEN, bedrock_config, fixed_env
from test_bedrock_auth import write_files

from yoagent.core import ErrorKind, ProviderError
from yoagent.providers._aws_credentials import (
    BearerAuth,
    SharedFiles,
    SigV4Auth,
    resolve_auth,
    resolve_region,
)
from yoagent.providers._sigv4 import AwsCredentials

BEARER = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlMDEyMzQ1Njc4OQ=="
UNSENDABLE = ": it holds whitespace, a control character or a non-ASCII character; check its value"
AWS_VARIABLES = (
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


def refusal(api_key: str = "", **env: str) -> str:
    with pytest.raises(ProviderError) as caught:
        resolve_auth(bedrock_config(api_key=api_key), fixed_env(**env))
    assert caught.value.kind is ErrorKind.AUTH
    return caught.value.message


def profile_credentials(tmp_path: Path, profile: str, credentials: str) -> AwsCredentials:
    env = write_files(tmp_path, credentials=credentials)
    auth = resolve_auth(bedrock_config(api_key=""), fixed_env(**env, AWS_PROFILE=profile))
    assert isinstance(auth, SigV4Auth)
    return auth.credentials


def clean_environment(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))


# --- ModelConfig.api_key ----------------------------------------------------------------


def test_the_api_key_is_the_origin_of_a_bearer_key_and_of_a_key_pair() -> None:
    assert resolve_auth(bedrock_config(api_key=BEARER), fixed_env()) == BearerAuth(
        token=BEARER, origin="ModelConfig.api_key"
    )
    pair = resolve_auth(bedrock_config(api_key=f"AKIAPAIR:{SECRET_KEY}"), fixed_env())
    assert pair == SigV4Auth(
        credentials=AwsCredentials("AKIAPAIR", SECRET_KEY, None), origin="ModelConfig.api_key"
    )


def test_each_part_of_an_api_key_pair_is_refused_in_its_own_words() -> None:
    assert refusal("AKIA\u00e9X:secret") == (
        f"the access key id from ModelConfig.api_key cannot be sent{UNSENDABLE}"
    )
    assert refusal("AKIAPAD: padded-secret") == (
        "the secret access key from ModelConfig.api_key is empty or padded with spaces"
    )
    assert refusal(f"AKIAPAIR:{SECRET_KEY}:tok en") == (
        "the session token from ModelConfig.api_key (access:secret:token) cannot be sent"
        f"{UNSENDABLE}"
    )


def test_an_unprefixed_bearer_key_warns_once_for_each_place_it_came_from(
    caplog: pytest.LogCaptureFixture,
) -> None:
    names = ("YOAGENT_TEST_UNPREFIXED_KEY_A", "YOAGENT_TEST_UNPREFIXED_KEY_B")
    with caplog.at_level(logging.WARNING):
        for name in names * 2:
            model = bedrock_config(api_key="", key_variable=name)
            assert resolve_auth(model, fixed_env(**{name: "Zm9vYmFyYmF6cXV4"})) == BearerAuth(
                token="Zm9vYmFyYmF6cXV4", origin=name
            )
    warned = [r.getMessage() for r in caplog.records if "does not start with" in r.getMessage()]
    assert warned == [
        f"the Bedrock API key from {name} does not start with bedrock-api-key- or ABSK; "
        "sending it anyway"
        for name in names
    ]


# --- the environment ----------------------------------------------------------------------


def test_half_a_key_pair_in_the_environment_names_the_missing_half() -> None:
    assert refusal(AWS_SECRET_ACCESS_KEY="s") == (
        "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
    )
    assert refusal(AWS_ACCESS_KEY_ID="AKIAHALF") == (
        "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
    )


def test_environment_keys_are_their_own_origin_and_a_temporary_one_asks_for_its_token() -> None:
    auth = resolve_auth(
        bedrock_config(api_key=""),
        fixed_env(AWS_ACCESS_KEY_ID="AKIAENV", AWS_SECRET_ACCESS_KEY=SECRET_KEY),
    )
    assert auth == SigV4Auth(
        credentials=AwsCredentials("AKIAENV", SECRET_KEY, None), origin="AWS_ACCESS_KEY_ID"
    )
    assert refusal(AWS_ACCESS_KEY_ID="ASIAENV", AWS_SECRET_ACCESS_KEY=SECRET_KEY) == (
        "the access key id from AWS_ACCESS_KEY_ID is temporary (ASIA…) but no session token "
        "came with it; set AWS_SESSION_TOKEN"
    )


def test_no_credentials_anywhere_says_every_way_to_give_them() -> None:
    assert refusal() == (
        "no AWS credentials for Bedrock: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), "
        "or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
        "temporary credentials), or configure a profile in ~/.aws/credentials, or pass "
        "ModelConfig.api_key as access:secret[:token]"
    )


def test_without_an_environment_given_the_process_environment_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("YOAGENT_TEST_PROCESS_BEDROCK_KEY", BEARER)
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    model = bedrock_config(api_key="", key_variable="YOAGENT_TEST_PROCESS_BEDROCK_KEY")
    assert resolve_auth(model) == BearerAuth(
        token=BEARER, origin="YOAGENT_TEST_PROCESS_BEDROCK_KEY"
    )
    assert resolve_region("gateway.example.com") == "ap-south-1"


def test_no_region_anywhere_is_refused_in_full() -> None:
    with pytest.raises(ProviderError) as caught:
        resolve_region("gateway.example.com", fixed_env())
    assert caught.value.kind is ErrorKind.AUTH
    assert caught.value.message == (
        "cannot tell which AWS region to sign for: 'gateway.example.com' is not a "
        "bedrock-runtime.<region>.amazonaws.com host; set AWS_REGION"
    )


# --- the shared files -------------------------------------------------------------------


def home_files(home: Path) -> None:
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(
        f"[default]\naws_access_key_id = AKIAHOME\naws_secret_access_key = {SECRET_KEY}\n"
    )
    (home / ".aws" / "config").write_text("[default]\nregion = eu-central-1\n")


def test_the_files_under_home_give_the_default_profile_and_its_region(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home_files(home)
    clean_environment(monkeypatch, tmp_path / "elsewhere")
    where = f"profile 'default' in {home / '.aws' / 'credentials'}"
    expected = SigV4Auth(
        credentials=AwsCredentials("AKIAHOME", SECRET_KEY, None), origin=where, profile="default"
    )
    env = {"HOME": str(home)}
    assert resolve_auth(bedrock_config(api_key=""), env) == expected
    assert resolve_region("gateway.example.com", env) == "eu-central-1"


def test_without_home_in_the_environment_given_the_user_home_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home_files(tmp_path)
    clean_environment(monkeypatch, tmp_path)
    auth = resolve_auth(bedrock_config(api_key=""), {})
    assert isinstance(auth, SigV4Auth)
    assert auth.origin == f"profile 'default' in {tmp_path / '.aws' / 'credentials'}"
    assert resolve_region("gateway.example.com", {}) == "eu-central-1"


def test_aws_default_profile_names_the_profile_when_aws_profile_is_unset(tmp_path: Path) -> None:
    env = write_files(
        tmp_path,
        credentials=(
            "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = d\n"
            f"[team]\naws_access_key_id = AKIATEAM\naws_secret_access_key = {SECRET_KEY}\n"
        ),
    )
    auth = SharedFiles(fixed_env(**env, AWS_DEFAULT_PROFILE="team")).credentials()
    assert auth == SigV4Auth(
        credentials=AwsCredentials("AKIATEAM", SECRET_KEY, None),
        origin=f"profile 'team' in {tmp_path / 'credentials'}",
        profile="team",
    )


def test_a_profile_without_keys_in_the_credentials_file_is_read_from_the_config_file(
    tmp_path: Path,
) -> None:
    env = write_files(
        tmp_path,
        credentials="[work]\nregion = us-west-2\n",
        config=(
            f"[profile work]\naws_access_key_id = AKIACONF\naws_secret_access_key = {SECRET_KEY}\n"
        ),
    )
    auth = resolve_auth(bedrock_config(api_key=""), fixed_env(**env, AWS_PROFILE="work"))
    assert auth == SigV4Auth(
        credentials=AwsCredentials("AKIACONF", SECRET_KEY, None),
        origin=f"profile 'work' in {tmp_path / 'config'}",
        profile="work",
    )


def test_the_legacy_aws_security_token_is_the_session_token(tmp_path: Path) -> None:
    credentials = (
        f"[old]\naws_access_key_id = ASIAOLD\naws_secret_access_key = {SECRET_KEY}\n"
        f"aws_security_token = {SESSION_TOKEN}\n"
    )
    assert profile_credentials(tmp_path, "old", credentials) == AwsCredentials(
        "ASIAOLD", SECRET_KEY, SESSION_TOKEN
    )


def test_a_temporary_key_in_a_file_without_its_token_names_the_profile_and_the_file(
    tmp_path: Path,
) -> None:
    env = write_files(
        tmp_path,
        credentials=f"[tmp]\naws_access_key_id = ASIAFILE\naws_secret_access_key = {SECRET_KEY}\n",
    )
    where = f"profile 'tmp' in {tmp_path / 'credentials'}"
    assert refusal(**env, AWS_PROFILE="tmp") == (
        f"the access key id from {where} is temporary (ASIA…) but no session token came "
        f"with it; set aws_session_token ({where})"
    )


def test_a_profile_with_neither_keys_nor_another_source_holds_no_access_key(
    tmp_path: Path,
) -> None:
    env = write_files(tmp_path, config="[profile bare]\nregion = us-east-2\n")
    assert refusal(**env, AWS_PROFILE="bare") == "profile 'bare' holds no aws_access_key_id"


def test_repeated_sections_and_keys_in_a_file_are_read_the_last_one_winning(
    tmp_path: Path,
) -> None:
    credentials = (
        "[dup]\naws_access_key_id = AKIAFIRST\naws_access_key_id = AKIASECOND\n"
        f"[dup]\naws_secret_access_key = {SECRET_KEY}\n"
    )
    assert profile_credentials(tmp_path, "dup", credentials) == AwsCredentials(
        "AKIASECOND", SECRET_KEY, None
    )


def test_a_file_that_cannot_be_parsed_or_decoded_is_named_with_its_lines_or_the_error(
    tmp_path: Path,
) -> None:
    env = write_files(tmp_path, credentials="[p]\nnot a setting\nneither is this\n")
    path = tmp_path / "credentials"
    assert refusal(**env, AWS_PROFILE="p") == (
        f"cannot read {path}: line 2, 3 is not 'name = value'"
    )
    path.write_bytes(b"[p]\naws_access_key_id = AKIA\xff\n")
    assert refusal(**env, AWS_PROFILE="p") == f"cannot read {path} (UnicodeDecodeError)"
