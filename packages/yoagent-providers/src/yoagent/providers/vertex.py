"""Gemini on Vertex AI (``POST {base_url}/publishers/google/models/{id}:streamGenerateContent``).

``base_url`` is ``https://{region}-aiplatform.googleapis.com/v1/projects/{project}/
locations/{region}`` (``https://aiplatform.googleapis.com/…/locations/global`` for the
global region); ``models.vertex(id, project, region)`` builds it. Credentials are an OAuth
access token read per request (see ``_vertex_auth``: the environment, then the ADC file).
Body and stream are the Gemini API's (``_gemini_request`` / ``_gemini_stream``); thought
signatures from Vertex go back only to Vertex.
"""

from __future__ import annotations

from urllib.parse import quote

from yoagent.core import ApiProtocol, AssistantMessage, ErrorKind, ProviderError
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import endpoint_from_base, merge_headers

from ._gemini_request import build_request_body
from ._gemini_stream import GeminiReader
from ._http import HttpProvider
from ._messages import WireCache, WireMessage
from ._vertex_auth import vertex_credentials


class VertexProvider(HttpProvider):
    """Streams replies from Gemini models on Vertex AI, authenticated with OAuth tokens.
    Each history message is converted to its wire form once (``_messages.WireCache``)."""

    protocol = ApiProtocol.GOOGLE_VERTEX
    _wire_cache: WireCache[WireMessage] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        if not model.base_url:
            raise ProviderError(
                ErrorKind.OTHER,
                "Vertex AI needs a project and region: pass them to models.vertex(id, "
                "project, region), or set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION)",
            )
        auth, source = await vertex_credentials(model, self._transport.client_for)
        headers = {"content-type": "application/json", "accept": "text/event-stream", **auth}
        headers = merge_headers(headers, model.headers)
        model_id = quote(model.id.rsplit("/", 1)[-1], safe="")
        url = endpoint_from_base(
            model.base_url,
            lambda base: f"{base}/publishers/google/models/{model_id}:streamGenerateContent",
            query="alt=sse",
        )
        reader = GeminiReader(config, sink, source, self.protocol, self._transport.limits)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = build_request_body(config, self.protocol, cache)
        return await self._read_sse(url, headers, body, source, reader)
