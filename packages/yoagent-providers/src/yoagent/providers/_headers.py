"""What an HTTP header may hold, and how the user's headers join ours.

A header that HTTP cannot carry is refused before anything is sent, naming the header
(never its value); a credential header is an ``AUTH`` error, any other an ``OTHER`` one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from yoagent.core import ErrorKind, ProviderError

SENSITIVE_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})
"""Headers that carry a credential (compared in lower case)."""
UNSENDABLE = "a line break, a control character or a non-ASCII character"
"""What a value that HTTP cannot carry holds, as error messages say it."""

# What HTTP/1.1 lets a header hold: visible ASCII, space and tab; names are tokens.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def sendable(value: str) -> bool:
    """Whether ``value`` can be sent as a header value as it is."""
    return _HEADER_VALUE.fullmatch(value) is not None


def check_headers(headers: Mapping[str, str]) -> None:
    """Refuse, before sending, a header HTTP cannot carry; the error names it, never its value.

    A credential header is an AUTH error, any other an OTHER error: retrying cannot help.
    """
    for name, value in headers.items():
        if _HEADER_NAME.fullmatch(name) is None:
            raise ProviderError(ErrorKind.OTHER, f"{name!r} is not a valid HTTP header name")
        if not sendable(value):
            kind = ErrorKind.AUTH if name.lower() in SENSITIVE_HEADERS else ErrorKind.OTHER
            raise ProviderError(
                kind, f"the {name} header cannot be sent: its value holds {UNSENDABLE}"
            )
