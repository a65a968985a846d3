"""Endpoint URLs: a request path joined to a configured base URL."""

from __future__ import annotations

from collections.abc import Callable


def endpoint_from_base(base_url: str, path_for: Callable[[str], str], query: str = "") -> str:
    """``path_for(base)`` for ``base_url`` with whitespace, its fragment, its query and a
    trailing ``/`` taken off; then ``query`` (the endpoint's own, such as ``alt=sse``)
    and the base URL's query after it.

    A key or a version a gateway takes in the base URL's query (``…/v1?api-key=…``) stays
    a query: appended to the text as it stands, the endpoint's path would land inside it.
    The fragment is never sent, so it goes.
    """
    base = base_url.strip().partition("#")[0]
    base, _, base_query = base.partition("?")
    queries = "&".join(part for part in (query, base_query) if part)
    return f"{path_for(base.rstrip('/'))}{'?' if queries else ''}{queries}"
