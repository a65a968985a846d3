"""Which model to talk to: provider and model from the flags and the environment."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, replace

from yoagent.core import ApiProtocol, ModelConfig, OpenAiCompat, ProviderError
from yoagent.providers import models

from ._errors import CliError
from .served import served_models

OPENAI_COMPATIBLE = "openai-compatible"
"""The provider name of a model reached through ``--base-url`` alone."""

DEFAULT_MODELS: Mapping[str, str] = {
    name: row.default_model for name, row in models.VENDORS.items() if row.default_model
}
"""The model used when ``--model`` is not given: each vendor row's default (a
``yoagent-providers`` preset where the provider has a fitting one). Local servers without
one (LM Studio, vLLM, any ``--base-url``) are asked which models they serve."""

DETECTION_ORDER: tuple[str, ...] = models.detection_order()
"""Without ``--provider``, the first of these whose key is set is used (the rows' ranks)."""

_GENERIC_COMPAT = OpenAiCompat(
    max_tokens_field="max_tokens",
    reasoning_field="reasoning_content",
    supports_reasoning_effort=False,
    supports_structured_output=False,
)


class ConfigError(CliError):
    """The flags or the environment do not say how to reach a model (exit code 2)."""


@dataclass(slots=True, frozen=True)
class ModelChoice:
    """The model to use and, for display, where its key comes from: a variable, or the
    credentials file a Bedrock or Vertex AI provider reads (empty: none needed)."""

    config: ModelConfig
    key_variable: str
    warnings: tuple[str, ...] = ()
    """What the user should know about the choice (a model id guessed for a server that
    would not list its models)."""


def _own_variable(provider: str) -> str | None:
    """The vendor row's own key variable (``None``: a local server needing no key)."""
    row = models.VENDORS.get(provider)
    return row.key_variable if row is not None else ""


def _needs_key(provider: str) -> bool:
    return _own_variable(provider) is not None


def find_key(provider: str, env: Mapping[str, str]) -> str | None:
    """Where ``provider``'s key comes from (a variable; for Bedrock or Vertex AI maybe the
    credentials file they read), or ``None``.

    Raises :class:`ConfigError` for credentials the provider could not use (an AWS profile
    that needs SSO or a role).
    """
    try:
        return models.credentials_origin(provider, env)
    except ProviderError as error:
        raise ConfigError(f"yoagent: {error.message}\n") from None


def _own_key(provider: str, env: Mapping[str, str]) -> bool:
    own = _own_variable(provider)
    return bool(own and env.get(own, "").strip())


def detect_provider(env: Mapping[str, str], model: str | None = None) -> str | None:
    """The provider to use without ``--provider``: the first whose own key is set.

    When ``model`` looks like a vendor's id (``claude-…``, ``gpt-…``) and that vendor's key
    is set, that vendor wins.
    """
    available = [p for p in DETECTION_ORDER if _own_key(p, env)]
    hinted = models.vendor_for_id(model) if model else None
    if hinted in available:
        return hinted
    if available:
        return available[0]
    return None


def no_key_message() -> str:
    """What to tell someone who has set no key and given no ``--base-url``."""
    others = [v for p in DETECTION_ORDER[2:] if (v := _own_variable(p)) is not None]
    listing = textwrap.fill(
        ", ".join(others), width=76, initial_indent="  ", subsequent_indent="  "
    )
    return (
        "yoagent: no API key found.\n"
        "Set ANTHROPIC_API_KEY or OPENAI_API_KEY (or another provider's key:\n"
        f"{listing}),\n"
        "or point --base-url at a local OpenAI-compatible server (no key needed), e.g.\n"
        "  yoagent --base-url http://localhost:11434/v1 --model llama3.2\n"
    )


def _missing_key_message(provider: str) -> str:
    return (
        f"yoagent: no API key for {provider}: set {models.key_hint(provider)},\n"
        "or point --base-url at a local OpenAI-compatible server (no key needed).\n"
    )


def model_config(provider: str, model_id: str) -> ModelConfig:
    """The configuration of ``model_id`` at ``provider``: a named preset when there is one,
    else the vendor's constructor (quirks inferred from the id)."""
    return models.model_for(provider, model_id)


def openai_compatible(base_url: str, model_id: str) -> ModelConfig:
    """A model on any OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio)."""
    return ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider=OPENAI_COMPATIBLE,
        id=model_id,
        name=model_id,
        base_url=base_url.rstrip("/"),
        compat=_GENERIC_COMPAT,
    )


FALLBACK_MODEL = "default"
"""The model id used when none is given and the server lists none."""


def _ask_server(base_url: str, ask_server: bool) -> tuple[str, tuple[str, ...]]:
    """The first model the server at ``base_url`` lists, else :data:`FALLBACK_MODEL` with a
    warning saying why and what to pass instead."""
    if not ask_server:
        return FALLBACK_MODEL, ()
    served = served_models(base_url)
    if served.ids:
        return served.ids[0], ()
    return FALLBACK_MODEL, (
        f"could not list the models at {served.url} ({served.problem}); using the model "
        f"id '{FALLBACK_MODEL}': pass --model NAME to choose one",
    )


def resolve_model(
    *,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    env: Mapping[str, str],
    ask_server: bool = True,
) -> ModelChoice:
    """The model the flags and the environment ask for.

    Raises :class:`ConfigError` for an unknown provider, or when no key is set and no
    ``--base-url`` given.
    """
    if provider is not None and provider != OPENAI_COMPATIBLE and provider not in models.VENDORS:
        known = ", ".join(sorted(models.VENDORS))
        raise ConfigError(f"yoagent: unknown provider {provider!r}; known providers: {known}\n")

    if base_url:
        return _with_base_url(provider, model, base_url, env, ask_server)

    if provider is None:
        provider = detect_provider(env, model)
        if provider is None:
            raise ConfigError(no_key_message())
    elif provider == OPENAI_COMPATIBLE:
        raise ConfigError("yoagent: --provider openai-compatible needs --base-url\n")

    variable = find_key(provider, env) if _needs_key(provider) else ""
    if variable is None:
        raise ConfigError(_missing_key_message(provider))
    model_id = model or DEFAULT_MODELS.get(provider)
    warnings: tuple[str, ...] = ()
    if model_id is None:
        model_id, warnings = _ask_server(models.VENDORS[provider].base_url, ask_server)
    return ModelChoice(model_config(provider, model_id), variable, warnings)


def _with_base_url(
    provider: str | None,
    model: str | None,
    base_url: str,
    env: Mapping[str, str],
    ask_server: bool,
) -> ModelChoice:
    warnings: tuple[str, ...] = ()
    if provider is None or provider == OPENAI_COMPATIBLE:
        if not model:
            model, warnings = _ask_server(base_url, ask_server)
        variable = find_key(OPENAI_COMPATIBLE, env) or ""
        return ModelChoice(openai_compatible(base_url, model), variable, warnings)
    model_id = model or DEFAULT_MODELS.get(provider)
    if model_id is None:
        model_id, warnings = _ask_server(base_url, ask_server)
    config = replace(model_config(provider, model_id), base_url=base_url.rstrip("/"))
    variable = find_key(provider, env) or ""
    return ModelChoice(config, variable, warnings)
