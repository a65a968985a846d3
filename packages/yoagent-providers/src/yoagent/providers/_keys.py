"""Which API key a request sends, and where it came from (never logged or shown).

The key is ``ModelConfig.api_key``, else the first set variable of :func:`key_variables`;
its origin (a variable's name, or ``ModelConfig.api_key``) is what error messages name.
Bedrock and Vertex AI read their own credentials (``_aws_credentials``, ``_vertex_auth``,
which checks the token it finds with :func:`check_key`).
"""

from __future__ import annotations

import os

from yoagent.core import ErrorKind, ModelConfig, ProviderError
from yoagent.core.provider import FALLBACK_KEY_VARIABLES, SELF_AUTHENTICATING
from yoagent.core.support import header_secrets

from ._headers import UNSENDABLE, sendable
from ._http_errors import KeySource
from ._vendors import VENDORS


def key_variables(config: ModelConfig) -> tuple[str, ...]:
    """The environment variables a key for ``config`` is read from, in order.

    ``config.key_variable``, else the vendor row's variable for ``config.provider``, then
    the fallbacks ``YOAGENT_API_KEY`` and ``API_KEY`` (never for Bedrock or Vertex AI,
    which read their own credentials).
    """
    own = config.key_variable
    if not own:
        row = VENDORS.get(config.provider)
        own = row.key_variable if row is not None and row.key_variable else ""
    mine = (own,) if own else ()
    return mine if config.api in SELF_AUTHENTICATING else mine + FALLBACK_KEY_VARIABLES


def check_key(key: str, origin: str) -> None:
    """Refuse a key that cannot be sent as a header, naming where it came from."""
    if not sendable(key):
        raise ProviderError(
            ErrorKind.AUTH,
            f"the key from {origin} cannot be sent: it holds {UNSENDABLE}; check its value",
        )


def resolve_key(config: ModelConfig) -> tuple[str, KeySource]:
    """The key to send for ``config`` and where it came from (never logged or shown)."""
    variables = key_variables(config)
    hint = variables[0]
    extra = tuple(header_secrets(config.headers))
    if config.api_key:
        key = config.api_key.strip()
        origin = next(
            (name for name in variables if os.environ.get(name, "").strip() == key),
            "ModelConfig.api_key",
        )
    else:
        found = next(
            ((name, value) for name in variables if (value := os.environ.get(name, "").strip())),
            None,
        )
        if found is None:
            # Local servers (Ollama, LM Studio, vLLM) need none; a remote one answers 401,
            # which names `hint`.
            return "", KeySource(origin="", hint=hint, secrets=extra)
        origin, key = found
    check_key(key, origin)
    return key, KeySource(origin=origin, hint=hint, secrets=(key, *extra))
