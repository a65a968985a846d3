"""AWS Signature Version 4 (``AWS4-HMAC-SHA256``) for header-signed requests.

Why our own: the providers must not depend on an AWS SDK at runtime, and SigV4 is four
HMACs over a canonical text whose rules are fully specified; it is pinned here to the
classic AWS test suite and aws-c-auth's, and compared with botocore's signer on random
requests (tests only).

Rules (non-S3 services): the canonical URI is the request path, normalized (empty and
``.`` segments dropped, ``..`` resolved, a trailing ``/`` kept) unless told not to, then
each segment percent-encoded again, so a path already encoded on the wire
(``/model/a%3A0``) is encoded twice (``/model/a%253A0``). The canonical query decodes each
key and value and re-encodes them strictly (RFC 3986 unreserved characters only), sorted
by key then value. Header names are lower-cased, values trimmed with inner runs of
whitespace collapsed, repeated headers joined with ``,`` in the order given.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import quote, unquote

ALGORITHM = "AWS4-HMAC-SHA256"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An access key pair and, for temporary credentials, its session token.

    The secret key and the token never appear in a repr.
    """

    access_key: str
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values that must never be shown: the secret key and the session token."""
        return tuple(s for s in (self.secret_key, self.session_token) if s)


@dataclass(frozen=True, slots=True)
class Signature:
    """Every intermediate of one signing, and the headers to send with the request."""

    canonical_request: str = field(repr=False)  # holds the session token
    string_to_sign: str
    signature: str = field(repr=False)
    authorization: str = field(repr=False)
    headers: dict[str, str] = field(repr=False)
    """What to add to the request: ``x-amz-date``, ``x-amz-security-token`` when there is a
    session token, and ``authorization``."""


def amz_date(when: datetime) -> str:
    """``when`` as SigV4's ``YYYYMMDDTHHMMSSZ`` (UTC)."""
    return when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _encode(text: str) -> str:
    # quote() keeps exactly the unreserved set A-Z a-z 0-9 - _ . ~ with safe="".
    return quote(text, safe="")


def canonical_uri(path: str, *, normalize: bool = True) -> str:
    """The canonical URI of ``path`` (as sent on the wire, before the query)."""
    if not path:
        return "/"
    segments = path.split("/")
    if normalize:
        kept: list[str] = []
        for segment in segments:
            if segment == "..":
                if kept:
                    kept.pop()
            elif segment and segment != ".":
                kept.append(segment)
        trailing = "/" if kept and path.endswith("/") else ""
        return "/" + "/".join(_encode(s) for s in kept) + trailing
    return "/".join(_encode(s) for s in segments)


def canonical_query(query: str) -> str:
    """The canonical query string of a raw query (``a=1&b``), re-encoded and sorted."""
    if not query:
        return ""
    pairs: list[tuple[str, str]] = []
    for item in query.split("&"):
        if not item:
            continue
        key, _, value = item.partition("=")
        pairs.append((_encode(unquote(key)), _encode(unquote(value))))
    pairs.sort()
    return "&".join(f"{key}={value}" for key, value in pairs)


def _trimmed(value: str) -> str:
    return " ".join(value.split())


def canonical_headers(headers: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """``(canonical headers block, signed headers list)`` for every header given."""
    grouped: dict[str, list[str]] = {}
    for name, value in headers:
        grouped.setdefault(name.strip().lower(), []).append(_trimmed(value))
    names = sorted(grouped)
    block = "".join(f"{name}:{','.join(grouped[name])}\n" for name in names)
    return block, ";".join(names)


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    """The derived key for one day, region and service."""
    key = _hmac(f"AWS4{secret_key}".encode(), date)
    key = _hmac(key, region)
    key = _hmac(key, service)
    return _hmac(key, "aws4_request")


def sign(
    *,
    method: str,
    path: str,
    query: str,
    headers: Iterable[tuple[str, str]],
    payload_sha256: str,
    credentials: AwsCredentials,
    region: str,
    service: str,
    when: datetime,
    normalize_path: bool = True,
    sign_session_token: bool = True,
) -> Signature:
    """Sign one request. ``headers`` must include ``host``; every header given is signed.

    ``x-amz-date`` (and ``x-amz-security-token``, unless ``sign_session_token`` is off) are
    added and signed here. ``payload_sha256`` is the hex SHA-256 of the exact body bytes.
    """
    stamp = amz_date(when)
    date = stamp[:8]
    added = {"x-amz-date": stamp}
    if credentials.session_token and sign_session_token:
        added["x-amz-security-token"] = credentials.session_token
    block, signed = canonical_headers([*headers, *added.items()])
    canonical_request = "\n".join(
        [
            method.upper(),
            canonical_uri(path, normalize=normalize_path),
            canonical_query(query),
            block,
            signed,
            payload_sha256,
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join(
        [ALGORITHM, stamp, scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = signing_key(credentials.secret_key, date, region, service)
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    authorization = (
        f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
        f"SignedHeaders={signed}, Signature={signature}"
    )
    if credentials.session_token and not sign_session_token:
        added["x-amz-security-token"] = credentials.session_token
    return Signature(
        canonical_request=canonical_request,
        string_to_sign=string_to_sign,
        signature=signature,
        authorization=authorization,
        headers={**added, "authorization": authorization},
    )
