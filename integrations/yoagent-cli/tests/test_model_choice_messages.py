"""Which model the flags and the environment choose, in-process: each refusal word for word
(no key at all, none for the provider, an unknown provider, openai-compatible without a
URL), a server asked for its first model, the base URL kept without its trailing slash,
and where the key comes from."""

from __future__ import annotations

import pytest
from test_served_model_lists import ModelsServer, models_server

from yoagent.cli import config
from yoagent.cli.config import (
    OPENAI_COMPATIBLE,
    ConfigError,
    no_key_message,
    openai_compatible,
    resolve_model,
)
from yoagent.cli.served import ServedModels
from yoagent.core import ApiProtocol
from yoagent.providers import models

__all__ = ["models_server"]  # the fixture, used by name


def refusal(**flags: str | None) -> str:
    arguments: dict[str, str | None] = {"provider": None, "model": None, "base_url": None}
    arguments.update(flags)
    with pytest.raises(ConfigError) as error:
        resolve_model(env={}, ask_server=False, **arguments)
    return str(error.value)


def test_no_key_at_all_lists_the_other_providers_keys_wrapped() -> None:
    assert no_key_message() == (
        "yoagent: no API key found.\n"
        "Set ANTHROPIC_API_KEY or OPENAI_API_KEY (or another provider's key:\n"
        "  GEMINI_API_KEY, OPENROUTER_API_KEY, DEEPSEEK_API_KEY, XAI_API_KEY,\n"
        "  GROQ_API_KEY, MISTRAL_API_KEY, DASHSCOPE_API_KEY, MOONSHOT_API_KEY,\n"
        "  ZAI_API_KEY, MINIMAX_API_KEY, TOGETHER_API_KEY, FIREWORKS_API_KEY,\n"
        "  CEREBRAS_API_KEY, OPENCODE_API_KEY, PERPLEXITY_API_KEY, HF_TOKEN,\n"
        "  NVIDIA_API_KEY),\n"
        "or point --base-url at a local OpenAI-compatible server (no key needed), e.g.\n"
        "  yoagent --base-url http://localhost:11434/v1 --model llama3.2\n"
    )
    assert refusal() == no_key_message()


def test_each_refusal_word_for_word() -> None:
    assert refusal(provider="openai") == (
        "yoagent: no API key for openai: set OPENAI_API_KEY or YOAGENT_API_KEY or API_KEY,\n"
        "or point --base-url at a local OpenAI-compatible server (no key needed).\n"
    )
    known = ", ".join(sorted(models.VENDORS))
    assert refusal(provider="nope") == (
        f"yoagent: unknown provider 'nope'; known providers: {known}\n"
    )
    assert refusal(provider=OPENAI_COMPATIBLE) == (
        "yoagent: --provider openai-compatible needs --base-url\n"
    )


def test_a_model_on_any_compatible_server() -> None:
    config = openai_compatible("http://127.0.0.1:9/APIX/", "m-1")
    assert (config.api, config.provider, config.id, config.name) == (
        ApiProtocol.OPENAI_COMPLETIONS,
        OPENAI_COMPATIBLE,
        "m-1",
        "m-1",
    )
    assert config.base_url == "http://127.0.0.1:9/APIX"
    assert config.compat is not None
    assert config.compat.max_tokens_field == "max_tokens"
    assert config.compat.reasoning_field == "reasoning_content"


def test_a_base_url_alone_asks_the_server_by_default_and_takes_its_first_model(
    models_server: ModelsServer,
) -> None:
    models_server.answer({"object": "list", "data": [{"id": "m-a"}, {"id": "m-b"}]})
    choice = resolve_model(
        provider=None, model=None, base_url=models_server.base, env={"API_KEY": "k"}
    )
    assert (choice.config.id, choice.key_variable, choice.warnings) == ("m-a", "API_KEY", ())


def test_a_local_provider_without_a_default_model_asks_its_own_server() -> None:
    choice = resolve_model(provider="vllm", model=None, base_url=None, env={}, ask_server=False)
    assert (choice.config.id, choice.key_variable, choice.warnings) == ("default", "", ())
    assert choice.config.base_url == "http://localhost:8000/v1"


def test_a_local_provider_whose_server_lists_nothing_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def nothing_served(base_url: str) -> ServedModels:
        asked.append(base_url)
        return ServedModels(base_url + "/models", (), "it lists no models")

    monkeypatch.setattr(config, "served_models", nothing_served)
    choice = resolve_model(provider="vllm", model=None, base_url=None, env={})
    assert asked == ["http://localhost:8000/v1"]
    assert choice.config.id == "default"
    assert choice.warnings == (
        "could not list the models at http://localhost:8000/v1/models (it lists no models); "
        "using the model id 'default': pass --model NAME to choose one",
    )


def test_a_provider_at_a_base_url_keeps_its_key_and_the_url_without_its_slash() -> None:
    choice = resolve_model(
        provider="openai",
        model="gpt-x",
        base_url="http://127.0.0.1:9/APIX/",
        env={"OPENAI_API_KEY": "k"},
    )
    assert (choice.config.base_url, choice.key_variable, choice.warnings) == (
        "http://127.0.0.1:9/APIX",
        "OPENAI_API_KEY",
        (),
    )
    keyless = resolve_model(
        provider="openai", model="gpt-x", base_url="http://127.0.0.1:9/v1", env={}
    )
    assert keyless.key_variable == ""


def test_a_provider_with_its_key_and_a_model_has_no_warnings() -> None:
    choice = resolve_model(
        provider="openai", model="gpt-x", base_url=None, env={"OPENAI_API_KEY": "k"}
    )
    assert (choice.config.id, choice.key_variable, choice.warnings) == (
        "gpt-x",
        "OPENAI_API_KEY",
        (),
    )
