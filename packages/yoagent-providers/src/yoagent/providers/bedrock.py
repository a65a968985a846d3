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
from urllib.parse import quote

import httpx

from yoagent.core import (
    AssistantMessage,
    DeltaSink,
    ErrorKind,
    ModelConfig,
    ProviderError,
    StreamConfig,
)

from ._aws_credentials import (
    ACCESS_KEY_VARIABLE,
    BEARER_VARIABLE,
    BearerAuth,
    HeaderAuth,
    SigV4Auth,
    resolve_auth,
    resolve_region,
)
from ._bedrock_request import build_request_body
from ._bedrock_stream import BedrockReader
from ._http import HttpProvider, encode_body
from ._http_errors import KeySource
from ._sigv4 import sign

SIGNING_NAME = "bedrock"
EVENTSTREAM = "application/vnd.amazon.eventstream"
SIGNED_HEADERS = frozenset(
    {"host", "content-type", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"}
)
"""Headers SigV4 signing sets; ``ModelConfig.headers`` may not hold them on that path."""
_KEY_HINT = f"{BEARER_VARIABLE}, or {ACCESS_KEY_VARIABLE} and AWS_SECRET_ACCESS_KEY"
_CLOCK_PHRASES = ("signature expired", "signature not yet current", "not yet current")


def runtime_url(region: str) -> str:
    """The Bedrock runtime endpoint of ``region``."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def converse_stream_url(base_url: str, model_id: str) -> httpx.URL:
    """The request URL; the model id is one encoded path segment (``:`` → ``%3A``)."""
    bad = ProviderError(
        ErrorKind.OTHER, "cannot send to the configured base_url: it is not an http(s) URL"
    )
    try:
        url = httpx.URL(f"{base_url.rstrip('/')}/model/{quote(model_id, safe='')}/converse-stream")
    except httpx.InvalidURL:
        raise bad from None
    if url.scheme not in ("http", "https") or not url.host:
        raise bad
    return url


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

    ``env`` replaces ``os.environ`` for credential and region look-ups and ``clock`` the
    system clock (seconds since the epoch) for signing; both exist for tests.
    """

    def __init__(
        self,
        config: ModelConfig | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(config, client=client, timeout=timeout)
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
        if isinstance(auth, HeaderAuth):
            values = [v for n, v in model.headers.items() if n.lower() == "authorization"]
            secrets = tuple(s for v in values for s in (v, v.removeprefix("Bearer ").strip()))
            source = KeySource(origin="ModelConfig.headers", hint=_KEY_HINT, secrets=secrets)
        elif isinstance(auth, BearerAuth):
            headers["authorization"] = f"Bearer {auth.token}"
            source = KeySource(origin=auth.origin, hint=_KEY_HINT, secrets=(auth.token,))
        else:
            headers.update(self._signed(model, env, auth, url, body))
            source = KeySource(
                origin=auth.origin,
                hint=_KEY_HINT,
                secrets=(*auth.credentials.secrets, headers["authorization"].rsplit("=", 1)[1]),
            )
        headers.update(model.headers)
        return url, headers, source

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
        body = encode_body(build_request_body(config))
        url, headers, source = self._request(config.model, env, body)
        reader = BedrockReader(config, sink, source)
        try:
            stopped = await self._transport.post_stream(url, headers, body, source, reader.on_chunk)
        except ProviderError as error:
            raise _with_clock_hint(error) from None
        return reader.finish(stopped)
