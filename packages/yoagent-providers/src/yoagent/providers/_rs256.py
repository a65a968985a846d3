"""RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signing from a PEM private key, in pure Python.

Vertex AI's service-account credentials are exchanged for an access token with a JWT
signed this way. Signing is one modular exponentiation over a key parsed from DER, which
does not justify a compiled cryptography dependency for one optional auth path; the
output is byte-for-byte OpenSSL's (``openssl dgst -sha256 -sign``, checked in the tests).
It runs once per token (about once an hour) on the machine that holds the key.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field

# DigestInfo prefix for SHA-256 (RFC 8017, section 9.2, note 1).
_SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")
_PEM = re.compile(
    r"-----BEGIN (RSA )?PRIVATE KEY-----(.+?)-----END (?:RSA )?PRIVATE KEY-----", re.DOTALL
)


class KeyFormatError(ValueError):
    """The text is not an RSA private key in PEM (PKCS#8 or PKCS#1)."""


@dataclass(frozen=True, slots=True)
class RsaKey:
    """The parts of an RSA private key that signing needs (CRT form); only the public
    modulus shows in a repr."""

    n: int
    p: int = field(repr=False)
    q: int = field(repr=False)
    dp: int = field(repr=False)
    dq: int = field(repr=False)
    qinv: int = field(repr=False)

    @property
    def size(self) -> int:
        """The modulus length in bytes."""
        return (self.n.bit_length() + 7) // 8


def _read(der: bytes, at: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER element at ``at``."""
    if at + 2 > len(der):
        raise KeyFormatError("truncated DER")
    tag, length = der[at], der[at + 1]
    at += 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or at + count > len(der):
            raise KeyFormatError("bad DER length")
        length = int.from_bytes(der[at : at + count], "big")
        at += count
    if at + length > len(der):
        raise KeyFormatError("truncated DER")
    return tag, at, at + length


def _children(der: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    items: list[tuple[int, int, int]] = []
    while start < end:
        item = _read(der, start)
        items.append(item)
        start = item[2]
    return items


def _rsa_private_key(der: bytes) -> RsaKey:
    tag, start, end = _read(der, 0)
    fields = _children(der, start, end) if tag == 0x30 else []
    if len(fields) < 9 or any(t != 0x02 for t, _, _ in fields[:9]):
        raise KeyFormatError("not an RSA private key")
    n, _e, _d, p, q, dp, dq, qinv = (int.from_bytes(der[s:e], "big") for _, s, e in fields[1:9])
    return RsaKey(n=n, p=p, q=q, dp=dp, dq=dq, qinv=qinv)


def load_private_key(pem: str) -> RsaKey:
    """The RSA key in ``pem`` (``BEGIN PRIVATE KEY`` or ``BEGIN RSA PRIVATE KEY``)."""
    match = _PEM.search(pem)
    if match is None:
        raise KeyFormatError("no PEM private key found")
    try:
        der = base64.b64decode("".join(match.group(2).split()), validate=True)
    except ValueError:
        raise KeyFormatError("the PEM body is not base64") from None
    if match.group(1):  # PKCS#1: the RSAPrivateKey itself
        return _rsa_private_key(der)
    tag, start, end = _read(der, 0)  # PKCS#8: version, algorithm, OCTET STRING key
    fields = _children(der, start, end) if tag == 0x30 else []
    if len(fields) < 3 or fields[2][0] != 0x04:
        raise KeyFormatError("not a PKCS#8 private key")
    _, key_start, key_end = fields[2]
    return _rsa_private_key(der[key_start:key_end])


def sign(key: RsaKey, message: bytes) -> bytes:
    """The RS256 signature of ``message``."""
    digest_info = _SHA256_PREFIX + hashlib.sha256(message).digest()
    padding = key.size - len(digest_info) - 3
    if padding < 8:
        raise KeyFormatError("the RSA key is too small")
    encoded = int.from_bytes(b"\x00\x01" + b"\xff" * padding + b"\x00" + digest_info, "big")
    # Chinese remainder theorem: two half-size exponentiations instead of one.
    m1 = pow(encoded, key.dp, key.p)
    m2 = pow(encoded, key.dq, key.q)
    h = (key.qinv * (m1 - m2)) % key.p
    return (m2 + h * key.q).to_bytes(key.size, "big")
