"""Keeping the caller's credentials out of everything the model or a log can read.

A :class:`Secrets` holds every credential value an adapter sends (a token, a key, a
password, the value of a credential-named extra header) in each form it may come back
in: as given, percent-encoded (a key in a query string) and, for basic auth,
base64-encoded. Every text an OpenAPI tool returns or raises goes through
:meth:`Secrets.scrub`, so a server that echoes a key (``invalid key sk-...``) shows
``[redacted]`` instead; while a request is in flight the HTTP libraries' log records are
scrubbed too (:mod:`._log_scrub`).

Only values of :data:`MIN_SCRUBBED_LENGTH` characters or more are replaced wherever they
occur: a shorter one (an ``X-Api-Version: 2``, a test key ``k1``) also occurs in status
codes, ids and words, and replacing it everywhere would corrupt every result. A short
credential is still scrubbed from its own field, where the text shows it as one: a
query or cookie key after ``name=``, a token after ``Bearer `` or ``Basic ``. Extra
headers are credentials only when their name says so (:func:`is_credential_header`).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import quote, quote_plus

REDACTED: Final = "[redacted]"

MIN_SCRUBBED_LENGTH: Final = 8
"""Shorter values are not replaced everywhere, only in their own field."""

_CREDENTIAL_NAME: Final = re.compile(
    r"auth|key|token|secret|passw|cookie|credential|signature|session", re.IGNORECASE
)
# Around a credential in its own field: what may not come right before the field's
# name, and what may not follow the value (it would be a longer value, not this one).
_NOT_BEFORE: Final = r"(?<![\w.~%-])"
_NOT_AFTER: Final = r"(?![\w.~%+/=:@!$*-])"


def is_credential_header(name: str) -> bool:
    """True for a header whose value is a credential: ``Authorization``, ``Cookie``,
    anything naming a key, token, secret, password, signature or session."""
    return bool(_CREDENTIAL_NAME.search(name))


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The credential values among ``headers``: the whole value of each credential-named
    header, its last word (``Token <value>``) and, for a cookie, each cookie's value."""
    found: list[str] = []
    for name, value in headers.items():
        if not is_credential_header(name):
            continue
        found.append(value)
        if name.lower() == "cookie":
            found.extend(pair.partition("=")[2].strip() for pair in value.split(";"))
        elif len(words := value.split()) > 1:
            found.append(words[-1])
    return found


Field = tuple[str, str, str]
"""Where a credential shows as one: ``(name, separator, value)``, such as
``("api_key", "=", key)`` for a query key or ``("Bearer", " ", token)``."""


def _forms(value: str) -> set[str]:
    return {value, quote(value, safe=""), quote_plus(value)}


class Secrets:
    """Credential values, and the scrubber that removes them from text."""

    __slots__ = ("_fields", "_values")

    def __init__(self, values: Iterable[str] = (), fields: Iterable[Field] = ()) -> None:
        """``values`` are replaced wherever they occur (those of 8+ characters);
        each field's value is replaced where it follows the field's name and separator
        (``api_key=``, ``Bearer ``) and ends there, whatever its length."""
        forms: set[str] = set()
        for value in values:
            if len(value) >= MIN_SCRUBBED_LENGTH:
                forms.update(_forms(value))
        # Longest first: a value is replaced before any shorter value inside it.
        self._values = tuple(sorted(forms, key=len, reverse=True))
        # A longer value is already replaced wherever it occurs, its field included.
        self._fields = tuple(
            _field_pattern(field) for field in fields if 0 < len(field[2]) < MIN_SCRUBBED_LENGTH
        )

    def __bool__(self) -> bool:
        return bool(self._values or self._fields)

    def scrub(self, text: str) -> str:
        """``text`` with every credential value replaced by ``[redacted]``."""
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        for pattern in self._fields:
            text = pattern.sub(rf"\g<lead>{REDACTED}", text)
        return text


def _field_pattern(field: Field) -> re.Pattern[str]:
    name, separator, value = field

    def either(forms: Iterable[str]) -> str:
        return "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))

    lead = either(form + separator for form in _forms(name))
    return re.compile(rf"{_NOT_BEFORE}(?P<lead>(?i:{lead}))(?:{either(_forms(value))}){_NOT_AFTER}")


def basic_token(username: str, password: str) -> str:
    """What basic auth sends after ``Basic ``: the base64 of ``username:password``."""
    return base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
