"""What counts as a secret: key-shaped tokens, credential names, and the secret pieces of
headers and URLs.

One policy for every package: a value of :data:`MIN_SECRET_LENGTH` characters or more is
replaced wherever it occurs, a shorter one only where it stands as its field (``key=ab``,
``Bearer ab``: a two-letter key also occurs in words and numbers); a token shaped like a
well-known key (:data:`KEY_SHAPES`) is replaced even when nobody named it, since a gateway
may echo a credential it was never given by us.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import Final, cast
from urllib.parse import SplitResult, unquote, unquote_plus

from .url_parts import split_url

REDACTED: Final = "[redacted]"
"""What stands in place of a secret."""

MIN_SECRET_LENGTH: Final = 8
"""Shorter values are replaced only in their own field, never everywhere."""

KEY_SHAPES: Final = (
    # (what comes before the secret and stays, the secret, what it runs on with)
    ("", r"\b(?i:sk-ant-[\w-]{8,})", r"[\w-]"),
    ("", r"\b(?i:sk-[\w-]{16,})", r"[\w-]"),
    ("", r"\b(?i:gsk_[\w-]{16,})", r"[\w-]"),
    ("", r"\b(?i:xai-[\w-]{16,})", r"[\w-]"),
    ("", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", ""),
    (r"\b(?i:bearer)\s{1,16}", r"[\w.~+/=-]{8,}", r"[\w.~+/=-]"),
)
"""Tokens replaced wherever they appear, as ``(lead, secret, run)`` regular expressions:
the ``lead`` is kept (``Bearer [redacted]``). The union of the shapes the packages knew:
OpenAI, Anthropic, Groq and xAI keys, AWS access key ids, and bearer tokens.

``run`` is the one character class a secret ending at the end of the text so far goes on
with, for as long as the text does (empty: the secret has a bounded length). A stream
follows a growing token by its run alone, so a long one costs linear time. No shape's run
starts inside another's and outlasts it (a ``Bearer`` lead needs a space, which no run
holds): a secret overlapping the end of another starts within the scrubber's hold."""

_CREDENTIAL_NAME: Final = re.compile(
    r"auth|key|token|secret|passw|cookie|credential|signature|session|^sig$|^code$|^x-amz-",
    re.IGNORECASE,
)
_TOKEN: Final = re.compile(r"[A-Za-z0-9._~+/=-]+")
_SHAPED: Final = re.compile("|".join(f"{lead}{secret}" for lead, secret, _ in KEY_SHAPES))


SECRET_VARIABLE_PATTERNS: Final = (
    "API_KEY",
    "APIKEY",
    "KEY",
    "*_KEY",
    "*API_KEY",
    "*APIKEY",
    "*ACCESS_KEY_ID",
    "*TOKEN",
    "*TOKENS",
    "*TOKEN_*",
    "*TOKENS_*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
)
"""Environment variables that hold a credential by their name (``fnmatch`` patterns, any
case): ``*_API_KEY``, ``HF_TOKEN``, ``AWS_BEARER_TOKEN_BEDROCK``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_ACCESS_KEY_ID``, ``PGPASSWORD``, ... ``KEY`` and ``TOKEN`` count as words only:
``TOKENIZERS_PARALLELISM`` and ``KEYBOARD`` are settings. The one rule for every package:
the bash tool keeps these from commands, a test cassette scrubs their values."""


def is_secret_variable(name: str) -> bool:
    """True for an environment variable named like a credential
    (:data:`SECRET_VARIABLE_PATTERNS`, in any case)."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_VARIABLE_PATTERNS)


def is_credential_name(name: str) -> bool:
    """True for a header or query parameter whose value is a credential: ``Authorization``,
    ``Cookie``, ``X-Api-Key``, ``access_token``, ``X-Amz-Signature``, ``sig``, ``code``,
    anything naming a key, token, secret, password, signature or session."""
    return _CREDENTIAL_NAME.search(name) is not None


def looks_like_key(text: str) -> bool:
    """True for a piece of text shaped like a credential rather than a name.

    A key shape (:data:`KEY_SHAPES`), or :data:`MIN_SECRET_LENGTH`+ token characters
    (letters, digits, ``._~+/=-``) holding two digits and two letters
    (``sk-abcdef123456``), or 16+ mixing upper and lower case (base64 without digits).
    ``v1``, ``api.json``, ``gpt-4o-mini`` and ``chat/completions`` are names.
    """
    if len(text) < MIN_SECRET_LENGTH:
        return False
    if _SHAPED.fullmatch(text) is not None:
        return True
    if _TOKEN.fullmatch(text) is None:
        return False
    digits = sum(char.isdigit() for char in text)
    letters = sum(char.isalpha() for char in text)
    if digits >= 2 and letters >= 2:
        return True
    return len(text) >= 16 and not text.islower() and not text.isupper()


Headers = Mapping[str, str] | Iterable[tuple[str, str]]
"""Headers as a mapping or as ``(name, value)`` pairs (a response may repeat a name)."""


def header_pairs(headers: Headers) -> list[tuple[str, str]]:
    """``headers`` as a list of ``(name, value)`` pairs."""
    if isinstance(headers, Mapping):
        return list(cast(Mapping[str, str], headers).items())
    return list(headers)


def header_secrets(headers: Headers) -> list[str]:
    """The credential values among ``headers``: the whole value of each credential-named
    header (:func:`is_credential_name`), what follows its first word (``Bearer <token>``, a
    token with spaces in it whole), its last word and, for a cookie, each cookie's value."""
    found: list[str] = []
    for name, value in header_pairs(headers):
        if not is_credential_name(name):
            continue
        found.append(value)
        if name.lower() == "cookie":
            found.extend(pair.partition("=")[2].strip() for pair in value.split(";"))
        elif len(words := value.split()) > 1:
            found.extend(_after_scheme(value, words))
    return found


def _after_scheme(value: str, words: list[str]) -> list[str]:
    """What follows a header value's first word, and its last word when that differs."""
    credentials = value.split(maxsplit=1)[1].strip()
    return [credentials] if credentials == words[-1] else [credentials, words[-1]]


SecretField = tuple[str, str, str]
"""Where a credential shows as one: ``(name, separator, value)``, such as
``("api_key", "=", key)`` for a query key or ``("Bearer", " ", token)``."""


def header_fields(headers: Headers) -> list[SecretField]:
    """Where each credential header's value shows as one: ``Name: value``, what follows its
    scheme (``Bearer <token>``) and its last word after the scheme and, for a cookie, each
    ``name=value``."""
    fields: list[SecretField] = []
    for name, value in header_pairs(headers):
        if not is_credential_name(name):
            continue
        fields.append((name, ": ", value))
        if name.lower() == "cookie":
            for pair in value.split(";"):
                cookie, _, cookie_value = pair.strip().partition("=")
                fields.append((cookie, "=", cookie_value))
        elif len(words := value.split()) > 1:
            fields.extend(
                (words[0], " ", credentials) for credentials in _after_scheme(value, words)
            )
    return fields


def url_secrets(url: str) -> tuple[list[str], list[SecretField]]:
    """The secret pieces of ``url``, as values and as fields.

    Values: the user name and password (running to the last ``@`` before the host, a
    ``/ ? #`` in a password included, and then each part between them too), each path
    segment and query value that :func:`looks_like_key`, the value of each
    credential-named query parameter and a key-like fragment, as written and
    percent-decoded; and when any is found, the whole
    URL and its path-and-query, which carry them. Fields: each credential-named query
    parameter (``token=ab``), so a short one is still replaced where it stands.
    """
    url = url.strip()
    try:
        parts, userinfo, guessed = split_url(url)
    except ValueError:
        return [url], []
    pieces: list[str] = []
    fields: list[SecretField] = []
    if userinfo:
        pieces.extend(piece for piece in (userinfo, *userinfo.split(":", 1)) if piece)
        if guessed:
            # A parser cuts a password holding an unencoded / ? # there, and may quote a
            # part of it (httpx: "Invalid port: 'first-part'"): each part is secret too.
            pieces.extend(piece for piece in re.split(r"[:/?#]", userinfo) if piece)
    pieces.extend(segment for segment in parts.path.split("/") if _keyish(segment))
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if not value:
            continue
        if is_credential_name(unquote_plus(name)):
            pieces.append(value)
            fields.append((name, "=", value))
        elif _keyish(value, plus=True):
            pieces.append(value)
    if _keyish(parts.fragment):
        pieces.append(parts.fragment)
    if pieces:
        pieces.extend((url, _tail(parts)))
    decoded = [unquote_plus(piece) for piece in pieces] + [unquote(piece) for piece in pieces]
    return [*dict.fromkeys(pieces + decoded)], fields


def _keyish(piece: str, *, plus: bool = False) -> bool:
    """Whether a URL piece looks like a key, as written or percent-decoded."""
    decoded = unquote_plus(piece) if plus else unquote(piece)
    return looks_like_key(piece) or looks_like_key(decoded)


def _tail(parts: SplitResult) -> str:
    return parts.path + (f"?{parts.query}" if parts.query else "")
