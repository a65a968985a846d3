"""Where an empty ``ModelConfig.api_key`` is read from: the config's own variable, then fallbacks.

Which variable a vendor uses is the vendor table's business (``yoagent-providers``); a
config carries the name in ``ModelConfig.key_variable``.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import replace
from urllib.parse import urlsplit

from yoagent.core._types.config import ApiProtocol, ModelConfig
from yoagent.core._types.errors import MissingApiKeyError

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

    Only a config that names its variable (``key_variable``, set by every preset) is
    checked: without one, core cannot know where the provider looks (the vendor table is
    the provider package's), and a missing key is reported by the provider's 401 instead.
    No key is needed by the :data:`SELF_AUTHENTICATING` protocols (Bedrock, Vertex: their
    providers read credentials per request), when ``headers`` carry the credentials
    themselves, or by a local server (see :func:`is_local_endpoint`), so an
    OpenAI-compatible server on this machine stays keyless.
    """
    if config.api_key or not config.key_variable or config.api in SELF_AUTHENTICATING:
        return
    if any(name.lower() in _AUTH_HEADERS for name in config.headers):
        return
    if is_local_endpoint(config.base_url):
        return
    raise MissingApiKeyError(
        f"no API key for {config.provider or config.api.value} ({config.id}): set "
        f"{config.key_variable}, or pass api_key= to the ModelConfig",
        variable=config.key_variable,
    )
