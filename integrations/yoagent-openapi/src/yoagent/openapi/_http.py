"""Sending one request and turning the response into a tool result.

Each call is bounded: the whole exchange (connect to last byte) by the timeout, the
body by the size cap (reading stops there and the connection is dropped, so a huge or
endless response costs at most the cap), redirects are not followed (a redirect to
another host would carry the credential along). A 2xx response is the result; any
other status is an error result quoting the start of the body. Every text goes
through the credential scrubber on its way out.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import httpx

from yoagent.core import CancelToken, ToolError, ToolResult
from yoagent.core.support import Scrubber, http_client, merge_headers, scrub_logs

from ._config import OpenApiConfig
from ._errors import httpx_errors

_TEXT_TYPES: Final = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-www-form-urlencoded",
    "application/yaml",
    "application/x-yaml",
    "application/graphql",
    "application/problem+json",
    "application/x-ndjson",
)
_SHOWN_HEADERS: Final = ("content-type", "location", "retry-after")
HTTP_LOGGERS: Final = ("httpx", "httpcore")
"""httpx logs each request's URL (a query-string key included), httpcore each response's
headers (a redirect's ``Location`` may echo the key): scrubbed while a call is in flight."""


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """A request as the tool built it, before the credential goes on."""

    method: str
    url: str
    params: Sequence[tuple[str, str]]
    headers: dict[str, str]
    content: bytes | None
    label: str
    """``METHOD /path/{template}``: how errors name the request (never the filled URL)."""


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    truncated: bool
    content_type: str
    charset: str | None


class Caller:
    """Sends the tools' requests with the caller's client, credential and limits."""

    def __init__(self, config: OpenApiConfig, client: httpx.AsyncClient | None) -> None:
        self.config = config
        self.client = client
        auth = config.auth
        self.secrets = Scrubber(
            auth.secrets() if auth is not None else (),
            fields=auth.fields() if auth is not None else (),
            headers=config.headers,
        )

    async def call(self, outgoing: OutgoingRequest, cancel: CancelToken) -> ToolResult:
        """Send ``outgoing``; the response as a result, or a :class:`ToolError`."""
        timeout = self.config.timeout
        label = outgoing.label
        reply: _Reply | None = None
        with (
            scrub_logs(self.secrets, HTTP_LOGGERS),
            httpx_errors(
                lambda why: ToolError(f"{label}: the request failed ({why})"),
                scrub=self.secrets.scrub,
                timed_out=lambda: ToolError(
                    f"{label}: no complete response within {timeout:g} s (timed out)"
                ),
            ),
            cancel.scope(),
            anyio.fail_after(timeout),
        ):
            reply = await self._exchange(outgoing)
        if reply is None:  # the run was cancelled while the request was in flight
            raise ToolError(f"{outgoing.label}: cancelled")
        return self._result(outgoing, reply)

    async def _exchange(self, outgoing: OutgoingRequest) -> _Reply:
        if self.client is not None:
            return await self._send(self.client, outgoing)
        async with http_client() as client:
            return await self._send(client, outgoing)

    async def _send(self, client: httpx.AsyncClient, outgoing: OutgoingRequest) -> _Reply:
        headers = merge_headers(outgoing.headers, self.config.headers)
        request = client.build_request(
            outgoing.method,
            outgoing.url,
            params=httpx.QueryParams(list(outgoing.params)),
            headers=headers,
            content=outgoing.content,
            timeout=httpx.Timeout(self.config.timeout),
        )
        if self.config.auth is not None:
            self.config.auth.apply(request)
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            body, truncated = await _read_capped(response, self.config.max_response_bytes)
        finally:
            await response.aclose()
        content_type = response.headers.get("content-type", "")
        return _Reply(
            status=response.status_code,
            reason=response.reason_phrase,
            headers=[(k, v) for k, v in response.headers.items() if k.lower() in _SHOWN_HEADERS],
            body=body,
            truncated=truncated,
            content_type=content_type,
            charset=response.charset_encoding,
        )

    def _result(self, outgoing: OutgoingRequest, reply: _Reply) -> ToolResult:
        scrub = self.secrets.scrub
        status_line = scrub(f"HTTP {reply.status} {reply.reason}".rstrip())
        header_lines = [f"{name.lower()}: {scrub(value)}" for name, value in reply.headers]
        body = scrub(_body_text(reply, self.config.max_response_bytes))
        details: dict[str, Any] = {
            "status": reply.status,
            "content_type": scrub(reply.content_type),
            "bytes": len(reply.body),
            "truncated": reply.truncated,
        }
        if 200 <= reply.status < 300:
            text = "\n".join([status_line, *header_lines, "", body])
            return ToolResult.from_text(text, details=details)
        limit = self.config.error_excerpt_chars
        excerpt = body
        if len(body) > limit:
            excerpt = body[:limit] + f"… [{len(body) - limit:,} more characters]"
        text = "\n".join([f"{status_line} from {outgoing.label}", *header_lines, "", excerpt])
        raise ToolError(text, details=details)


async def _read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    """Up to ``cap`` bytes of the (decoded) body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        room = cap - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _body_text(reply: _Reply, cap: int) -> str:
    if not reply.body:
        return "(empty body)"
    essence = reply.content_type.split(";", 1)[0].strip().lower()
    if essence and not _is_text(essence):
        more = " (more not read)" if reply.truncated else ""
        return f"[{len(reply.body):,} bytes of {essence}{more}: binary content is not shown]"
    text = _decode(reply.body, reply.charset, final=not reply.truncated)
    if reply.truncated:
        text += (
            f"\n\n[response truncated: the body is larger than {cap:,} bytes; "
            f"only the first {cap:,} are shown]"
        )
    return text


def _is_text(essence: str) -> bool:
    return (
        essence.startswith("text/")
        or essence in _TEXT_TYPES
        or essence.endswith(("+json", "+xml", "+yaml"))
    )


def _decode(body: bytes, charset: str | None, *, final: bool) -> str:
    try:
        decoder = codecs.getincrementaldecoder(charset or "utf-8")(errors="replace")
    except LookupError:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # Not final after a cut: a character cut in half by the size cap is dropped, not mangled.
    return decoder.decode(body, final=final)
