"""Vendor presets, named presets and the key-variable table."""

from __future__ import annotations

import pytest

from yoagent.core import PROVIDER_KEY_VARIABLES, AnthropicCompat, ApiProtocol, OpenAiCompat
from yoagent.providers import models


def test_at_least_fifteen_openai_compatible_vendors_with_real_urls() -> None:
    compatible = [v for v in models.VENDORS.values() if v.api is ApiProtocol.OPENAI_COMPLETIONS]
    assert len(compatible) >= 15
    for vendor in compatible:
        assert vendor.base_url.startswith(("https://", "http://localhost"))
        assert isinstance(vendor.compat, OpenAiCompat)


@pytest.mark.parametrize("name", sorted(models.VENDORS))
def test_every_vendor_constructor_returns_its_row(name: str) -> None:
    config = getattr(models, name)("some-model")
    assert config.provider == name
    assert config.id == "some-model"
    assert config.base_url == models.VENDORS[name].base_url


def test_key_variables_build_on_core_and_local_servers_need_none() -> None:
    table = models.api_key_variables()
    for provider, variable in PROVIDER_KEY_VARIABLES.items():
        assert table[provider] == variable
    assert table["ollama"] is None and table["lmstudio"] is None and table["vllm"] is None
    assert table["qwen"] == "DASHSCOPE_API_KEY"


@pytest.mark.parametrize(
    ("id", "adaptive", "native"),
    [
        ("claude-sonnet-4-5", False, True),
        ("claude-sonnet-4-5-20250929", False, True),
        ("claude-opus-4-6", True, True),
        ("claude-sonnet-4-20250514", False, False),
        ("claude-3-7-sonnet-20250219", False, False),
        ("claude-fable-5", True, True),
        ("claude-opus-5-5", True, True),
    ],
)
def test_anthropic_quirks_inferred_from_the_id(id: str, adaptive: bool, native: bool) -> None:
    config = models.anthropic(id)
    assert config.compat == AnthropicCompat(
        adaptive_thinking=adaptive, native_structured_output=native
    )
    assert config.api is ApiProtocol.ANTHROPIC_MESSAGES


def test_non_claude_ids_get_no_inferred_anthropic_quirks() -> None:
    assert models.anthropic("my-gateway-model").compat is None


def test_openai_reasoning_models_use_the_developer_role() -> None:
    assert models.openai("gpt-5.5").reasoning is True
    assert isinstance(models.openai("gpt-5.5").compat, OpenAiCompat)
    assert models.openai("gpt-5.5").compat.supports_developer_role  # type: ignore[union-attr]
    assert models.openai("gpt-4o").reasoning is False


def test_opencode_serves_claude_over_anthropic_messages() -> None:
    assert models.opencode("claude-sonnet-4-5").api is ApiProtocol.ANTHROPIC_MESSAGES
    assert models.opencode("qwen3-coder").api is ApiProtocol.OPENAI_COMPLETIONS


def test_presets_are_exact_and_fresh() -> None:
    preset = models.preset("anthropic", "claude-sonnet-5")
    assert (preset.context_window, preset.max_tokens, preset.name) == (
        1_000_000,
        128_000,
        "Claude Sonnet 5",
    )
    preset.max_tokens = 1
    assert models.preset("anthropic", "claude-sonnet-5").max_tokens == 128_000
    assert len(models.presets()) >= 8
    with pytest.raises(KeyError, match="claude-sonnet-5"):
        models.preset("anthropic", "claude-sonnet")
    with pytest.raises(models.UnknownPresetError):
        models.preset("nobody", "x")


def test_unknown_vendor_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="known providers"):
        models.vendor("nobody", "x")
