"""Keeping secrets out of cassettes: endpoints written with their credentials redacted, and
every known secret value replaced wherever else it turns up before a record is written.

The scrubbing itself is the floor's (:class:`yoagent.core.support.Scrubber`); a cassette
uses it with its own marker, :data:`REDACTED`, and with known values only: a key shape
matched in a recorded request would make the same request, replayed live, differ from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlunsplit

from yoagent.core import ModelConfig
from yoagent.core.support import Scrubber, is_credential_name, is_secret_variable, split_url

JsonObject = dict[str, Any]

REDACTED = "[REDACTED]"
"""What a cassette holds in place of a secret."""


def cassette_scrubber(secrets: Iterable[str] = ()) -> Scrubber:
    """The floor's scrubber as a cassette uses it: :data:`REDACTED`, known values only
    (those shorter than the floor's minimum are replaced only in their own field)."""
    return Scrubber(secrets, key_shapes=False, marker=REDACTED)


def redact_url(url: str) -> str:
    """``url`` with its userinfo and secret query values replaced by :data:`REDACTED` (the
    userinfo as the floor finds it: to the last ``@`` before the host)."""
    try:
        parts, userinfo, _ = split_url(url)
    except ValueError:
        return REDACTED if url else url
    netloc = f"{REDACTED}@{parts.netloc}" if userinfo else parts.netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(name, REDACTED if is_credential_name(name) else value) for name, value in pairs],
            safe="[]",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def endpoint_json(model: ModelConfig) -> dict[str, Any]:
    """Where a request went, as a cassette holds it: base URL and headers, credentials
    redacted (the API key itself is never part of it)."""
    return {
        "base_url": redact_url(model.base_url),
        "headers": {
            name: REDACTED if is_credential_name(name) else value
            for name, value in sorted(model.headers.items())
        },
    }


def with_model_secrets(scrubber: Scrubber, model: ModelConfig) -> Scrubber:
    """``scrubber`` grown by every credential ``model`` carries: its key (and each part of
    a ``a:b:c`` key), the values of credential headers, and the secret pieces of its URL
    (user name, password, credential query values, key-like path segments)."""
    key = model.api_key
    parts = [key, *key.split(":")] if key else []
    return scrubber.extended(parts, urls=[model.base_url], headers=model.headers)


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of environment variables named like credentials (the floor's rule,
    :func:`yoagent.core.support.is_secret_variable`): keys a provider may read by itself."""
    source = os.environ if environ is None else environ
    return [value for name, value in source.items() if is_secret_variable(name)]


def scrub_deltas(scrubber: Scrubber, deltas: list[JsonObject]) -> list[JsonObject]:
    """``deltas`` with every secret replaced as in the text they stream, not piece by piece.

    Each stream (a text, thinking or tool-call block, by its ``type`` and
    ``content_index``) is scrubbed as one text (:meth:`Scrubber.scrub_pieces`): a key
    split across two deltas is replaced whole, in the delta it starts in, and its rest is
    taken from the next. Deltas keep their number (each keeps its time), and a stream
    with no secret is written exactly as it came, so a replay streams the same pieces.
    """
    out: list[JsonObject] = []
    streams: dict[tuple[object, object], list[JsonObject]] = {}
    for delta in deltas:
        clean: JsonObject = {}
        for name, value in delta.items():
            if name == "delta" and isinstance(value, str):
                clean[name] = value
                streams.setdefault((delta.get("type"), delta.get("content_index")), []).append(
                    clean
                )
            else:
                clean[scrubber.scrub(name)] = scrubber.json(value)
        out.append(clean)
    for pieces in streams.values():
        texts = scrubber.scrub_pieces([piece["delta"] for piece in pieces])
        for piece, text in zip(pieces, texts, strict=True):
            piece["delta"] = text
    return out
