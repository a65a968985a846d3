"""The OpenAI Responses API (``POST {base_url}/responses``, streamed).

The request body and the event stream are shared with Azure OpenAI
(``_responses_request`` / ``_responses_stream``); this module holds the URL and auth.
"""

from __future__ import annotations

from yoagent.core import ApiProtocol, AssistantMessage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import endpoint_from_base, merge_headers

from ._http import HttpProvider
from ._keys import resolve_key
from ._messages import WireCache, WireMessage
from ._responses_request import build_request_body
from ._responses_stream import ResponsesReader

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAiResponsesProvider(HttpProvider):
    """Streams replies from the OpenAI Responses API: reasoning summaries, parallel tool
    calls, ``prompt_cache_key``, and (opt-in) encrypted reasoning replayed to OpenAI."""

    protocol = ApiProtocol.OPENAI_RESPONSES
    _wire_cache: WireCache[list[WireMessage]] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        key, source = resolve_key(model)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        headers = merge_headers(headers, model.headers)
        url = endpoint_from_base(
            model.base_url or DEFAULT_BASE_URL, lambda base: f"{base}/responses"
        )
        reader = ResponsesReader(config, sink, source, self.protocol)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = build_request_body(config, self.protocol, cache)
        return await self._read_sse(url, headers, body, source, reader)
