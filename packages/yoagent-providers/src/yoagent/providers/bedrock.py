"""Amazon Bedrock ``ConverseStream`` (``POST {base_url}/model/{id}/converse-stream``).

The one provider that is not SSE: the reply is a binary ``application/vnd.amazon.eventstream``
(:mod:`._eventstream`), read by :mod:`._bedrock_stream`. Requests are signed with SigV4
(:mod:`._sigv4`) over the exact body bytes sent, or carry a Bedrock API key as ``Bearer``;
:mod:`._aws_credentials` says which, and for which region. No AWS SDK is used.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Unpack
from urllib.parse import quote

import httpx

from yoagent.core import AssistantMessage, ErrorKind, ModelConfig, ProviderError
from yoagent.core.provider import DeltaSink, StreamConfig
from yoagent.core.support import endpoint_from_base, header_secrets, merge_headers

from ._aws_credentials import (
    BearerAuth,
    HeaderAuth,
    SigV4Auth,
    resolve_auth,
    resolve_region,
    runtime_url,
)
from ._bedrock_request import PROTOCOL, build_request_body
from ._bedrock_stream import BedrockReader
from ._http import HttpOptions, HttpProvider, encode_body
from ._http_errors import KeySource, bad_url, url_problem
from ._messages import WireCache, WireMessage
from ._sigv4 import sign
from ._vendors import key_hint

SIGNING_NAME = "bedrock"
EVENTSTREAM = "application/vnd.amazon.eventstream"
SIGNED_HEADERS = frozenset(
    {"host", "content-type", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"}
)
"""Headers SigV4 signing sets; ``ModelConfig.headers`` may not hold them on that path."""
_KEY_HINT = key_hint("bedrock")
_CLOCK_PHRASES = ("signature expired", "signature not yet current", "not yet current")


def converse_stream_url(base_url: str, model_id: str) -> httpx.URL:
    """The request URL; the model id is one encoded path segment (``:`` → ``%3A``)."""
    model = quote(model_id, safe="")
    text = endpoint_from_base(base_url, lambda base: f"{base}/model/{model}/converse-stream")
    problem = url_problem(text)
    if problem is not None:  # said before signing, which would first ask for a region
        raise bad_url(problem, KeySource(origin="", hint=_KEY_HINT))
    return httpx.URL(text)


def _with_clock_hint(error: ProviderError) -> ProviderError:
    lowered = error.message.lower()
    if error.status != 403 or not any(phrase in lowered for phrase in _CLOCK_PHRASES):
        return error
    return ProviderError(
        error.kind,
        f"{error.message} (check this machine's clock: a SigV4 signature is only accepted "
        "within minutes of the server's time)",
        status=error.status,
    )


class BedrockProvider(HttpProvider):
    """Streams replies from Amazon Bedrock's ``ConverseStream`` API.

    ``http_client``, ``timeout`` and ``limits`` are the HTTP base's (see
    :class:`~yoagent.providers._http.HttpProvider`). ``env`` replaces ``os.environ`` for
    credential and region look-ups and ``clock`` the system clock (seconds since the
    epoch) for signing; both exist for tests. Each history message is converted to its
    wire form once (:class:`~yoagent.providers._messages.WireCache`).
    """

    protocol = PROTOCOL
    _wire_cache: WireCache[WireMessage] | None = None

    def __init__(
        self,
        config: ModelConfig | None = None,
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        **http: Unpack[HttpOptions],
    ) -> None:
        super().__init__(config, **http)
        self._env = env
        self._clock = clock

    def _now(self) -> datetime:
        seconds = self._clock()
        if seconds < 0:
            raise ProviderError(
                ErrorKind.AUTH, "the system clock reads before 1970: SigV4 needs the real time"
            )
        return datetime.fromtimestamp(seconds, UTC)

    def _request(
        self, model: ModelConfig, env: Mapping[str, str], body: bytes
    ) -> tuple[httpx.URL, dict[str, str], KeySource]:
        """The URL, every header and the secrets to scrub, for one request."""
        auth = resolve_auth(model, env)
        base = model.base_url or runtime_url(resolve_region("", env))
        url = converse_stream_url(base, model.id)
        headers = {"content-type": "application/json", "accept": EVENTSTREAM}
        extra = tuple(header_secrets(model.headers))  # a gateway's own credentials
        if isinstance(auth, HeaderAuth):
            source = KeySource(origin="ModelConfig.headers", hint=_KEY_HINT, secrets=extra)
        elif isinstance(auth, BearerAuth):
            headers["authorization"] = f"Bearer {auth.token}"
            source = KeySource(origin=auth.origin, hint=_KEY_HINT, secrets=(auth.token, *extra))
        else:
            headers.update(self._signed(model, env, auth, url, body))
            signature = headers["authorization"].rsplit("=", 1)[1]
            secrets = (*auth.credentials.secrets, signature, *extra)
            source = KeySource(origin=auth.origin, hint=_KEY_HINT, secrets=secrets)
        return url, merge_headers(headers, model.headers), source

    def _signed(
        self,
        model: ModelConfig,
        env: Mapping[str, str],
        auth: SigV4Auth,
        url: httpx.URL,
        body: bytes,
    ) -> dict[str, str]:
        clash = sorted(n for n in model.headers if n.lower() in {*SIGNED_HEADERS, "authorization"})
        if clash:
            raise ProviderError(
                ErrorKind.OTHER,
                f"ModelConfig.headers sets {', '.join(clash)}, which SigV4 signing sets itself",
            )
        region = resolve_region(url.host, env)
        host = url.netloc.decode("ascii")
        path, _, query = url.raw_path.decode("ascii").partition("?")
        payload_sha256 = hashlib.sha256(body).hexdigest()
        signature = sign(
            method="POST",
            path=path,
            query=query,
            headers=[
                ("host", host),
                ("content-type", "application/json"),
                ("x-amz-content-sha256", payload_sha256),
            ],
            payload_sha256=payload_sha256,
            credentials=auth.credentials,
            region=region,
            service=SIGNING_NAME,
            when=self._now(),
        )
        return {"host": host, "x-amz-content-sha256": payload_sha256, **signature.headers}

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Send one request and return the complete reply, reporting deltas to ``sink``."""
        env = os.environ if self._env is None else self._env
        # Serialized once: the signature covers exactly these bytes.
        cache = self._wire_cache
        if cache is None:
            cache = self._wire_cache = WireCache()
        body = encode_body(build_request_body(config, cache))
        url, headers, source = self._request(config.model, env, body)
        reader = BedrockReader(config, sink, source, self._transport.limits)
        try:
            return await self._read_stream(url, headers, body, source, reader)
        except ProviderError as error:
            raise _with_clock_hint(error) from None
