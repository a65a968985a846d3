"""The Anthropic Messages API (``POST {base_url}/v1/messages``, streamed).

The request body and the event stream are ``_anthropic_request`` / ``_anthropic_stream``;
this module holds the URL and auth.
"""

from __future__ import annotations

from yoagent.core import AssistantMessage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import endpoint_from_base, merge_headers

from ._anthropic_request import build_request_body, compat_of
from ._anthropic_stream import AnthropicReader
from ._http import HttpProvider
from ._keys import resolve_key
from ._messages import WireCache, WireMessage

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicProvider(HttpProvider):
    """Streams replies from the Anthropic Messages API (or a compatible server).

    One ``httpx.AsyncClient`` per instance is reused across turns; pass ``client`` to share
    one, ``timeout`` to change when a stalled stream gives up. Each history message is
    converted to its wire form once (:class:`~yoagent.providers._messages.WireCache`).
    """

    _wire_cache: WireCache[WireMessage] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        key, source = resolve_key(model)
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if key:
            if compat_of(model).bearer_auth:
                headers["authorization"] = f"Bearer {key}"
            else:
                headers["x-api-key"] = key
        headers = merge_headers(headers, model.headers)
        url = endpoint_from_base(
            model.base_url or DEFAULT_BASE_URL, lambda base: f"{base}/v1/messages"
        )
        reader = AnthropicReader(config, sink, source)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = build_request_body(config, cache)
        return await self._read_sse(url, headers, body, source, reader)
