"""Which environment variable holds each provider's API key."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import replace
from types import MappingProxyType
from urllib.parse import urlsplit

from yoagent.core._types.config import ApiProtocol, ModelConfig
from yoagent.core._types.errors import MissingApiKeyError

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


_AUTH_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def is_local_endpoint(base_url: str) -> bool:
    """True when ``base_url`` points at this machine or a private network (a local model
    server, which needs no key): loopback, private and link-local addresses, ``localhost``
    and ``*.localhost``/``.local``/``.internal`` names, and single-label host names."""
    if not base_url:
        return False
    host = (urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or "").lower()
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith(_LOCAL_SUFFIXES) or "." not in host
    return address.is_loopback or address.is_private or address.is_link_local


def require_api_key(config: ModelConfig) -> None:
    """Raise :class:`MissingApiKeyError` when ``config`` needs a key and has none.

    No key is needed for Bedrock (its provider reads AWS credentials per request), when
    ``headers`` carry the credentials themselves, or for a local server (see
    :func:`is_local_endpoint`); an OpenAI-compatible server on this machine stays keyless.
    """
    if config.api_key or config.api is ApiProtocol.BEDROCK_CONVERSE_STREAM:
        return
    if any(name.lower() in _AUTH_HEADERS for name in config.headers):
        return
    if is_local_endpoint(config.base_url):
        return
    variables = key_variables_for(config.provider)
    raise MissingApiKeyError(
        f"no API key for {config.provider or config.api.value} ({config.id}): set "
        f"{variables[0]}, or pass api_key= to the ModelConfig",
        variable=variables[0],
    )
