"""URL display: a URL as errors, logs and reprs may show it."""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote, urlunsplit

from .secrets import REDACTED, looks_like_key
from .url_parts import split_url

INVALID_URL: Final = "<invalid URL>"
"""What :func:`display_url` shows for text that is not a URL."""


def display_url(url: str, *, path: bool = True, invalid: str = INVALID_URL) -> str:
    """``url`` safe to show: scheme, host and port, then the path with each segment that
    looks like a key (:func:`looks_like_key`) as ``[redacted]``, and ``?…`` where it has a
    query. Never the user name, password, query or fragment, any of which may carry a key
    or a signature. A password holding an unencoded ``/ ? #`` is found all the same
    (the user information runs to the last ``@`` before the host); the URL then shows
    as ``scheme://[redacted]@host…``, since where its host starts is a reading.

    The host is lower-cased and the port kept as written (an out-of-range port is what
    an error about it must show). ``path=False`` shows the origin alone
    (``https://host:8443``). Text with no scheme or no host shows as ``invalid`` when
    the path is left out; otherwise as far as it parses.
    """
    try:
        parts, _, guessed = split_url(url.strip())
    except ValueError:
        return invalid
    host = parts.netloc.lower()
    if guessed:  # a password holding an unencoded / ? #: say it was there
        host = f"{REDACTED}@{host}"
    if not path:
        if not parts.scheme or not _hostname(parts.netloc):
            return invalid
        return f"{parts.scheme}://{host}"
    segments = "/".join(
        REDACTED if looks_like_key(segment) or looks_like_key(unquote(segment)) else segment
        for segment in parts.path.split("/")
    )
    query = "…" if parts.query else ""
    return urlunsplit((parts.scheme, host, segments, query, ""))


def _hostname(host: str) -> str:
    """The host part of ``host[:port]`` (an IPv6 literal keeps its brackets)."""
    if host.startswith("["):
        return host.partition("]")[0] + "]" if "]" in host else ""
    return host.partition(":")[0]
