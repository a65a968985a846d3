"""Keeping secrets out of cassettes: endpoints written with their credentials redacted, and
every known secret value replaced wherever else it turns up before a record is written."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from yoagent.core import ModelConfig

REDACTED = "[REDACTED]"
"""What a cassette holds in place of a secret."""

MIN_SCRUBBED_LENGTH = 8
"""Shorter values are too common to replace wherever they occur (a test's ``api_key="k"``);
they are still never written in the fields that carry them."""

# Header and query-parameter names whose values are credentials.
_SECRET_NAME = re.compile(
    r"auth|key|token|secret|passw|cookie|credential|signature|session|^sig$|^code$|^x-amz-",
    re.IGNORECASE,
)
# Environment variables that hold credentials by convention (ANTHROPIC_API_KEY, HF_TOKEN,
# AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_BEARER_TOKEN_BEDROCK, ...).
_SECRET_VARIABLE = re.compile(r"API_KEY|_KEY$|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for a header or query parameter whose value is a credential."""
    return bool(_SECRET_NAME.search(name))


def redact_url(url: str) -> str:
    """``url`` with its userinfo and secret query values replaced by :data:`REDACTED`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED if url else url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(name, REDACTED if is_secret_name(name) else value) for name, value in pairs],
            safe="[]",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def endpoint_json(model: ModelConfig) -> dict[str, Any]:
    """Where a request went, as a cassette holds it: base URL and headers, credentials
    redacted (the API key itself is never part of it)."""
    return {
        "base_url": redact_url(model.base_url),
        "headers": {
            name: REDACTED if is_secret_name(name) else value
            for name, value in sorted(model.headers.items())
        },
    }


def model_secrets(model: ModelConfig) -> list[str]:
    """Every credential ``model`` carries: its key (and each part of a ``a:b:c`` key), the
    values of credential headers, and the userinfo and secret query values of its URL."""
    found: list[str] = []
    if model.api_key:
        found.append(model.api_key)
        found.extend(model.api_key.split(":"))
    for name, value in model.headers.items():
        if is_secret_name(name):
            found.append(value)
            found.extend(value.split())  # "Bearer <token>"
    try:
        parts = urlsplit(model.base_url)
    except ValueError:
        parts = None
    if parts is not None:
        if parts.username:
            found.append(parts.username)
        if parts.password:
            found.append(parts.password)
        found.extend(
            value
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if is_secret_name(name)
        )
    return found


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of environment variables named like credentials (``*_API_KEY``,
    ``*TOKEN*``, ``*SECRET*``, ...): keys a provider may read by itself."""
    source = os.environ if environ is None else environ
    return [value for name, value in source.items() if _SECRET_VARIABLE.search(name)]


class Scrubber:
    """Replaces known secret values anywhere in a JSON value (keys included)."""

    __slots__ = ("_pattern", "_secrets")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Also replace these values (those shorter than :data:`MIN_SCRUBBED_LENGTH` are
        ignored: replacing them everywhere would mangle ordinary text)."""
        fresh = {
            value
            for value in (secret.strip() for secret in secrets)
            if len(value) >= MIN_SCRUBBED_LENGTH and value not in self._secrets
        }
        if fresh:
            self._secrets |= fresh
            # Longest first, so a secret containing another is replaced whole.
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(value) for value in ordered))

    def text(self, value: str) -> str:
        """``value`` with every known secret replaced by :data:`REDACTED`."""
        if self._pattern is None:
            return value
        return self._pattern.sub(REDACTED, value)

    def json(self, value: Any) -> Any:
        """A copy of the JSON value ``value`` with every known secret replaced."""
        if self._pattern is None:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            items = cast(dict[str, Any], value).items()
            return {self.text(key): self._walk(item) for key, item in items}
        if isinstance(value, list):
            return [self._walk(item) for item in cast(list[Any], value)]
        return value
