"""The base URL an operation's requests go to: the caller's override, else ``servers``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import urljoin, urlsplit

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
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # Without a scheme the text is shown as far as it parses, never its query.
        shown = display_url(url, path=False) if parts.scheme else display_url(url)
        raise OpenApiError(f"{what} must be an absolute http(s) URL, not {shown!r}")
    if parts.query or parts.fragment:
        raise OpenApiError(
            f"{what} must not have a query or fragment ({display_url(url, path=False)})"
        )
    return url.rstrip("/")
