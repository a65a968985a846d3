"""How a Bedrock request authenticates, and which AWS region it is signed for.

Resolution, first match wins, all before anything is sent (a failure is an ``AUTH``
error that names where the credential came from, never its value):

1. an ``authorization`` header in ``ModelConfig.headers`` (any case): sent as it is;
2. ``ModelConfig.api_key``: ``access:secret[:token]`` signs with SigV4, anything without
   a ``:`` is a Bedrock API key sent as ``Bearer``;
3. ``AWS_BEARER_TOKEN_BEDROCK`` (a Bedrock API key; ``ModelConfig.key_variable`` names
   another variable);
4. ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``);
5. the shared files (``AWS_SHARED_CREDENTIALS_FILE`` or ``~/.aws/credentials``, then
   ``AWS_CONFIG_FILE`` or ``~/.aws/config``), profile ``AWS_PROFILE`` /
   ``AWS_DEFAULT_PROFILE`` / ``default``: static keys and session tokens only (roles, SSO
   and ``credential_process`` need the AWS CLI or an SDK; the error says how to export them).

The environment is read on every request, so rotated credentials are picked up.
"""

from __future__ import annotations

import configparser
import os
import re
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from yoagent.core import ErrorKind, ModelConfig, ProviderError
from yoagent.core.support import warn_once

from ._logging import logger
from ._sigv4 import AwsCredentials

BEARER_VARIABLE = "AWS_BEARER_TOKEN_BEDROCK"
ACCESS_KEY_VARIABLE = "AWS_ACCESS_KEY_ID"
SECRET_KEY_VARIABLE = "AWS_SECRET_ACCESS_KEY"
SESSION_TOKEN_VARIABLE = "AWS_SESSION_TOKEN"
REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")

AWS_DNS_SUFFIXES: tuple[str, ...] = (
    # Each partition's dnsSuffix and dualStackDnsSuffix (botocore's partitions.json).
    "amazonaws.com",
    "api.aws",
    "amazonaws.com.cn",
    "api.amazonwebservices.com.cn",
    "amazonaws.eu",
    "api.amazonwebservices.eu",
    "c2s.ic.gov",
    "api.aws.ic.gov",
    "sc2s.sgov.gov",
    "api.aws.scloud",
    "cloud.adc-e.uk",
    "api.cloud-aws.adc-e.uk",
    "csp.hci.ic.gov",
    "api.aws.hci.ic.gov",
    # Interface VPC endpoints: vpce-<id>.bedrock-runtime.<region>.vpce.amazonaws.com.
    "vpce.amazonaws.com",
    "vpce.amazonaws.com.cn",
    "vpce.amazonaws.eu",
)
"""Host suffixes under which ``bedrock-runtime[-fips].<region>.`` names the region."""

_REGION = re.compile(r"[a-z]{2,}(?:-[a-z]+)+-\d+")
_RUNTIME_LABELS = ("bedrock-runtime", "bedrock-runtime-fips")
_SUFFIXES_LONGEST_FIRST = sorted(AWS_DNS_SUFFIXES, key=len, reverse=True)

_BEARER_PREFIXES = ("bedrock-api-key-", "ABSK")
_BASE64 = re.compile(r"[A-Za-z0-9+/_=-]+")
_SECRET_SHAPE = re.compile(r"[A-Za-z0-9+/]{40}")
_SENDABLE = re.compile(r"[\x21-\x7e]+")
_STATIC_KEYS = ("aws_access_key_id", "aws_secret_access_key")
_OTHER_SOURCES = (
    "role_arn",
    "sso_session",
    "sso_start_url",
    "credential_process",
    "web_identity_token_file",
    "credential_source",
    "login_session",
)


@dataclass(frozen=True, slots=True)
class HeaderAuth:
    """The user's own ``authorization`` header is sent alone: nothing to add."""


@dataclass(frozen=True, slots=True)
class BearerAuth:
    """A Bedrock API key, sent as ``Authorization: Bearer``."""

    token: str = field(repr=False)
    origin: str


@dataclass(frozen=True, slots=True)
class SigV4Auth:
    """AWS credentials to sign each request with; ``profile`` when read from the files."""

    credentials: AwsCredentials
    origin: str
    profile: str | None = None


BedrockAuth = HeaderAuth | BearerAuth | SigV4Auth


def _auth_error(message: str) -> ProviderError:
    return ProviderError(ErrorKind.AUTH, message)


def _sendable(value: str, what: str) -> str:
    """``value`` if it can go in a header (visible ASCII, no spaces), else an AUTH error."""
    if not _SENDABLE.fullmatch(value):
        raise _auth_error(
            f"{what} cannot be sent: it holds whitespace, a control character or a "
            "non-ASCII character; check its value"
        )
    return value


def checked_bearer(token: str, origin: str) -> BearerAuth:
    """A Bedrock API key from ``origin``, refused when it is plainly something else."""
    what = f"the Bedrock API key from {origin}"
    _sendable(token, what)
    if token.startswith(("AKIA", "ASIA")):
        raise _auth_error(
            f"{what} is an AWS access key id, not a Bedrock API key; pass AWS credentials "
            "as access:secret[:token] or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        )
    prefix = next((p for p in _BEARER_PREFIXES if token.startswith(p)), "")
    if not _BASE64.fullmatch(token[len(prefix) :]):
        raise _auth_error(f"{what} holds characters a Bedrock API key never has")
    if not prefix:
        if _SECRET_SHAPE.fullmatch(token):
            raise _auth_error(
                f"{what} looks like an AWS secret access key on its own; pass "
                "access:secret[:token] instead"
            )
        warn_once(
            logger,
            f"bedrock-bearer-prefix:{origin}",
            "the Bedrock API key from %s does not start with bedrock-api-key- or ABSK; "
            "sending it anyway",
            origin,
        )
    return BearerAuth(token=token, origin=origin)


def _static(access: str, secret: str, token: str, origin: str, token_origin: str) -> AwsCredentials:
    _sendable(access, f"the access key id from {origin}")
    if not secret or secret != secret.strip():
        raise _auth_error(f"the secret access key from {origin} is empty or padded with spaces")
    if token:
        _sendable(token, f"the session token from {token_origin}")
    elif access.startswith("ASIA"):
        raise _auth_error(
            f"the access key id from {origin} is temporary (ASIA…) but no session token "
            f"came with it; set {token_origin}"
        )
    return AwsCredentials(access, secret, token or None)


def _from_api_key(key: str) -> SigV4Auth | BearerAuth:
    origin = "ModelConfig.api_key"
    if ":" not in key:
        return checked_bearer(key, origin)
    parts = key.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise _auth_error(f"{origin} holds a ':' but is not access:secret or access:secret:token")
    token = parts[2] if len(parts) == 3 else ""
    credentials = _static(parts[0], parts[1], token, origin, f"{origin} (access:secret:token)")
    return SigV4Auth(credentials=credentials, origin=origin)


def _env(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    try:
        value.encode()
    except UnicodeEncodeError:  # undecodable bytes surface as lone surrogates
        raise _auth_error(f"{name} is not valid text; check its value") from None
    return value


def resolve_auth(config: ModelConfig, env: Mapping[str, str] | None = None) -> BedrockAuth:
    """How to authenticate a request for ``config`` (see the module docstring)."""
    environ = os.environ if env is None else env
    if any(name.lower() == "authorization" for name in config.headers):
        return HeaderAuth()
    key = config.api_key.strip()
    if key:
        return _from_api_key(key)
    bearer_variable = config.key_variable or BEARER_VARIABLE
    bearer = _env(environ, bearer_variable)
    if bearer:
        return checked_bearer(bearer, bearer_variable)
    access = _env(environ, ACCESS_KEY_VARIABLE)
    secret = _env(environ, SECRET_KEY_VARIABLE)
    if access or secret:
        if not access:
            raise _auth_error(f"{SECRET_KEY_VARIABLE} is set but {ACCESS_KEY_VARIABLE} is not")
        if not secret:
            raise _auth_error(f"{ACCESS_KEY_VARIABLE} is set but {SECRET_KEY_VARIABLE} is not")
        token = _env(environ, SESSION_TOKEN_VARIABLE)
        credentials = _static(access, secret, token, ACCESS_KEY_VARIABLE, SESSION_TOKEN_VARIABLE)
        return SigV4Auth(credentials=credentials, origin=ACCESS_KEY_VARIABLE)
    found = SharedFiles(environ).credentials()
    if found is not None:
        return found
    raise _auth_error(
        "no AWS credentials for Bedrock: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), "
        "or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
        "temporary credentials), or configure a profile in ~/.aws/credentials, or pass "
        "ModelConfig.api_key as access:secret[:token]"
    )


_FileIdentity = tuple[int, int, int, int, int]
_SECTIONS: dict[tuple[str, tuple[str, ...]], tuple[_FileIdentity, dict[str, str] | None]] = {}
"""The sections read from the shared files, by path and section names, with the file's
identity (device, inode, size, modification and change times) when it was read. Every request
asks for the profile again (credentials rotate); parsing the two files each time cost
≈ 150 µs of CPU per request, a stat of each costs ≈ 2. A file rewritten, replaced or
touched is read again; one that fails to parse is never kept (it fails each time)."""
_SECTIONS_KEPT = 32
_RACY_NS = 2_000_000_000
"""A file modified (or its times set: ``cp -p`` sets an old mtime, not an old ctime) this
recently is not kept: a file system whose timestamps are coarse
(ext4 before Linux 6.13 ticks every few ms, HFS+ every second, FAT every two) could
give a second edit of the same size the same times (git's "racily clean" case)."""


class SharedFiles:
    """The AWS CLI's shared credentials and config files, for one profile."""

    def __init__(self, env: Mapping[str, str]) -> None:
        home = env.get("HOME") or os.path.expanduser("~")
        self.credentials_path = Path(
            env.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.join(home, ".aws", "credentials")
        ).expanduser()
        self.config_path = Path(
            env.get("AWS_CONFIG_FILE") or os.path.join(home, ".aws", "config")
        ).expanduser()
        explicit = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE")
        self.profile = (explicit or "default").strip()
        self.explicit = bool(explicit)

    def _section(self, path: Path, names: tuple[str, ...]) -> dict[str, str] | None:
        try:
            info = path.stat()
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        key = (str(path), names)
        known = _SECTIONS.get(key)
        if known is not None and known[0] == identity:
            return None if known[1] is None else dict(known[1])
        found = self._parse(path, names)
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _RACY_NS:
            if len(_SECTIONS) >= _SECTIONS_KEPT:
                _SECTIONS.clear()
            _SECTIONS[key] = (identity, found)
        return None if found is None else dict(found)

    def _parse(self, path: Path, names: tuple[str, ...]) -> dict[str, str] | None:
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            with path.open(encoding="utf-8") as handle:
                parser.read_file(handle)
        except configparser.MissingSectionHeaderError as error:
            raise _auth_error(
                f"cannot read {path}: line {error.lineno} comes before any [section]"
            ) from None
        except configparser.ParsingError as error:
            lines = ", ".join(str(number) for number, _ in error.errors)
            raise _auth_error(f"cannot read {path}: line {lines} is not 'name = value'") from None
        except (OSError, UnicodeDecodeError, configparser.Error) as error:
            raise _auth_error(f"cannot read {path} ({type(error).__name__})") from None
        for name in names:
            if parser.has_section(name):
                return {k: v.strip() for k, v in parser.items(name, raw=True)}
        return None

    def _config_section(self) -> dict[str, str] | None:
        names = (f"profile {self.profile}",)
        if self.profile == "default":
            names = ("default", *names)
        return self._section(self.config_path, names)

    def credentials(self) -> SigV4Auth | None:
        """The profile's static credentials, ``None`` when no file has the profile."""
        sources = (
            (self.credentials_path, self._section(self.credentials_path, (self.profile,))),
            (self.config_path, self._config_section()),
        )
        seen = False
        for path, section in sources:
            if section is None:
                continue
            seen = True
            access = section.get("aws_access_key_id", "")
            secret = section.get("aws_secret_access_key", "")
            if not access and not secret:
                continue
            where = f"profile {self.profile!r} in {path}"
            for name, value in zip(_STATIC_KEYS, (access, secret), strict=True):
                if not value:
                    raise _auth_error(f"{where} has no {name}")
            token = section.get("aws_session_token") or section.get("aws_security_token", "")
            credentials = _static(access, secret, token, where, f"aws_session_token ({where})")
            return SigV4Auth(credentials=credentials, origin=where, profile=self.profile)
        if seen:
            config = self._config_section() or {}
            kind = next((k for k in _OTHER_SOURCES if k in config), None)
            if kind is not None:
                raise _auth_error(
                    f"profile {self.profile!r} gets its credentials through {kind}, which "
                    'yoagent does not run; export them first, e.g. eval "$(aws configure '
                    f'export-credentials --profile {self.profile} --format env)"'
                )
            raise _auth_error(f"profile {self.profile!r} holds no aws_access_key_id")
        if self.explicit:
            raise _auth_error(
                f"profile {self.profile!r} (AWS_PROFILE) is in neither {self.credentials_path} "
                f"nor {self.config_path}"
            )
        return None

    def region(self) -> str:
        """The profile's ``region`` from the config file, or ``""``."""
        section = self._config_section() or {}
        return section.get("region", "")


def runtime_url(region: str) -> str:
    """The Bedrock runtime endpoint of ``region`` (the host :func:`region_from_host` reads)."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def region_from_host(host: str) -> str | None:
    """The region in a Bedrock runtime host name (``bedrock-runtime.<region>.<suffix>``)."""
    name = host.lower().rstrip(".")
    for suffix in _SUFFIXES_LONGEST_FIRST:
        if not name.endswith("." + suffix):
            continue
        labels = name[: -len(suffix) - 1].split(".")
        if len(labels) >= 2 and labels[-2] in _RUNTIME_LABELS and _REGION.fullmatch(labels[-1]):
            return labels[-1]
        return None
    return None


def resolve_region(host: str, env: Mapping[str, str] | None = None) -> str:
    """The region to sign for: from the host, else AWS_REGION, AWS_DEFAULT_REGION, the profile."""
    environ = os.environ if env is None else env
    found = region_from_host(host)
    if found:
        return found
    for name in REGION_VARIABLES:
        value = _env(environ, name)
        if value:
            return value
    region = SharedFiles(environ).region()
    if region:
        return region
    raise _auth_error(
        f"cannot tell which AWS region to sign for: {host!r} is not a "
        "bedrock-runtime.<region>.amazonaws.com host; set AWS_REGION"
    )
