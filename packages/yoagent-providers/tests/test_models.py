"""Vendor presets, named presets and the key-variable table."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from yoagent.core import AnthropicCompat, ApiProtocol, GoogleCompat, OpenAiCompat
from yoagent.providers import models


def test_at_least_fifteen_openai_compatible_vendors_with_real_urls() -> None:
    compatible = [v for v in models.VENDORS.values() if v.api is ApiProtocol.OPENAI_COMPLETIONS]
    assert len(compatible) >= 15
    for vendor in compatible:
        assert vendor.base_url.startswith(("https://", "http://localhost"))
        assert isinstance(vendor.compat, OpenAiCompat)


@pytest.mark.parametrize("name", sorted(models.VENDORS))
def test_every_vendor_config_carries_its_row(name: str) -> None:
    row = models.VENDORS[name]
    config = models.model_for(name, "some-model")
    assert config.provider == name
    assert config.id == "some-model"
    assert config.key_variable == (row.key_variable or "")
    if row.base_url:
        assert config.base_url == row.base_url


def test_local_servers_need_no_key_and_each_row_names_its_variable() -> None:
    # issue 27: the table listed one variable per vendor row and nothing else; it now lists
    # every variable each reader reads (a vendor's own, the fallbacks, the decision presets').
    table = models.api_key_variables()
    assert table["ollama"] == () and table["lmstudio"] == () and table["vllm"] == ()
    assert table["qwen"] == ("DASHSCOPE_API_KEY",)
    assert table["google"] == ("GEMINI_API_KEY",)
    assert table["azure"] == ("AZURE_OPENAI_API_KEY",)
    assert set(models.VENDORS) <= set(table)


def test_api_key_variables_lists_every_variable_a_key_is_read_from() -> None:
    table = models.api_key_variables()
    assert table["bedrock"] == (
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    )
    assert table["fallback"] == ("YOAGENT_API_KEY", "API_KEY")
    assert table["decision:typesafe"] == ("TYPESAFE_API_KEY",)
    assert table["decision:opencode"] == ("OPENCODE_API_KEY",)
    assert table["decision:cloudflare"] == ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_AUTH_TOKEN")
    assert table["decision:openai"] == ("OPENAI_API_KEY",)
    assert set(table) == {
        *models.VENDORS,
        "fallback",
        *(k for k in table if k.startswith("decision:")),
    }
    for name, row in models.VENDORS.items():
        own = tuple(v for v in models.key_variables_for(name) if v not in table["fallback"])
        assert table[name] == own, name
        assert table[name][:1] == ((row.key_variable,) if row.key_variable else ())


def test_generic_is_the_vendor_constructor_never_a_preset() -> None:
    generic = models.generic("anthropic", "claude-sonnet-5")
    preset = models.preset("anthropic", "claude-sonnet-5")
    assert generic.name == "claude-sonnet-5" and preset.name == "Claude Sonnet 5"
    assert generic.context_window != preset.context_window
    assert generic.compat == models.anthropic("claude-sonnet-5").compat
    assert models.generic("openai", "gpt-5.5").api is ApiProtocol.OPENAI_RESPONSES
    assert models.generic("openai", "gpt-4o").api is ApiProtocol.OPENAI_COMPLETIONS
    assert models.generic("groq", "llama-3.3-70b") == models.vendor("groq", "llama-3.3-70b")
    with pytest.raises(KeyError, match="known providers"):
        models.generic("nobody", "x")


@pytest.mark.parametrize(
    ("provider", "id", "name", "context", "output"),
    [
        ("anthropic", "claude-fable-5", "Claude Fable 5", 1_000_000, 128_000),
        ("anthropic", "claude-fable-5-1", "Claude Fable 5.1", 1_000_000, 128_000),
        ("anthropic", "claude-opus-4-8", "Claude Opus 4.8", 1_000_000, 128_000),
        ("anthropic", "claude-opus-5", "Claude Opus 5", 1_000_000, 128_000),
        ("openai", "gpt-6-astra", "GPT-6 Astra", 1_050_000, 128_000),
        ("openai", "gpt-6-luna", "GPT-6 Luna", 1_050_000, 128_000),
        ("openai", "gpt-6-sol", "GPT-6 Sol", 1_050_000, 128_000),
    ],
)
def test_the_models_whose_prices_ship_have_presets(
    provider: str, id: str, name: str, context: int, output: int
) -> None:
    config = models.preset(provider, id)
    assert (config.provider, config.id, config.name) == (provider, id, name)
    assert (config.context_window, config.max_tokens) == (context, output)
    assert config == replace(
        models.generic(provider, id), name=name, context_window=context, max_tokens=output
    )


def test_every_preset_row_builds_its_own_provider_and_id() -> None:
    built = models.presets()
    assert len({(c.provider, c.id) for c in built}) == len(built)
    for config in built:  # a row keyed apart from what it builds is not found by its key
        assert models.preset(config.provider, config.id) == config


def test_the_rows_give_the_detection_order_and_the_id_hints() -> None:
    order = models.detection_order()
    assert order[:3] == ("anthropic", "openai", "google")
    assert "ollama" not in order
    assert models.vendor_for_id("claude-opus-5-5") == "anthropic"
    assert models.vendor_for_id("gemini-3-pro-preview") == "google"
    assert models.vendor_for_id("o3-mini") == "openai"
    assert models.vendor_for_id("my-model") is None


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


@pytest.mark.parametrize(
    ("id", "api", "reasoning"),
    [
        ("gpt-5.5", ApiProtocol.OPENAI_RESPONSES, True),
        ("o3-mini", ApiProtocol.OPENAI_RESPONSES, True),
        ("gpt-6-luna", ApiProtocol.OPENAI_RESPONSES, True),
        ("gpt-4o", ApiProtocol.OPENAI_COMPLETIONS, False),
        ("gpt-4.1", ApiProtocol.OPENAI_COMPLETIONS, False),
        ("chatgpt-4o-latest", ApiProtocol.OPENAI_COMPLETIONS, False),
        ("gpt-5-chat-latest", ApiProtocol.OPENAI_COMPLETIONS, False),
    ],
)
def test_openai_routes_reasoning_ids_to_the_responses_api(
    id: str, api: ApiProtocol, reasoning: bool
) -> None:
    config = models.openai(id)
    assert (config.api, config.reasoning, config.provider) == (api, reasoning, "openai")
    assert config.key_variable == "OPENAI_API_KEY"
    assert isinstance(config.compat, OpenAiCompat)
    assert config.compat.encrypted_reasoning is False  # opt-in only


def test_gemini_ids_choose_thinking_level_or_budget() -> None:
    assert models.gemini("gemini-3-pro-preview").compat == GoogleCompat(thinking_level_field=True)
    assert models.gemini("gemini-2.5-flash").compat == GoogleCompat(thinking_level_field=False)
    assert models.gemini("gemini-2.5-pro").api is ApiProtocol.GOOGLE_GENERATIVE_AI
    assert models.gemini("gemini-2.5-pro").base_url == "https://generativelanguage.googleapis.com"


def test_vertex_builds_its_url_from_project_and_region(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    config = models.vertex("gemini-2.5-pro", "proj-1", "europe-west4")
    assert config.api is ApiProtocol.GOOGLE_VERTEX
    assert config.base_url == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/locations/europe-west4"
    )
    assert models.vertex("gemini-3-pro-preview", "p").base_url == (
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global"
    )
    assert models.vertex("gemini-2.5-pro").base_url == ""  # no project anywhere
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "from-env")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    assert models.vertex("gemini-2.5-pro").base_url.endswith(
        "/projects/from-env/locations/us-central1"
    )


def test_azure_builds_its_v1_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_RESOURCE", "AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    config = models.azure("my-gpt5", resource="contoso")
    assert config.api is ApiProtocol.AZURE_OPENAI_RESPONSES
    assert config.base_url == "https://contoso.openai.azure.com/openai/v1"
    assert config.key_variable == "AZURE_OPENAI_API_KEY"
    assert models.azure("d").base_url == ""
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://fabrikam.openai.azure.com/")
    assert models.azure("d").base_url == "https://fabrikam.openai.azure.com/openai/v1"


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


def test_key_variables_end_in_the_fallbacks_except_where_the_provider_reads_its_own() -> None:
    assert models.key_variables_for("groq") == ("GROQ_API_KEY", "YOAGENT_API_KEY", "API_KEY")
    assert models.key_variables_for("ollama") == ()
    assert models.key_variables_for("vertex") == ("GOOGLE_CLOUD_ACCESS_TOKEN",)
    assert models.key_variables_for("bedrock")[0] == "AWS_BEARER_TOKEN_BEDROCK"
    assert "API_KEY" not in models.key_variables_for("bedrock")
    assert models.key_variables_for("no-such-vendor") == ("YOAGENT_API_KEY", "API_KEY")


def test_find_api_key_takes_the_first_set_variable_trimmed() -> None:
    env = {"GROQ_API_KEY": "  ", "API_KEY": " generic "}
    assert models.find_api_key("groq", env) == ("API_KEY", "generic")
    env["GROQ_API_KEY"] = "gsk-1"
    assert models.find_api_key("groq", env) == ("GROQ_API_KEY", "gsk-1")
    assert models.find_api_key("vertex", {"API_KEY": "generic"}) is None


def test_credentials_origin_finds_vertex_application_default_credentials(
    tmp_path: Path,
) -> None:
    adc = tmp_path / "adc.json"
    env = {"API_KEY": "generic", "GOOGLE_APPLICATION_CREDENTIALS": str(adc)}
    assert models.credentials_origin("vertex", env) == str(adc)
    env["GOOGLE_CLOUD_ACCESS_TOKEN"] = "ya29.token"
    assert models.credentials_origin("vertex", env) == "GOOGLE_CLOUD_ACCESS_TOKEN"
    nothing = {"API_KEY": "generic", "CLOUDSDK_CONFIG": str(tmp_path / "gcloud")}
    assert models.credentials_origin("vertex", nothing) is None
    assert models.credentials_origin("groq", {"API_KEY": "generic"}) == "API_KEY"


def test_bedrock_is_a_row_with_its_region_chosen_per_request() -> None:
    row = models.VENDORS["bedrock"]
    assert row.api is ApiProtocol.BEDROCK_CONVERSE_STREAM
    assert row.base_url == "" and row.detect is None
    config = models.model_for("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert config.base_url == "" and config.reasoning
    assert config.key_variable == "AWS_BEARER_TOKEN_BEDROCK"
    assert not models.bedrock("amazon.nova-pro-v1:0").reasoning
    regional = models.bedrock("amazon.nova-pro-v1:0", region="eu-central-1")
    assert regional.base_url == "https://bedrock-runtime.eu-central-1.amazonaws.com"
