"""Where an empty ``ModelConfig.api_key`` is read from: the config's own variable, then fallbacks.

Which variable a vendor uses is the vendor table's business (``yoagent-providers``); a
config carries the name in ``ModelConfig.key_variable``.
"""

from __future__ import annotations

import os
from dataclasses import replace

from .config import ApiProtocol, ModelConfig

FALLBACK_KEY_VARIABLES: tuple[str, ...] = ("YOAGENT_API_KEY", "API_KEY")
"""Read when a config has no variable of its own (or it is unset)."""

SELF_AUTHENTICATING: frozenset[ApiProtocol] = frozenset(
    {ApiProtocol.BEDROCK_CONVERSE_STREAM, ApiProtocol.GOOGLE_VERTEX}
)
"""Protocols whose providers read their credentials per request (AWS keys, OAuth tokens
that expire): an empty key is left empty for them, and no fallback key is ever sent."""


def key_variables(config: ModelConfig) -> tuple[str, ...]:
    """The variables :func:`resolve_api_key` reads for ``config``, in order.

    The fallbacks are never read for a :data:`SELF_AUTHENTICATING` protocol.
    """
    own = (config.key_variable,) if config.key_variable else ()
    return own if config.api in SELF_AUTHENTICATING else own + FALLBACK_KEY_VARIABLES


def resolve_api_key(config: ModelConfig) -> tuple[str, str] | None:
    """``(variable, key)`` from the first set variable for ``config``, else ``None``."""
    for variable in key_variables(config):
        value = os.environ.get(variable, "").strip()
        if value:
            return variable, value
    return None


def with_env_key(config: ModelConfig) -> ModelConfig:
    """``config`` with an empty ``api_key`` filled from the environment, when one is set.

    Bedrock and Vertex are left alone: their providers read credentials themselves, per
    request, and a stray ``API_KEY`` must never be sent there.
    """
    if config.api_key or config.api in SELF_AUTHENTICATING:
        return config
    found = resolve_api_key(config)
    return replace(config, api_key=found[1]) if found else config
