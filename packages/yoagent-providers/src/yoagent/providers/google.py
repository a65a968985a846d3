"""The Gemini API (``POST {base_url}/v1beta/models/{id}:streamGenerateContent?alt=sse``).

The key goes in ``x-goog-api-key``, trimmed, never in the URL; it is not sent when the
user's headers set ``x-goog-api-key`` themselves (an ``Authorization`` header does not
count). Body and stream are shared with Vertex AI (``_gemini_request`` /
``_gemini_stream``).
"""

from __future__ import annotations

from urllib.parse import quote

from yoagent.core import ApiProtocol, AssistantMessage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import endpoint_from_base, merge_headers

from ._gemini_request import build_request_body
from ._gemini_stream import GeminiReader
from ._http import HttpProvider
from ._keys import resolve_key
from ._messages import WireCache, WireMessage

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"


class GoogleProvider(HttpProvider):
    """Streams replies from Gemini models on the Gemini API: text, thought summaries with
    signatures, parallel and streamed function calls, ``responseJsonSchema`` output.
    Each history message is converted to its wire form once (``_messages.WireCache``)."""

    protocol = ApiProtocol.GOOGLE_GENERATIVE_AI
    _wire_cache: WireCache[WireMessage] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        key, source = resolve_key(model)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if key:
            headers["x-goog-api-key"] = key
        headers = merge_headers(headers, model.headers)  # a configured key header wins
        model_id = quote(model.id.removeprefix("models/"), safe="")
        url = endpoint_from_base(
            model.base_url or DEFAULT_BASE_URL,
            lambda base: f"{base}/{API_VERSION}/models/{model_id}:streamGenerateContent",
            query="alt=sse",
        )
        reader = GeminiReader(config, sink, source, self.protocol, self._transport.limits)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = build_request_body(config, self.protocol, cache)
        return await self._read_sse(url, headers, body, source, reader)
