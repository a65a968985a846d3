"""The base URL an operation's requests go to: the caller's override, else ``servers``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import urljoin, urlsplit

import httpx

from yoagent.core.support import display_url

from ._errors import OpenApiError
from ._model import Server

_VARIABLE: Final = re.compile(r"\{([^{}]+)\}")


def base_url(
    override: str | None,
    servers: Sequence[Server] | None,
    *,
    variables: Mapping[str, str],
    document_url: str | None,
    where: str,
) -> str:
    """The absolute http(s) base URL for requests, without a trailing ``/``.

    ``override`` wins; else the first of ``servers`` (the operation's, else its path's,
    else the document's; none means ``/``, as the specification says) with its
    ``{variables}`` filled from ``variables``, else their defaults. A relative server
    URL is resolved against the URL the document was loaded from; without one it is an
    error that says to pass ``base_url``.
    """
    if override is not None:
        return _checked(override, "base_url")
    server = servers[0] if servers else Server(url="/")
    url = _fill(server, variables, where)
    if not urlsplit(url).scheme:
        if document_url is None:
            raise OpenApiError(
                f"{where}: the server URL {server.url!r} is relative and the document was "
                "not loaded from a URL; pass OpenApiConfig(base_url=...)"
            )
        url = urljoin(document_url, url)
    return _checked(url, f"{where}: server URL")


def _fill(server: Server, variables: Mapping[str, str], where: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return variables[name]
        declared = server.variables.get(name)
        if declared is None:
            raise OpenApiError(
                f"{where}: the server URL {server.url!r} uses {{{name}}}, which it does not "
                "declare; pass it in OpenApiConfig(server_variables=...)"
            )
        return declared.default

    return _VARIABLE.sub(value, server.url)


def _checked(url: str, what: str) -> str:
    """``url`` without its trailing ``/``, or an :class:`OpenApiError` that shows it only as
    :func:`display_url` does (never a user name, password, query or fragment)."""
    parts = urlsplit(url)
    if not parts.scheme:
        # Text without a scheme does not parse as a URL: nothing of it is safe to show.
        raise OpenApiError(f"{what} must be an absolute http(s) URL; it has no scheme")
    shown = display_url(url, path=False)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OpenApiError(f"{what} must be an absolute http(s) URL, not {shown!r}")
    try:
        _ = parts.port  # a port that is not a number from 0 to 65535 raises here
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL):
        raise OpenApiError(
            f"{what} is not a valid URL ({shown}): a port is a number up to 65535, and a user "
            "name or password must not hold an unencoded '/', '?' or '#'"
        ) from None
    if parts.query or parts.fragment:
        raise OpenApiError(f"{what} must not have a query or fragment ({shown})")
    return url.rstrip("/")
