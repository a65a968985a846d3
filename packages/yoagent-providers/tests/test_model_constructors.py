"""Every per-vendor constructor of ``models`` is its vendor row with the given id, name and
reasoning (defaults included), local servers take a ``base_url``, and Azure's endpoint is
found from the arguments, then each environment variable in turn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from yoagent.core import ApiProtocol, ModelConfig, OpenAiCompat
from yoagent.providers import models

WITH_REASONING: dict[str, Callable[..., ModelConfig]] = {
    "groq": models.groq,
    "together": models.together,
    "fireworks": models.fireworks,
    "openrouter": models.openrouter,
    "cerebras": models.cerebras,
    "qwen": models.qwen,
    "moonshot": models.moonshot,
}
NAME_ONLY: dict[str, Callable[..., ModelConfig]] = {
    "xai": models.xai,
    "deepseek": models.deepseek,
    "mistral": models.mistral,
    "zai": models.zai,
    "minimax": models.minimax,
    "perplexity": models.perplexity,
    "huggingface": models.huggingface,
    "nvidia": models.nvidia,
    "opencode": models.opencode,
}
LOCAL: dict[str, Callable[..., ModelConfig]] = {
    "ollama": models.ollama,
    "lmstudio": models.lmstudio,
    "vllm": models.vllm,
}


@pytest.mark.parametrize("provider", sorted(WITH_REASONING))
def test_a_constructor_with_reasoning_is_its_row_with_id_name_and_reasoning(provider: str) -> None:
    make = WITH_REASONING[provider]
    made = make("some/model-1", name="Mine", reasoning=True)
    assert (made.provider, made.id, made.name, made.reasoning) == (
        provider,
        "some/model-1",
        "Mine",
        True,
    )
    assert made == models.vendor(provider, "some/model-1", name="Mine", reasoning=True)
    assert make("some/model-1") == models.vendor(provider, "some/model-1", reasoning=False)


@pytest.mark.parametrize("provider", sorted(NAME_ONLY))
def test_a_constructor_is_its_row_with_id_and_name(provider: str) -> None:
    make = NAME_ONLY[provider]
    made = make("some/model-1", name="Mine")
    assert (made.provider, made.id, made.name) == (provider, "some/model-1", "Mine")
    assert made == models.vendor(provider, "some/model-1", name="Mine")
    assert make("some/model-1") == models.vendor(provider, "some/model-1")


@pytest.mark.parametrize("provider", sorted(LOCAL))
def test_a_local_server_is_its_row_unless_given_a_base_url(provider: str) -> None:
    make = LOCAL[provider]
    row = models.vendor(provider, "llama3", name="Mine")
    assert make("llama3", name="Mine") == row
    assert make("llama3") == models.vendor(provider, "llama3")
    assert make("llama3", name="Mine", base_url="http://box:1234/v1") == replace(
        row, base_url="http://box:1234/v1"
    )


@pytest.fixture
def no_azure_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("AZURE_OPENAI_RESOURCE", "AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_azures_endpoint_from_the_arguments_then_each_variable(
    no_azure_env: pytest.MonkeyPatch,
) -> None:
    env = no_azure_env
    assert models.azure_base_url() == ""
    assert (
        models.azure_base_url(base_url="https://gw.example.test/aX/")
        == "https://gw.example.test/aX"
    )
    env.setenv("AZURE_OPENAI_ENDPOINT", "https://ep.openai.azure.com/")
    assert models.azure_base_url() == "https://ep.openai.azure.com/openai/v1"
    env.setenv("AZURE_OPENAI_BASE_URL", " https://base.example.test/bX/ ")
    assert models.azure_base_url() == "https://base.example.test/bX"
    env.setenv("AZURE_OPENAI_RESOURCE", " res ")
    assert models.azure_base_url() == "https://res.openai.azure.com/openai/v1"
    assert models.azure_base_url(resource="mine") == "https://mine.openai.azure.com/openai/v1"


def test_an_azure_deployment_is_the_azure_row_with_its_endpoint_and_replay_choice(
    no_azure_env: pytest.MonkeyPatch,
) -> None:
    made = models.azure("gpt-5", base_url="https://gw.example.test/v1/", name="Mine")
    row = models.vendor("azure", "gpt-5", name="Mine", reasoning=True)
    assert made == replace(row, base_url="https://gw.example.test/v1", compat=OpenAiCompat())
    plain = models.azure("gpt-4o", resource="res", encrypted_reasoning=True)
    assert (plain.name, plain.reasoning, plain.compat) == (
        "gpt-4o",
        False,
        OpenAiCompat(encrypted_reasoning=True),
    )


@pytest.mark.parametrize(
    ("make", "id"),
    [
        (models.anthropic, "claude-sonnet-4-5"),
        (models.openai, "gpt-4o"),
        (models.openai, "gpt-5"),
        (models.openai_responses, "gpt-4o"),
        (models.gemini, "gemini-2.5-pro"),
        (models.vertex, "gemini-2.5-pro"),
        (models.bedrock, "amazon.nova-pro-v1:0"),
        (models.opencode, "claude-sonnet-4-5"),
    ],
)
def test_every_constructor_takes_a_name_and_defaults_it_to_the_id(
    make: Callable[..., ModelConfig], id: str
) -> None:
    assert make(id, name="Mine").name == "Mine"
    assert make(id).name == id


def test_the_inferred_fields_of_the_richer_constructors() -> None:
    assert models.anthropic("claude-sonnet-4-5").reasoning is True
    assert models.anthropic("not-a-claude").reasoning is False
    assert models.openai("gpt-4o") == models.vendor("openai", "gpt-4o", reasoning=False)
    assert models.openai("gpt-4o").reasoning is False
    replaying = models.openai_responses("gpt-5", encrypted_reasoning=True)
    assert replaying.compat == OpenAiCompat(encrypted_reasoning=True)
    assert models.vertex("gemini-2.5-pro").compat == models.gemini_compat_for("gemini-2.5-pro")
    claude = models.opencode("claude-sonnet-4-5")
    assert (claude.api, claude.base_url, claude.reasoning, claude.compat) == (
        ApiProtocol.ANTHROPIC_MESSAGES,
        models.OPENCODE_ANTHROPIC_BASE_URL,
        True,
        models.anthropic_compat_for("claude-sonnet-4-5"),
    )
    assert models.opencode("claude-sonnet-4-5", name="Mine").id == "claude-sonnet-4-5"


def test_vertex_reads_gclouds_own_project_variable_too(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GCLOUD_PROJECT", "proj")
    assert models.vertex_base_url() == (
        "https://aiplatform.googleapis.com/v1/projects/proj/locations/global"
    )


def test_model_for_gives_a_preset_and_unknown_presets_say_what_there_is() -> None:
    first = models.presets()[0]
    assert models.model_for(first.provider, first.id) == first
    with pytest.raises(models.UnknownPresetError) as caught:
        models.preset("ollama", "llama3")
    assert str(caught.value) == "no preset ollama/llama3 (no presets for it); use models.vendor()"
    with pytest.raises(models.UnknownPresetError) as caught:
        models.preset(first.provider, "nope")
    ids = sorted(c.id for c in models.presets() if c.provider == first.provider)
    assert str(caught.value) == (
        f"no preset {first.provider}/nope (presets for {first.provider}: {', '.join(ids)}); "
        "use models.vendor()"
    )
    assert str(models.UnknownPresetError()) == "unknown preset"


def test_credentials_origin_reads_the_process_environment_and_knows_unknown_vendors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert models.credentials_origin("openai") == "OPENAI_API_KEY"
    assert models.credentials_origin("no-such-vendor", {}) is None


@pytest.mark.parametrize(
    ("id", "version"),
    [
        ("claude-opus-4-20250514", (4, 0)),
        ("claude-3-opus-20240229", (3, 0)),
        ("claude-3-5-sonnet-20241022", (3, 5)),
        ("claude-sonnet-4-5", (4, 5)),
    ],
)
def test_a_claude_ids_version_without_a_minor_is_point_zero(
    id: str, version: tuple[int, int]
) -> None:
    assert models.claude_version(id) == version


def test_a_gemini_ids_quirks_are_read_from_its_last_path_segment() -> None:
    for id in ("publishers/google/models/gemini-3-pro-preview", "models/gemini-3-pro-preview"):
        assert models.gemini_compat_for(id) == models.gemini_compat_for("gemini-3-pro-preview")
    assert models.gemini_compat_for("gemini-3-pro-preview") != models.gemini_compat_for("zzz")


def test_vendor_takes_its_rows_reasoning_and_names_the_known_providers() -> None:
    assert models.vendor("groq", "m").reasoning is False
    with pytest.raises(KeyError) as caught:
        models.vendor("nope", "x")
    known = ", ".join(sorted(models.VENDORS))
    assert caught.value.args[0] == f"unknown provider 'nope'; known providers: {known}"


def test_bedrocks_credentials_origin_reads_the_process_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in (
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "YOAGENT_API_KEY",
        "API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert models.credentials_origin("bedrock") is None
