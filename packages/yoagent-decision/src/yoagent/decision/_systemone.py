"""SystemOneBackend: the SystemOne HTTP API (``POST {base}/v1/systemone``).

Spoken by TypeSafe (``https://api.typesafe.ai``), OpenCode Zen, self-hosted servers such as
JevK5, and Cloudflare Workers AI's Clef (at its own URL, inside Cloudflare's envelope).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Self

from yoagent.core.support import endpoint_from_base

from ._answers import Evaluation
from ._backend import HttpBackend, host_of
from ._http import EnvKey, KeySource, NoKey, encode_json
from ._questions import Capabilities, Request
from ._systemone_wire import parse_systemone_response, request_body

TYPESAFE_BASE_URL = "https://api.typesafe.ai"
TYPESAFE_HOST = "api.typesafe.ai"
TYPESAFE_API_KEY_ENV = "TYPESAFE_API_KEY"
TYPESAFE_BASE_URL_ENV = "TYPESAFE_BASE_URL"
OPENCODE_ZEN_BASE_URL = "https://opencode.ai/zen"
OPENCODE_API_KEY_ENV = "OPENCODE_API_KEY"
WORKERS_AI_API_BASE = "https://api.cloudflare.com/client/v4"
CLOUDFLARE_HOST = "api.cloudflare.com"
CLOUDFLARE_TOKEN_ENVS = ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_AUTH_TOKEN")


@dataclass(slots=True, frozen=True)
class _Base:
    """Requests go to ``{url}/v1/systemone``."""

    url: str


@dataclass(slots=True, frozen=True)
class _Exact:
    """Requests go to exactly ``url``."""

    url: str


@dataclass(slots=True, frozen=True)
class _EnvBase:
    """The base URL is read at call time from ``variable``, else ``default``."""

    variable: str
    default: str


_Endpoint = _Base | _Exact | _EnvBase


def systemone_url(base_url: str) -> str:
    """``{base}/v1/systemone`` for a base given as the host, ending in ``/v1``, or as the full
    URL (whitespace and a trailing ``/`` trimmed); a query string is kept at the end."""
    return endpoint_from_base(
        base_url,
        lambda base: f"{base.removesuffix('/v1/systemone').removesuffix('/v1')}/v1/systemone",
    )


class SystemOneBackend(HttpBackend):
    """A client of the SystemOne API (``POST {base}/v1/systemone``), sending no key.

    ``base_url`` may be the host (``http://localhost:8000``), end in ``/v1``, or be the
    full ``/v1/systemone`` URL. Capabilities: every kind, 255 options, 10 levels, batching,
    no token limits (the server enforces its own). Keys named by a variable are read at
    every call; no key appears in a repr or an error.
    """

    __slots__ = ("_endpoint",)

    def __init__(self, base_url: str, *, key: KeySource | None = None) -> None:
        super().__init__(key if key is not None else NoKey(), Capabilities())
        self._endpoint: _Endpoint = _Base(base_url)

    @classmethod
    def typesafe(cls) -> SystemOneBackend:
        """TypeSafe's API: base from ``TYPESAFE_BASE_URL`` (default
        ``https://api.typesafe.ai``) and key from ``TYPESAFE_API_KEY``, read at call time."""
        backend = cls(TYPESAFE_BASE_URL, key=EnvKey((TYPESAFE_API_KEY_ENV,)))
        return backend._copy(
            _endpoint=_EnvBase(TYPESAFE_BASE_URL_ENV, TYPESAFE_BASE_URL),
            _capabilities=Capabilities.systemone(),
        )

    @classmethod
    def opencode_zen(cls) -> SystemOneBackend:
        """OpenCode Zen's SystemOne endpoint, key from ``OPENCODE_API_KEY`` (at call time)."""
        backend = cls(OPENCODE_ZEN_BASE_URL, key=EnvKey((OPENCODE_API_KEY_ENV,)))
        return backend.with_capabilities(Capabilities.systemone())

    @classmethod
    def workers_ai(cls, account_id: str, model_path: str) -> SystemOneBackend:
        """A Workers AI model such as ``@cf/cloudflare/clef`` on account ``account_id``:
        ``POST https://api.cloudflare.com/client/v4/accounts/{account}/ai/run/{model}``, the
        token from ``CLOUDFLARE_API_TOKEN``, then ``CLOUDFLARE_AUTH_TOKEN``, at call time."""
        url = (
            f"{WORKERS_AI_API_BASE}/accounts/{account_id.strip()}/ai/run/"
            f"{model_path.strip().lstrip('/')}"
        )
        backend = cls(WORKERS_AI_API_BASE, key=EnvKey(CLOUDFLARE_TOKEN_ENVS))
        return backend._copy(_endpoint=_Exact(url), _capabilities=Capabilities.systemone())

    def with_api_key_env(self, variable: str) -> Self:
        """Read the key from ``variable`` at call time."""
        return self._copy(_key=EnvKey((variable,)))

    def with_base_url(self, base_url: str) -> Self:
        """Send to ``{base_url}/v1/systemone`` (replaces any variable)."""
        return self._copy(_endpoint=_Base(base_url))

    def with_endpoint_url(self, url: str) -> Self:
        """Send to exactly ``url`` (a model served at its own path, or a proxy)."""
        return self._copy(_endpoint=_Exact(url))

    def endpoint_url(self) -> str:
        """The URL requests go to, resolved now (a base URL variable is read now)."""
        match self._endpoint:
            case _Exact(url=url):
                return url.strip()
            case _Base(url=url):
                return systemone_url(url)
            case _EnvBase(variable=variable, default=default):
                return systemone_url(os.environ.get(variable, "").strip() or default)

    def is_typesafe_host(self) -> bool:
        """Whether requests go to TypeSafe's own host (so its list prices apply)."""
        return host_of(self.endpoint_url()) == TYPESAFE_HOST

    def is_cloudflare_host(self) -> bool:
        """Whether requests go to Cloudflare's REST API (so Workers AI list prices apply)."""
        return host_of(self.endpoint_url()) == CLOUDFLARE_HOST

    async def evaluate(self, request: Request) -> Evaluation:
        """Send ``request`` in one batch and read the answers."""

        def read(data: Any) -> Evaluation:
            return parse_systemone_response(data, request)

        return await self._post(encode_json(request_body(request)), read)
