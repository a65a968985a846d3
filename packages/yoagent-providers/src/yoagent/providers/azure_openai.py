"""Azure OpenAI's v1 Responses API (``POST {base_url}/responses``, streamed).

``base_url`` is ``https://{resource}.openai.azure.com/openai/v1`` and the model id is the
deployment name. A legacy ``…/openai/deployments/{deployment}`` URL is sent to the v1
endpoint of its host, with that deployment as the model (said once, at WARNING). The key
goes in ``api-key``; an ``authorization`` header in ``ModelConfig.headers`` (a Microsoft
Entra ID token) is sent instead. Request and stream are the Responses API's (shared with
OpenAI); Azure's encrypted reasoning is replayed only to Azure.
"""

from __future__ import annotations

from dataclasses import replace

from yoagent.core import ApiProtocol, AssistantMessage, ErrorKind, ProviderError
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import display_url, endpoint_from_base, merge_headers, warn_once

from ._azure import legacy_deployment
from ._http import HttpProvider
from ._keys import resolve_key
from ._logging import logger
from ._messages import WireCache, WireMessage
from ._responses_request import build_request_body
from ._responses_stream import ResponsesReader


class AzureOpenAiResponsesProvider(HttpProvider):
    """Streams replies from an Azure OpenAI deployment over the v1 Responses API."""

    protocol = ApiProtocol.AZURE_OPENAI_RESPONSES
    _wire_cache: WireCache[list[WireMessage]] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        if not model.base_url:
            raise ProviderError(
                ErrorKind.OTHER,
                "Azure OpenAI needs its endpoint as base_url "
                "(https://{resource}.openai.azure.com/openai/v1): pass resource= or "
                "base_url= to models.azure(), or set AZURE_OPENAI_RESOURCE or "
                "AZURE_OPENAI_ENDPOINT",
            )
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        own_auth = any(name.lower() == "authorization" for name in model.headers)
        key, source = resolve_key(model)
        if key and not own_auth:
            headers["api-key"] = key
        headers = merge_headers(headers, model.headers)
        url = endpoint_from_base(model.base_url, lambda base: f"{base}/responses")
        legacy = legacy_deployment(model.base_url)
        if legacy is not None:
            url = legacy.url("/responses")
            warn_once(
                logger,
                f"azure-legacy:{display_url(model.base_url)}",
                "Azure OpenAI: %s is a legacy deployment URL; sending to the v1 endpoint %s "
                "with model %r instead (set base_url to the v1 endpoint to silence this)",
                display_url(model.base_url),
                legacy.base_url,
                legacy.deployment,
            )
            config = replace(config, model=replace(model, id=legacy.deployment))
        reader = ResponsesReader(config, sink, source, self.protocol)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = build_request_body(config, self.protocol, cache)
        return await self._read_sse(url, headers, body, source, reader)
