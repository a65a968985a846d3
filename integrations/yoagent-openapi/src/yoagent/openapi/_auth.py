"""Credentials the caller gives for an API: bearer token, API key, basic auth.

They go on every request the tools send and nowhere else: never into a tool's schema or
description (a parameter the credential supplies is taken out of the schema), and
never into a result, an error or a log line (the floor's
:class:`~yoagent.core.support.Scrubber`): each names its secret values and the fields
that carry them. Their ``repr`` hides the secret part.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Literal

import httpx

from yoagent.core.support import SecretField

ApiKeyLocation = Literal["header", "query", "cookie"]


def _check(value: str, what: str) -> None:
    """Refuse a credential that cannot be sent as given (never quoting it)."""
    if not value:
        raise ValueError(f"{what} is empty")
    if not value.isascii() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError(f"{what} must be printable ASCII (no line breaks or control characters)")


@dataclass(frozen=True, slots=True)
class BearerAuth:
    """``Authorization: Bearer <token>`` on every request."""

    token: str = field(repr=False)

    def __post_init__(self) -> None:
        _check(self.token, "the bearer token")

    def apply(self, request: httpx.Request) -> None:
        """Put the credential on ``request``."""
        request.headers["authorization"] = f"Bearer {self.token}"

    def secrets(self) -> tuple[str, ...]:
        """The values to keep out of every text."""
        return (self.token,)

    def fields(self) -> tuple[SecretField, ...]:
        """Where the credential shows as one, to scrub it there even when it is short."""
        return (("Bearer", " ", self.token),)

    def supplies(self, location: str, name: str) -> bool:
        """True when this credential fills the parameter ``name`` in ``location``."""
        return location == "header" and name.lower() == "authorization"


@dataclass(frozen=True, slots=True)
class ApiKeyAuth:
    """An API key in a header (default), a query parameter or a cookie named ``name``."""

    name: str
    value: str = field(repr=False)
    location: ApiKeyLocation = "header"

    def __post_init__(self) -> None:
        _check(self.name, "the API key's name")
        _check(self.value, "the API key")
        if self.location not in ("header", "query", "cookie"):
            raise ValueError(f"an API key goes in a header, query or cookie, not {self.location!r}")

    def apply(self, request: httpx.Request) -> None:
        """Put the credential on ``request``."""
        if self.location == "header":
            request.headers[self.name] = self.value
        elif self.location == "query":
            request.url = request.url.copy_merge_params({self.name: self.value})
        else:
            _add_cookie(request, self.name, self.value)

    def secrets(self) -> tuple[str, ...]:
        """The values to keep out of every text."""
        return (self.value,)

    def fields(self) -> tuple[SecretField, ...]:
        """Where the credential shows as one, to scrub it there even when it is short."""
        return () if self.location == "header" else ((self.name, "=", self.value),)

    def supplies(self, location: str, name: str) -> bool:
        """True when this credential fills the parameter ``name`` in ``location``."""
        if location != self.location:
            return False
        return name.lower() == self.name.lower() if location == "header" else name == self.name


@dataclass(frozen=True, slots=True)
class BasicAuth:
    """``Authorization: Basic base64(username:password)`` on every request."""

    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        _check(self.username, "the username")
        _check(self.password, "the password")
        if ":" in self.username:
            raise ValueError("a basic-auth username cannot contain ':'")

    def apply(self, request: httpx.Request) -> None:
        """Put the credential on ``request``."""
        request.headers["authorization"] = f"Basic {basic_token(self.username, self.password)}"

    def secrets(self) -> tuple[str, ...]:
        """The values to keep out of every text."""
        return (self.password, basic_token(self.username, self.password))

    def fields(self) -> tuple[SecretField, ...]:
        """Where the credential shows as one, to scrub it there even when it is short."""
        return (("Basic", " ", basic_token(self.username, self.password)),)

    def supplies(self, location: str, name: str) -> bool:
        """True when this credential fills the parameter ``name`` in ``location``."""
        return location == "header" and name.lower() == "authorization"


OpenApiAuth = BearerAuth | ApiKeyAuth | BasicAuth
"""Any one of the credentials an adapter can send."""


def _add_cookie(request: httpx.Request, name: str, value: str) -> None:
    existing = request.headers.get("cookie")
    pair = f"{name}={value}"
    request.headers["cookie"] = f"{existing}; {pair}" if existing else pair


def basic_token(username: str, password: str) -> str:
    """What basic auth sends after ``Basic ``: the base64 of ``username:password``."""
    return base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
