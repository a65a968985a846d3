"""Where a model's key comes from, and when a model needs one: the variables read, in
order, per protocol; which base URLs count as a server on this machine or a private
network (no key needed) for a config that names its variable; and the error's text.
(Added from mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import pytest

from yoagent.core import Agent, ApiProtocol, MissingApiKeyError, MockProvider, ModelConfig
from yoagent.core.provider import (
    FALLBACK_KEY_VARIABLES,
    ProviderRegistry,
    key_variables,
    resolve_api_key,
)

OPENAI = ApiProtocol.OPENAI_COMPLETIONS
BEDROCK = ApiProtocol.BEDROCK_CONVERSE_STREAM


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for variable in ("OPENAI_API_KEY", "LOCAL_KEY", *FALLBACK_KEY_VARIABLES):
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


def _registry() -> ProviderRegistry:
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(OPENAI, lambda c: MockProvider())
    return registry


def _needs_a_key(base_url: str) -> bool:
    """Whether an OpenAI-compatible config naming its variable, with no key set, is refused."""
    config = ModelConfig(
        api=OPENAI, provider="openai", id="m", base_url=base_url, key_variable="LOCAL_KEY"
    )
    try:
        Agent.from_config(config, registry=_registry())
    except MissingApiKeyError:
        return True
    return False


# -- the variables read -----------------------------------------------------------------------


def test_a_config_without_a_variable_of_its_own_reads_only_the_fallbacks() -> None:
    config = ModelConfig(api=OPENAI, provider="p", id="m")
    assert key_variables(config) == FALLBACK_KEY_VARIABLES == ("YOAGENT_API_KEY", "API_KEY")


def test_a_config_reads_its_own_variable_then_the_fallbacks() -> None:
    config = ModelConfig(api=OPENAI, provider="p", id="m", key_variable="OPENAI_API_KEY")
    assert key_variables(config) == ("OPENAI_API_KEY", "YOAGENT_API_KEY", "API_KEY")


def test_a_self_authenticating_protocol_reads_its_own_variable_and_no_fallback(
    no_keys: pytest.MonkeyPatch,
) -> None:
    config = ModelConfig(api=BEDROCK, provider="p", id="m", key_variable="LOCAL_KEY")
    assert key_variables(config) == ("LOCAL_KEY",)
    assert key_variables(ModelConfig(api=BEDROCK, provider="p", id="m")) == ()
    no_keys.setenv("API_KEY", "stray-fallback-key")
    assert resolve_api_key(config) is None
    no_keys.setenv("LOCAL_KEY", "  its-own-key  ")
    assert resolve_api_key(config) == ("LOCAL_KEY", "its-own-key")


def test_a_fallback_is_read_when_the_own_variable_is_unset(no_keys: pytest.MonkeyPatch) -> None:
    config = ModelConfig(api=OPENAI, provider="p", id="m", key_variable="OPENAI_API_KEY")
    no_keys.setenv("API_KEY", "the-fallback")
    assert resolve_api_key(config) == ("API_KEY", "the-fallback")


# -- which servers need no key ----------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1",  # loopback
        "http://[::1]:8000/v1",
        "http://10.1.2.3/v1",  # private, not loopback
        "http://192.168.0.7:8000",
        "http://169.254.1.1/v1",  # link-local
        "http://localhost:11434/v1",
        "localhost:11434",  # no scheme: read as a host and port
        "http://ollama:11434/v1",  # a single label
        "http://gpu-box.local:8000/v1",  # a local suffix, with a dot before it
        "http://GPU-BOX.LAN/v1",
        "http://models.internal/v1",
    ],
)
def test_a_server_on_this_machine_or_a_private_network_needs_no_key(
    no_keys: pytest.MonkeyPatch, base_url: str
) -> None:
    assert not _needs_a_key(base_url)


@pytest.mark.parametrize(
    "base_url",
    [
        "",  # the vendor's own endpoint
        "http:///v1",  # no host at all
        "https://api.example.com/v1",
        "https://8.8.8.8/v1",  # a public address
        "https://localhost.example.com/v1",  # "localhost" is not its suffix
    ],
)
def test_a_public_or_hostless_server_needs_a_key(
    no_keys: pytest.MonkeyPatch, base_url: str
) -> None:
    assert _needs_a_key(base_url)


def test_the_missing_key_error_names_the_provider_model_and_variable(
    no_keys: pytest.MonkeyPatch,
) -> None:
    config = ModelConfig(
        api=OPENAI,
        provider="acme",
        id="m-1",
        base_url="https://api.example.com",
        key_variable="LOCAL_KEY",
    )
    with pytest.raises(MissingApiKeyError) as raised:
        Agent.from_config(config, registry=_registry())
    assert str(raised.value).endswith(
        "no API key for acme (m-1): set LOCAL_KEY, or pass api_key= to the ModelConfig"
    )
    config.provider = ""
    with pytest.raises(MissingApiKeyError) as raised:
        Agent.from_config(config, registry=_registry())
    assert "no API key for openai_completions (m-1): set LOCAL_KEY" in str(raised.value)
