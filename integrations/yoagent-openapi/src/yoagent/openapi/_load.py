"""Reading an OpenAPI document from text, a file or a URL into plain JSON-shaped data.

JSON is parsed with :mod:`json`; anything else with PyYAML's safe loader (its C version
when PyYAML was built with libyaml). Inputs are bounded: a document larger than
``MAX_DOCUMENT_BYTES`` is refused before it is parsed.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
from pathlib import Path
from typing import Any, Final, cast
from urllib.parse import urlsplit

import httpx
import yaml

from yoagent.core.support import display_url, http_client

from ._errors import OpenApiError, httpx_errors

MAX_DOCUMENT_BYTES: Final = 32 * 1024 * 1024
"""The largest document read (32 MiB: the largest public API descriptions are ~15 MiB)."""

FETCH_TIMEOUT: Final = 30.0
"""Seconds allowed for fetching a document by URL."""

_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_text(text: str, *, origin: str) -> dict[str, Any]:
    """The document in ``text`` (JSON or YAML) as a dict; ``origin`` names it in errors."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise OpenApiError(f"{origin}: the document is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        data = _parse(text)
    except (ValueError, yaml.YAMLError) as error:
        raise OpenApiError(f"{origin}: not valid JSON or YAML ({_first_line(error)})") from None
    except RecursionError:
        raise OpenApiError(f"{origin}: the document is nested too deeply to read") from None
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise OpenApiError(f"{origin}: the document is a {kind}, not a mapping")
    return _string_keys(data, origin)  # pyright: ignore[reportUnknownArgumentType]


def _parse(text: str) -> Any:
    if text.lstrip().startswith(("{", "[")):
        # JSON reads much faster; but YAML's flow style starts with "{" too.
        with contextlib.suppress(ValueError):
            return json.loads(text)
    return yaml.load(text, Loader=_SafeLoader)


def read_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    """The document in the file at ``path`` and the name used for it in errors."""
    file = Path(path)
    origin = file.name or str(file)
    try:
        size = file.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise OpenApiError(f"{origin}: the document is larger than {MAX_DOCUMENT_BYTES} bytes")
        raw = file.read_bytes()
    except OSError as error:
        raise OpenApiError(f"cannot read {file}: {error.strerror or error}") from None
    return parse_text(_decode(raw, origin), origin=origin), origin


async def fetch(url: str, client: httpx.AsyncClient | None) -> tuple[str, str]:
    """The text of the document at ``url`` (``client`` when given, else a client of its
    own), and the URL it came from after redirects; :func:`parse_text` reads it.

    Errors name the URL by its origin only: its path or query may hold a key.
    """
    origin = display_url(url, path=False)
    if urlsplit(url).scheme not in ("http", "https"):
        raise OpenApiError(f"cannot fetch {origin}: only http and https URLs are fetched")
    bound = f"within {FETCH_TIMEOUT:g} s" if client is None else "within the client's timeout"
    with httpx_errors(
        lambda why: OpenApiError(f"cannot fetch the document from {origin}: {why}"),
        timed_out=lambda: OpenApiError(
            f"cannot fetch the document from {origin}: no answer {bound}"
        ),
    ):
        if client is not None:
            raw, final = await _get_capped(client, url)
        else:
            async with http_client(timeout=FETCH_TIMEOUT) as own:
                raw, final = await _get_capped(own, url)
    return _decode(raw, origin), final


async def _get_capped(client: httpx.AsyncClient, url: str) -> tuple[bytes, str]:
    origin = display_url(url, path=False)
    async with client.stream("GET", url, follow_redirects=True) as response:
        if response.status_code // 100 != 2:
            raise OpenApiError(
                f"cannot fetch the document from {origin}: HTTP {response.status_code}"
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise OpenApiError(
                    f"{origin}: the document is larger than {MAX_DOCUMENT_BYTES} bytes"
                )
            chunks.append(chunk)
        return b"".join(chunks), str(response.url)


def _decode(raw: bytes, origin: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise OpenApiError(f"{origin}: the document is not UTF-8 text") from None


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _string_keys(data: dict[Any, Any], origin: str) -> dict[str, Any]:
    """YAML allows non-string keys (``200:`` is an int) and dates; JSON and OpenAPI do not.

    Keys are turned into strings at every level, so ``responses: {200: ...}`` and a
    status written ``"200"`` read the same. Shared YAML aliases stay shared (a node seen
    twice is converted once), so an alias-heavy document costs no more than its text.
    """
    seen: dict[int, Any] = {}

    def convert(node: Any) -> Any:
        known = seen.get(id(node))
        if known is not None:
            return known
        if isinstance(node, dict):
            mapping = cast(dict[Any, Any], node)
            out: dict[str, Any] = {}
            seen[id(mapping)] = out
            for key, value in mapping.items():
                out[_key(key)] = convert(value)
            return out
        if isinstance(node, list):
            sequence = cast(list[Any], node)
            items: list[Any] = []
            seen[id(sequence)] = items
            items.extend(convert(item) for item in sequence)
            return items
        if isinstance(node, datetime.date):  # YAML reads 2024-01-31 as a date; JSON has none
            return node.isoformat()
        return node

    try:
        return convert(data)
    except RecursionError:
        raise OpenApiError(f"{origin}: the document is nested too deeply to read") from None


def _key(key: object) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)
