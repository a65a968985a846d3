"""Provider and model resolution from flags and the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from yoagent.cli.config import (
    DEFAULT_MODELS,
    OPENAI_COMPATIBLE,
    ConfigError,
    detect_provider,
    no_key_message,
    resolve_model,
)
from yoagent.core import ApiProtocol
from yoagent.providers import models


def resolve(env: dict[str, str], **flags: str | None):
    return resolve_model(
        provider=flags.get("provider"),
        model=flags.get("model"),
        base_url=flags.get("base_url"),
        env=env,
        ask_server=False,
    )


def test_without_flags_the_first_provider_with_a_key_is_used() -> None:
    choice = resolve({"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    assert choice.config.provider == "anthropic"
    assert choice.config.id == DEFAULT_MODELS["anthropic"]
    assert choice.key_variable == "ANTHROPIC_API_KEY"


def test_only_an_openai_key_selects_openai_with_its_default_model() -> None:
    choice = resolve({"OPENAI_API_KEY": "k"})
    assert choice.config.provider == "openai"
    assert choice.config.id == "gpt-5.5"
    assert choice.config.api is ApiProtocol.OPENAI_RESPONSES  # a reasoning model (issue 13)


def test_a_blank_key_does_not_count() -> None:
    choice = resolve({"ANTHROPIC_API_KEY": "  ", "GROQ_API_KEY": "k"})
    assert choice.config.provider == "groq"


def test_a_model_id_picks_its_vendor_among_the_keys_set() -> None:
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    assert resolve(env, model="gpt-5.5").config.provider == "openai"
    assert detect_provider(env, "claude-haiku-4-5") == "anthropic"


def test_provider_flag_uses_the_default_model_of_that_provider() -> None:
    choice = resolve({"DEEPSEEK_API_KEY": "k"}, provider="deepseek")
    assert choice.config.id == DEFAULT_MODELS["deepseek"]
    assert choice.config.base_url == "https://api.deepseek.com"


def test_provider_and_model_flags_build_that_model() -> None:
    choice = resolve({"ANTHROPIC_API_KEY": "k"}, provider="anthropic", model="claude-haiku-4-5")
    assert choice.config.id == "claude-haiku-4-5"
    assert choice.config.context_window == 200_000  # from the preset


def test_fallback_key_variable_serves_an_explicit_provider() -> None:
    choice = resolve({"YOAGENT_API_KEY": "k"}, provider="mistral")
    assert choice.key_variable == "YOAGENT_API_KEY"


def test_base_url_alone_needs_no_key_and_is_openai_compatible() -> None:
    choice = resolve({}, base_url="http://127.0.0.1:8080/v1/", model="qwen3")
    config = choice.config
    assert config.provider == OPENAI_COMPATIBLE
    assert config.api is ApiProtocol.OPENAI_COMPLETIONS
    assert config.base_url == "http://127.0.0.1:8080/v1"
    assert config.id == "qwen3"
    assert config.api_key == ""
    assert choice.key_variable == ""


def test_base_url_without_model_asks_nobody_when_told_not_to() -> None:
    assert resolve({}, base_url="http://127.0.0.1:1/v1").config.id == "default"


def test_a_server_that_cannot_be_asked_gets_default_with_a_warning_saying_why() -> None:
    for provider in (None, "lmstudio"):
        choice = resolve_model(
            provider=provider,
            model=None,
            base_url="http://127.0.0.1:1/v1",  # nothing listens on port 1
            env={},
            ask_server=True,
        )
        assert choice.config.id == "default"
        assert choice.warnings == (
            "could not list the models at http://127.0.0.1:1/v1/models (connection "
            "refused); using the model id 'default': pass --model NAME to choose one",
        )
    secret = resolve_model(
        provider=None,
        model=None,
        base_url="http://user:hunter2-pw@127.0.0.1:1/v1?key=sk-0123456789abcdef",
        env={},
        ask_server=True,
    )
    (warning,) = secret.warnings
    assert "hunter2" not in warning and "sk-0123" not in warning
    given = resolve_model(
        provider=None, model="m", base_url="http://127.0.0.1:1/v1", env={}, ask_server=True
    )
    assert given.warnings == ()


def test_base_url_with_a_provider_keeps_the_provider_quirks() -> None:
    choice = resolve({}, provider="ollama", base_url="http://box:11434/v1")
    assert choice.config.provider == "ollama"
    assert choice.config.base_url == "http://box:11434/v1"
    assert choice.config.id == DEFAULT_MODELS["ollama"]


def test_local_provider_needs_no_key() -> None:
    choice = resolve({}, provider="ollama", model="llama3.2")
    assert choice.config.base_url == "http://localhost:11434/v1"
    assert choice.key_variable == ""


def test_no_key_and_no_base_url_is_a_config_error_naming_what_to_set() -> None:
    with pytest.raises(ConfigError) as raised:
        resolve({})
    message = str(raised.value)
    assert message == no_key_message()
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY", "--base-url"):
        assert name in message


def test_explicit_provider_without_its_key_names_its_variable() -> None:
    with pytest.raises(ConfigError) as raised:
        resolve({"OPENAI_API_KEY": "k"}, provider="anthropic")
    assert "ANTHROPIC_API_KEY" in str(raised.value)
    assert "--base-url" in str(raised.value)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as raised:
        resolve({"OPENAI_API_KEY": "k"}, provider="nope")
    assert "unknown provider 'nope'" in str(raised.value)
    assert "anthropic" in str(raised.value)


def test_defaults_are_presets_where_the_provider_has_a_fitting_one() -> None:
    presets = {(config.provider, config.id) for config in models.presets()}
    # OpenRouter's only preset is a deep-research model, not a coding agent's default.
    not_fitting = {"openrouter"}
    for provider, model_id in DEFAULT_MODELS.items():
        assert provider in models.VENDORS
        if any(p == provider for p, _ in presets) and provider not in not_fitting:
            assert (provider, model_id) in presets, provider


def test_bedrock_takes_its_bearer_key_or_the_aws_key_pair_never_a_generic_key(
    tmp_path: Path,
) -> None:
    files = {"HOME": str(tmp_path), "API_KEY": "generic", "YOAGENT_API_KEY": "generic"}
    with pytest.raises(ConfigError) as raised:
        resolve(files, provider="bedrock")
    message = str(raised.value)
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert name in message
    assert " API_KEY" not in message
    # Half a pair is not a key either.
    with pytest.raises(ConfigError):
        resolve({**files, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE"}, provider="bedrock")
    pair = {**files, "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"}
    choice = resolve(pair, provider="bedrock")
    assert choice.key_variable == "AWS_ACCESS_KEY_ID"
    assert choice.config.api is ApiProtocol.BEDROCK_CONVERSE_STREAM
    assert choice.config.id == DEFAULT_MODELS["bedrock"]
    assert choice.config.api_key == ""  # the provider reads (and signs with) the pair itself
    bearer = resolve({**pair, "AWS_BEARER_TOKEN_BEDROCK": "ABSKexample"}, provider="bedrock")
    assert bearer.key_variable == "AWS_BEARER_TOKEN_BEDROCK"


def test_bedrock_takes_a_profile_from_the_shared_aws_files(tmp_path: Path) -> None:
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text(
        "[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = secret\n"
    )
    choice = resolve({"HOME": str(tmp_path)}, provider="bedrock", model="amazon.nova-pro-v1:0")
    assert choice.key_variable.startswith("profile 'default' in ")
    assert choice.config.id == "amazon.nova-pro-v1:0"


def test_a_bedrock_profile_needing_sso_is_a_config_error_saying_how_to_export_it(
    tmp_path: Path,
) -> None:
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "config").write_text("[profile corp]\nsso_session = corp\n")
    with pytest.raises(ConfigError) as raised:
        resolve({"HOME": str(tmp_path), "AWS_PROFILE": "corp"}, provider="bedrock")
    assert "aws configure export-credentials --profile corp" in str(raised.value)


def test_aws_keys_alone_never_pick_bedrock() -> None:
    """AWS keys are set for many services: Bedrock is only used when asked for."""
    env = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"}
    assert detect_provider(env) is None
    assert detect_provider({**env, "AWS_BEARER_TOKEN_BEDROCK": "ABSKexample"}) is None
