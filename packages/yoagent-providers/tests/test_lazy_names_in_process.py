"""The package's lazy names resolved in this process (``test_lazy_import`` checks what a
fresh interpreter imports): each provider class and ``models`` come from their own module
and are kept in the package's namespace; another name is an ``AttributeError``."""

from __future__ import annotations

import importlib

import pytest

import yoagent.providers as providers

LAZY = {
    "AnthropicProvider": "anthropic",
    "AzureOpenAiResponsesProvider": "azure_openai",
    "BedrockProvider": "bedrock",
    "GoogleProvider": "google",
    "OpenAiCompletionsProvider": "openai_completions",
    "OpenAiResponsesProvider": "openai_responses",
    "VertexProvider": "vertex",
}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_a_provider_class_comes_from_its_module_and_is_kept(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(vars(providers), name, raising=False)
    module = importlib.import_module(f"yoagent.providers.{LAZY[name]}")
    assert getattr(providers, name) is getattr(module, name)
    assert vars(providers)[name] is getattr(module, name)


def test_models_is_the_models_module_and_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(vars(providers), "models", raising=False)
    models = importlib.import_module("yoagent.providers.models")
    assert providers.models is models
    assert vars(providers)["models"] is models


def test_another_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError) as caught:
        providers.__getattr__("NoSuchProvider")
    assert str(caught.value) == "module 'yoagent.providers' has no attribute 'NoSuchProvider'"
