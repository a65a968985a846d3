"""Azure OpenAI's v1 endpoint, from the forms an Azure URL comes in.

The v1 API is ``https://{resource}.openai.azure.com/openai/v1/responses`` with the
deployment as the body's ``model`` and no dated ``api-version``. A legacy URL,
``…/openai/deployments/{deployment}[/responses|/chat/completions][?api-version=…]``, names
the deployment in its path instead: it is sent to the v1 endpoint of the same host (and
path prefix), with that deployment as the model, and its ``api-version`` dropped (the v1 API
refuses dated versions; other query parameters are kept).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from yoagent.core.support import endpoint_from_base

_LEGACY_PATH = re.compile(r"^(?P<prefix>.*?)/openai/deployments/(?P<deployment>[^/]+)(?:/.*)?$")
_V1_PATH = "/openai/v1"


@dataclass(frozen=True, slots=True)
class LegacyDeployment:
    """A legacy deployment URL read: its v1 ``base_url`` (no query), the ``query`` kept, and
    the ``deployment`` (percent-decoded) that becomes the model."""

    base_url: str
    query: str
    deployment: str

    def url(self, path: str) -> str:
        """The v1 URL of ``path`` (``/responses``), with the kept query."""
        return self.base_url + path + (f"?{self.query}" if self.query else "")


def legacy_deployment(url: str) -> LegacyDeployment | None:
    """The v1 form of a legacy ``…/openai/deployments/{deployment}`` URL; ``None`` for any
    other URL (sent as it is)."""
    parts = urlsplit(url.strip())
    match = _LEGACY_PATH.match(parts.path)
    if match is None:
        return None
    base = urlunsplit((parts.scheme, parts.netloc, match["prefix"] + _V1_PATH, "", ""))
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "api-version"]
    return LegacyDeployment(base, urlencode(kept), unquote(match["deployment"]))


def v1_base_url(endpoint: str) -> str:
    """The v1 base URL for an endpoint variable's value: a resource's endpoint
    (``https://{resource}.openai.azure.com/``) gets ``/openai/v1`` (before any query it
    has); a v1 URL is kept; a legacy deployment URL becomes its host's v1 URL."""
    legacy = legacy_deployment(endpoint)
    if legacy is not None:
        return legacy.base_url
    return endpoint_from_base(
        endpoint, lambda base: base if base.endswith(_V1_PATH) else base + _V1_PATH
    )
