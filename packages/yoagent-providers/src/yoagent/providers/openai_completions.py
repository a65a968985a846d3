"""The OpenAI Chat Completions API and its many compatible servers (streamed).

The request body and the chunk stream are ``_completions_request`` / ``_completions_stream``;
this module holds the URL and auth.
"""

from __future__ import annotations

from yoagent.core import AssistantMessage
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import endpoint_from_base, merge_headers

from ._completions_request import ConvertedMessage, encode_request
from ._completions_stream import CompletionsReader
from ._http import HttpProvider
from ._keys import resolve_key
from ._messages import WireCache

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAiCompletionsProvider(HttpProvider):
    """Streams replies from OpenAI Chat Completions or any compatible server.

    Vendor quirks come from ``ModelConfig.compat`` (:class:`~yoagent.core.OpenAiCompat`).
    One ``httpx.AsyncClient`` per instance is reused across turns, and each history
    message is converted to its wire form once (:class:`WireCache`).
    """

    _wire_cache: WireCache[ConvertedMessage] | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        model = config.model
        key, source = resolve_key(model)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        headers = merge_headers(headers, model.headers)
        url = endpoint_from_base(
            model.base_url or DEFAULT_BASE_URL, lambda base: f"{base}/chat/completions"
        )
        reader = CompletionsReader(config, sink, source)
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = encode_request(config, cache)
        return await self._read_sse(url, headers, body, source, reader)
