"""Vertex AI credentials: an OAuth access token, read per request (tokens expire).

First match wins:

1. an ``authorization`` (or ``x-goog-api-key``) header in ``ModelConfig.headers``: sent
   as it is, nothing added;
2. ``ModelConfig.api_key``, else ``GOOGLE_CLOUD_ACCESS_TOKEN`` (``ModelConfig.key_variable``):
   an access token, sent as ``Authorization: Bearer``;
3. Application Default Credentials: the JSON file named by
   ``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's
   (``~/.config/gcloud/application_default_credentials.json``, ``%APPDATA%\\gcloud\\…`` on
   Windows, under ``CLOUDSDK_CONFIG`` when set). An ``authorized_user`` file (what
   ``gcloud auth application-default login`` writes) is exchanged with its refresh token,
   a ``service_account`` key file with a signed JWT (RS256), at the file's ``token_uri``
   (Google's by default). The token is cached per file until five minutes before it
   expires; one exchange per file runs at a time in an event loop (concurrent first
   requests share it), and at most 64 KiB of its decompressed reply is read.

Nothing else (no metadata server, no workload identity federation): another file type
is an ``AUTH`` error naming it, as is finding no credentials at all. No Google SDK is
needed; a ``service_account`` file needs ``cryptography`` to sign its JWT (the ``vertex``
extra, imported only then). Secrets from the file (refresh token, client secret, private
key) and the tokens never appear in an error or a log line.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from anyio.lowlevel import RunVar

from yoagent.core import ErrorKind, ModelConfig, ProviderError
from yoagent.core.support import Scrubber, header_secrets

from ._body import ACCEPT_ENCODING, read_prefix
from ._http_errors import KeySource, from_http_status, httpx_errors, url_problem
from ._json import as_dict, as_int, as_str, parse_json
from ._keys import check_key

TOKEN_VARIABLE = "GOOGLE_CLOUD_ACCESS_TOKEN"
CREDENTIALS_VARIABLE = "GOOGLE_APPLICATION_CREDENTIALS"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
REFRESH_MARGIN = 300.0
"""Seconds before its expiry that a cached token is replaced."""
_TOKEN_TIMEOUT = httpx.Timeout(30.0)


@dataclass(frozen=True, slots=True)
class _Token:
    value: str = field(repr=False)
    expires_at: float
    secrets: tuple[str, ...] = field(repr=False)


_cache: dict[tuple[str, int], _Token] = {}
_cache_lock = threading.Lock()
_exchanging: RunVar[dict[str, anyio.Lock]] = RunVar("yoagent_vertex_exchanges")
_MAX_TOKEN_REPLY = 64 * 1024
"""The most decompressed bytes of a token endpoint's reply that are read."""


def adc_file(env: Mapping[str, str] | None = None) -> Path | None:
    """The Application Default Credentials file to use, if there is one."""
    environ = os.environ if env is None else env
    explicit = environ.get(CREDENTIALS_VARIABLE, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    config = environ.get("CLOUDSDK_CONFIG", "").strip()
    if config:
        folder = Path(config).expanduser()
    elif os.name == "nt" and environ.get("APPDATA"):
        folder = Path(environ["APPDATA"]) / "gcloud"
    else:
        folder = Path.home() / ".config" / "gcloud"
    found = folder / "application_default_credentials.json"
    return found if found.is_file() else None


ClientFor = Callable[[str], httpx.AsyncClient]
"""Gives the HTTP client a request to a URL goes through."""


async def vertex_credentials(
    config: ModelConfig, client_for: ClientFor
) -> tuple[dict[str, str], KeySource]:
    """The auth headers for one Vertex request and where they came from.

    ``client_for(url)`` gives the HTTP client a token exchange goes through.
    """
    user_auth = [n for n in config.headers if n.lower() in ("authorization", "x-goog-api-key")]
    extra = tuple(header_secrets(config.headers))
    variable = config.key_variable or TOKEN_VARIABLE
    if user_auth:
        return {}, KeySource(origin=f"the {user_auth[0]} header", hint=variable, secrets=extra)
    token, origin = config.api_key.strip(), "ModelConfig.api_key"
    if not token:
        token, origin = os.environ.get(variable, "").strip(), variable
    if token:
        check_key(token, origin)
        source = KeySource(origin=origin, hint=variable, secrets=(token, *extra))
        return {"authorization": f"Bearer {token}"}, source
    path = adc_file()
    if path is None:
        raise ProviderError(
            ErrorKind.AUTH,
            f"no Google Cloud credentials for Vertex AI: set {variable} to an access token, "
            f"or {CREDENTIALS_VARIABLE} to a credentials file, or run "
            "`gcloud auth application-default login`",
        )
    token, secrets = await _adc_token(path, client_for)
    check_key(token, str(path))
    source = KeySource(origin=str(path), hint=variable, secrets=(token, *secrets, *extra))
    return {"authorization": f"Bearer {token}"}, source


def _load(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProviderError(
            ErrorKind.AUTH, f"cannot read the credentials file {path}: {exc.strerror}"
        ) from None
    try:
        return as_dict(parse_json(raw))
    except ValueError:
        raise ProviderError(ErrorKind.AUTH, f"the credentials file {path} is not JSON") from None


def _cached(path: Path) -> tuple[int, _Token | None]:
    """The file's modification stamp and its cached, still valid token (a local stat)."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise ProviderError(
            ErrorKind.AUTH, f"cannot read the credentials file {path}: {exc.strerror}"
        ) from None
    with _cache_lock:
        cached = _cache.get((str(path), stamp))
    if cached is not None and cached.expires_at - REFRESH_MARGIN > time.time():
        return stamp, cached
    return stamp, None


def _exchange_lock(path: Path) -> anyio.Lock:
    """The running loop's lock for exchanging the credentials in ``path``."""
    try:
        locks = _exchanging.get()
    except LookupError:
        locks = dict[str, anyio.Lock]()
        _exchanging.set(locks)
    return locks.setdefault(str(path), anyio.Lock())


async def _adc_token(path: Path, client_for: ClientFor) -> tuple[str, tuple[str, ...]]:
    """A valid access token for the credentials in ``path`` (cached), and its secrets.

    One exchange per file at a time: concurrent first requests wait for it and share its
    token instead of each exchanging the same credentials.
    """
    _, cached = _cached(path)
    if cached is None:
        async with _exchange_lock(path):
            return await _exchange_for(path, client_for)
    return cached.value, cached.secrets


async def _exchange_for(path: Path, client_for: ClientFor) -> tuple[str, tuple[str, ...]]:
    stamp, cached = _cached(path)  # exchanged while this request waited?
    if cached is not None:
        return cached.value, cached.secrets
    info = _load(path)
    kind = as_str(info.get("type"))
    secrets = tuple(
        value
        for name in ("refresh_token", "client_secret", "private_key", "private_key_id")
        if (value := as_str(info.get(name)))
    )
    if kind == "authorized_user":
        form = _refresh_form(info, path)
    elif kind == "service_account":
        form = _jwt_form(info, path)
    else:
        raise ProviderError(
            ErrorKind.AUTH,
            f"the credentials file {path} has type {kind or 'none'!r}; Vertex AI here takes "
            "'authorized_user' or 'service_account' (or an access token)",
        )
    token_uri = as_str(info.get("token_uri")) or GOOGLE_TOKEN_URI
    source = KeySource(origin=str(path), hint=CREDENTIALS_VARIABLE, secrets=secrets)
    value, lifetime = await _exchange(token_uri, form, source, client_for)
    with _cache_lock:
        _cache[(str(path), stamp)] = _Token(value, time.time() + lifetime, secrets)
    return value, secrets


def _require(info: Mapping[str, Any], names: tuple[str, ...], path: Path) -> list[str]:
    values = [as_str(info.get(name)) for name in names]
    missing = [name for name, value in zip(names, values, strict=True) if not value]
    if missing:
        raise ProviderError(
            ErrorKind.AUTH, f"the credentials file {path} lacks {', '.join(missing)}"
        )
    return values


def _refresh_form(info: Mapping[str, Any], path: Path) -> dict[str, str]:
    client_id, client_secret, refresh = _require(
        info, ("client_id", "client_secret", "refresh_token"), path
    )
    return {
        "grant_type": "refresh_token",
        "client_id": client_id,
        "client_secret": client_secret,
        "refresh_token": refresh,
    }


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt_form(info: Mapping[str, Any], path: Path) -> dict[str, str]:
    email, pem = _require(info, ("client_email", "private_key"), path)
    now = int(time.time())
    header: dict[str, str] = {"alg": "RS256", "typ": "JWT"}
    key_id = as_str(info.get("private_key_id"))
    if key_id:
        header["kid"] = key_id
    claims = {
        "iss": email,
        "scope": SCOPE,
        "aud": as_str(info.get("token_uri")) or GOOGLE_TOKEN_URI,
        "iat": now,
        "exp": now + 3600,
    }
    signing_input = (
        _b64url(json.dumps(header, separators=(",", ":")).encode())
        + "."
        + _b64url(json.dumps(claims, separators=(",", ":")).encode())
    )
    signature = _rs256(pem, signing_input.encode(), path)
    assertion = f"{signing_input}.{_b64url(signature)}"
    return {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}


VERTEX_EXTRA = "yoagent-providers[vertex]"
"""The extra that installs what signing a service account's JWT needs (``cryptography``)."""


def _rs256(pem: str, message: bytes, path: Path) -> bytes:
    """The RS256 signature (RSASSA-PKCS1-v1_5 with SHA-256) of ``message`` with the RSA
    private key in ``pem`` (PKCS#8 or PKCS#1), made by ``cryptography``, which is imported
    here: only a service-account key needs it."""
    try:
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
    except ImportError:
        raise ProviderError(
            ErrorKind.OTHER,
            f"signing with the service-account key in {path} needs the cryptography "
            f"package: pip install '{VERTEX_EXTRA}'",
        ) from None
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        # Its text may quote the key: it is not shown.
        key = None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ProviderError(
            ErrorKind.AUTH,
            f"the private key in {path} cannot be used: it is not an unencrypted RSA "
            "private key in PEM",
        )
    return key.sign(message, padding.PKCS1v15(), hashes.SHA256())


async def _exchange(
    token_uri: str, form: dict[str, str], source: KeySource, client_for: ClientFor
) -> tuple[str, int]:
    """POST ``form`` to the token endpoint; the access token and its lifetime in seconds."""
    secrets = (*source.secrets, *form.values())
    problem = url_problem(token_uri)
    if problem is not None:
        raise ProviderError(
            ErrorKind.AUTH, f"the token_uri in {source.origin} cannot be used: {problem}"
        )
    not_a_url = f"the token_uri in {source.origin} is not a valid URL"
    scrubbed = KeySource(source.origin, source.hint, secrets)
    with httpx_errors(scrubbed, lambda _: ProviderError(ErrorKind.AUTH, not_a_url), url=token_uri):
        async with client_for(token_uri).stream(
            "POST",
            token_uri,
            data=form,
            headers={"accept-encoding": ACCEPT_ENCODING},
            timeout=_TOKEN_TIMEOUT,
        ) as response:
            encoding = response.headers.get("content-encoding", "")
            raw = await read_prefix(response.aiter_raw(), encoding, _MAX_TOKEN_REPLY)
    if response.status_code in (400, 401, 403):
        try:
            detail = as_dict(parse_json(raw))
        except ValueError:
            detail = {}
        reason = as_str(detail.get("error_description")) or as_str(detail.get("error"))
        text = Scrubber(secrets).scrub(reason or f"status {response.status_code}")
        raise ProviderError(
            ErrorKind.AUTH,
            f"the token endpoint refused the credentials in {source.origin} "
            f"({response.status_code}): {text[:300]}",
            status=response.status_code,
        )
    if not 200 <= response.status_code < 300:
        raise from_http_status(
            response.status_code, response.headers, raw, KeySource(source.origin, "", secrets)
        )
    try:
        payload = as_dict(parse_json(raw))
    except ValueError:
        payload = {}
    token = as_str(payload.get("access_token"))
    if not token:
        raise ProviderError(
            ErrorKind.AUTH, f"the token endpoint for {source.origin} sent no access_token"
        )
    return token, as_int(payload.get("expires_in")) or 3600


def clear_token_cache() -> None:
    """Forget every cached access token (the next request exchanges again)."""
    with _cache_lock:
        _cache.clear()
