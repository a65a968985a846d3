"""Which environment variable holds each provider's API key."""

from __future__ import annotations

import os
from dataclasses import replace
from types import MappingProxyType

from yoagent.core._types.config import ApiProtocol, ModelConfig

PROVIDER_KEY_VARIABLES: MappingProxyType[str, str] = MappingProxyType(
    {
        "anthropic": "ANTHROPIC_API_KEY",
        "openai": "OPENAI_API_KEY",
        "openai_responses": "OPENAI_API_KEY",
        "azure": "AZURE_OPENAI_API_KEY",
        "google": "GEMINI_API_KEY",
        "vertex": "GOOGLE_CLOUD_API_KEY",
        "xai": "XAI_API_KEY",
        "groq": "GROQ_API_KEY",
        "deepseek": "DEEPSEEK_API_KEY",
        "mistral": "MISTRAL_API_KEY",
        "together": "TOGETHER_API_KEY",
        "fireworks": "FIREWORKS_API_KEY",
        "openrouter": "OPENROUTER_API_KEY",
        "cerebras": "CEREBRAS_API_KEY",
        "zai": "ZAI_API_KEY",
        "minimax": "MINIMAX_API_KEY",
        "qwen": "DASHSCOPE_API_KEY",
        "moonshot": "MOONSHOT_API_KEY",
        "opencode": "OPENCODE_API_KEY",
        "perplexity": "PERPLEXITY_API_KEY",
        "huggingface": "HF_TOKEN",
        "nvidia": "NVIDIA_API_KEY",
    }
)
"""Provider name → the environment variable its key conventionally lives in."""

FALLBACK_KEY_VARIABLES: tuple[str, ...] = ("YOAGENT_API_KEY", "API_KEY")
"""Read when a provider has no variable of its own (or it is unset)."""


def key_variables_for(provider: str) -> tuple[str, ...]:
    """The variables :func:`resolve_api_key` reads for ``provider``, in order."""
    own = PROVIDER_KEY_VARIABLES.get(provider)
    return ((own,) if own else ()) + FALLBACK_KEY_VARIABLES


def resolve_api_key(provider: str) -> tuple[str, str] | None:
    """``(variable, key)`` from the first set variable for ``provider``, else ``None``."""
    for variable in key_variables_for(provider):
        value = os.environ.get(variable, "").strip()
        if value:
            return variable, value
    return None


def with_env_key(config: ModelConfig) -> ModelConfig:
    """``config`` with an empty ``api_key`` filled from the environment, when one is set.

    Bedrock is left alone: its provider reads AWS credentials itself, per request, and a
    stray ``API_KEY`` must never be sent there.
    """
    if config.api_key or config.api is ApiProtocol.BEDROCK_CONVERSE_STREAM:
        return config
    found = resolve_api_key(config.provider)
    return replace(config, api_key=found[1]) if found else config
