"""The httpx2 client under the Streamable HTTP transport: redirects by the client's policy,
and the end of each POST written to the :class:`~._exchange.Exchange` watching it.

The SDK asks its client for no redirects and follows the ones within the endpoint's
origin itself; its ``max_redirects`` is set to 0 here so it follows none, and
:class:`ExchangeClient` applies the policy instead (``same-origin`` by default, ``none``,
``any``). A redirect is followed only when it keeps the method (307/308 for a POST); one
to another origin loses the ``Authorization`` header and cookies (httpx2's own rule), not
the other headers — which is why ``any`` is not the default. Imported when a client
connects (it imports ``httpx2``).
"""

from __future__ import annotations

from typing import Any, Final

import httpx2

from yoagent.core.support import display_url

from ._exchange import Redirects, current

MAX_REDIRECTS: Final = 10
"""Redirects followed for one request, at most."""


class ExchangeClient(httpx2.AsyncClient):
    """An ``httpx2.AsyncClient`` that follows ``redirects`` and reports each POST's end."""

    def __init__(self, *, redirects: Redirects, **options: Any) -> None:
        super().__init__(follow_redirects=False, max_redirects=0, **options)
        self.redirects: Redirects = redirects

    async def send(
        self,
        request: httpx2.Request,
        *,
        stream: bool = False,
        auth: Any = httpx2.USE_CLIENT_DEFAULT,  # httpx2's AuthTypes | UseClientDefault | None
        follow_redirects: Any = httpx2.USE_CLIENT_DEFAULT,  # the policy decides, not this
    ) -> httpx2.Response:
        """``request`` sent, redirects followed by the policy (``follow_redirects`` is
        ignored); a POST's end is written to the exchange watching it."""
        exchange = current() if request.method == "POST" else None
        try:
            response, refused = await self._follow(request, auth)
        except Exception as error:
            if exchange is not None:
                exchange.transport_error = error
                exchange.settled.set()
            raise
        if exchange is not None:
            exchange.status = response.status_code
            exchange.reason = response.reason_phrase
            exchange.refused_redirect = refused
            exchange.settled.set()
        if not stream:
            try:
                await response.aread()
            except BaseException:
                await response.aclose()
                raise
        return response

    async def _follow(
        self, request: httpx2.Request, auth: Any
    ) -> tuple[httpx2.Response, str | None]:
        """The final response, and why it is a redirect not followed (else ``None``)."""
        first = request.url
        for hop in range(MAX_REDIRECTS + 1):
            response = await super().send(request, stream=True, auth=auth, follow_redirects=False)
            following = response.next_request
            if following is None:
                return response, None
            refused = _refusal(self.redirects, first, request, following, response.status_code)
            if refused is None and hop == MAX_REDIRECTS:
                refused = _said(following, response.status_code) + (
                    f" after {MAX_REDIRECTS} redirects; no more are followed"
                )
            if refused is not None:
                return response, refused
            try:
                await response.aread()
            finally:
                await response.aclose()
            request = following
        raise AssertionError("unreachable: the last hop returns")


def _said(following: httpx2.Request, status: int) -> str:
    return f"the server redirected to {display_url(str(following.url), path=False)} (HTTP {status})"


def _refusal(
    redirects: Redirects,
    first: httpx2.URL,
    request: httpx2.Request,
    following: httpx2.Request,
    status: int,
) -> str | None:
    """Why the redirect from ``request`` to ``following`` is not followed, else ``None``."""
    said = _said(following, status)
    if redirects == "none":
        return f"{said}; redirects='none' follows none"
    if following.method != request.method:
        return (
            f"{said}, which would turn the {request.method} into a {following.method}: only "
            "307 and 308 keep it"
        )
    if following.url.scheme not in ("http", "https"):
        return f"{said}, which is not http or https"
    if redirects == "same-origin" and not _within(first, following.url):
        home = display_url(str(first), path=False)
        return (
            f"{said}, another origin; redirects='same-origin' follows only redirects within "
            f"{home} (pass redirects='any' to follow it)"
        )
    return None


def _within(first: httpx2.URL, url: httpx2.URL) -> bool:
    """``url`` is on ``first``'s origin, or is its https upgrade on the default ports."""
    if (first.scheme, first.host, first.port) == (url.scheme, url.host, url.port):
        return True
    return (
        first.host == url.host
        and first.scheme == "http"
        and url.scheme == "https"
        and first.port is None
        and url.port is None
    )
