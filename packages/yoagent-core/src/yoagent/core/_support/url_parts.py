"""Where a URL's user information ends, even when its password holds a ``/``, ``?`` or ``#``.

A URL parser ends the authority at the first ``/``, ``?`` or ``#``, so the rest of a
password holding one unencoded (``https://admin:hunter2/secret@db.example/app``) reads
as a path, a query or a fragment, and would be shown and left unscrubbed. Here the user
information runs to the last ``@`` before the host. An ``@`` after the authority is taken
to end it only when the authority has a user-and-password ``:`` and either cannot be a
``host:port`` (its port is not digits) or the ``@`` is in the very next piece (before
any further ``/ ? #``): an ``@`` in a path (``/@scope/pkg``, ``/users/me@example.com``)
or a query stays where it is. That reading is a guess, and says so.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import SplitResult, urlsplit

_DELIMITERS = "/?#"
_STRIPPED = "".join(map(chr, range(33)))  # what urlsplit strips from the start
_REMOVED = "\t\r\n"  # and removes everywhere


class UrlParts(NamedTuple):
    """A URL split with its user information apart."""

    parts: SplitResult
    """As :func:`urllib.parse.urlsplit` splits it, with the user information left out of
    ``netloc``."""
    userinfo: str
    """The user name and password as written (``""``: none)."""
    guessed: bool
    """Whether the user information ran past the first ``/ ? #`` (a password holding one
    unencoded): the host and path are then a reading, not what a parser sees."""


def split_url(url: str) -> UrlParts:
    """``url`` split, its user information running to the last ``@`` before the host.

    Raises :class:`ValueError` where :func:`urllib.parse.urlsplit` does (``http://[::1``).
    """
    for char in _REMOVED:
        url = url.replace(char, "")
    url = url.lstrip(_STRIPPED)
    parts = urlsplit(url)
    prefix = f"{parts.scheme}:" if parts.scheme else ""
    if not url.startswith("//", len(prefix)):
        return UrlParts(parts, "", guessed=False)
    rest = url[len(prefix) + 2 :]
    authority_end = _next_delimiter(rest, 0)
    authority = rest[:authority_end]
    userinfo_end = authority.rfind("@")
    guessed = False
    at = rest.find("@", authority_end)
    if at != -1 and ":" in authority:
        host = authority[userinfo_end + 1 :]
        next_piece = _next_delimiter(rest, authority_end + 1) >= at > authority_end + 1
        if next_piece or not _port_is_digits(host):
            userinfo_end = rest.rfind("@", 0, _next_delimiter(rest, at))
            guessed = True
    if userinfo_end == -1:
        return UrlParts(parts, "", guessed=False)
    userinfo = rest[:userinfo_end]
    return UrlParts(urlsplit(f"{prefix}//{rest[userinfo_end + 1 :]}"), userinfo, guessed)


def _next_delimiter(text: str, start: int) -> int:
    """Where the first ``/ ? #`` at or after ``start`` is (the end: none)."""
    found = [at for char in _DELIMITERS if (at := text.find(char, start)) != -1]
    return min(found, default=len(text))


def _port_is_digits(host: str) -> bool:
    """Whether ``host[:port]`` has no port, or one of digits (an IPv6 literal keeps its
    brackets)."""
    port = host.rpartition("]")[2] if host.startswith("[") else host
    _, colon, digits = port.rpartition(":")
    return not colon or digits == "" or (digits.isascii() and digits.isdigit())
