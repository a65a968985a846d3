"""A live source fetched through a cache file, so a process that starts often (or offline)
neither refetches every time nor goes unpriced.

1. A cache of this source younger than ``max_age`` (by modification time) is used with no
   request: origin ``cache``.
2. Otherwise the source is fetched and the cache rewritten (a temporary file, then a
   rename, so a reader never sees half a file): origin ``fetched``. A failed write is
   logged and reported; the fetched table is still used.
3. If the fetch fails, an expired cache no older than ``max_stale`` is used (``stale_cache``),
   failing that the bundled snapshot (``bundled``); the fetch error is logged and kept.

A cache whose age is unknown (modified in the future) is never fresh. A file that exists but
is unreadable, invalid, or caches another source is logged, ignored and reported
(``cache_problem``); only a missing file is silent. The cache records the source's display
URL and a SHA-256 of the full URL, never a query string that may hold a token.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio.to_thread

from yoagent.core.support import atomic_write, display_url

from ._errors import PriceError, PriceFetchError, PriceFileError
from ._json import as_object
from ._logging import logger
from ._models_dev import SkippedModel
from ._schema import parse_document
from ._sources import DEFAULT_FETCH_TIMEOUT, MODELS_DEV, PriceSource, check_timeout, fetch_prices
from ._table import PriceTable

_CACHE_MARKER = "yoagent_price_cache"


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheOptions:
    """``max_age``: a younger cache is used without a request (default a day).
    ``max_stale``: when the fetch fails, an expired cache up to this old is used (default a
    week; ``math.inf`` accepts any, even one of unknown age). ``timeout``: the fetch's, in
    seconds. All in seconds."""

    max_age: float = 24 * 3600.0
    max_stale: float = 7 * 24 * 3600.0
    timeout: float = DEFAULT_FETCH_TIMEOUT

    def __post_init__(self) -> None:
        for name in ("max_age", "max_stale"):
            value = getattr(self, name)
            if not value >= 0:
                raise ValueError(f"CacheOptions.{name} must be 0 or more seconds, got {value!r}")
        check_timeout(self.timeout)


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceOrigin:
    """Where live prices came from, and why when it was not a fresh fetch.

    ``kind``: ``fetched`` now, the fresh ``cache``, an expired ``stale_cache`` because the
    fetch failed, or the ``bundled`` snapshot because the fetch failed and no cache would
    do. ``age`` (seconds) for the cache kinds, ``None`` when unknown.
    """

    kind: Literal["fetched", "cache", "stale_cache", "bundled"]
    url: str
    age: float | None = None
    fetch_error: PriceFetchError | None = None
    cache_write_error: PriceError | None = None

    @property
    def fell_back(self) -> bool:
        """True when the fetch failed and only the bundled snapshot is left."""
        return self.kind == "bundled"

    def __str__(self) -> str:
        age = "of unknown age" if self.age is None else f"{_duration(self.age)} old"
        if self.kind == "fetched":
            text = f"fetched from {self.url}"
            if self.cache_write_error is not None:
                text += f" (the cache was not written: {self.cache_write_error})"
            return text
        if self.kind == "cache":
            return f"a cached copy of {self.url}, {age}"
        why = f"the fetch failed: {self.fetch_error}"
        if self.kind == "stale_cache":
            return f"an expired cached copy of {self.url}, {age}, because {why}"
        return f"the bundled snapshot, because {why}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheProblem:
    """A cache file that exists but could not be used (it was treated as absent)."""

    kind: Literal["unreadable", "invalid", "source_mismatch"]
    path: str
    detail: str

    def __str__(self) -> str:
        return f"price cache {self.path} {self.kind.replace('_', ' ')}: {self.detail}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedPrices:
    """What :func:`fetch_cached` found: the table to use (the snapshot when
    ``origin.fell_back``), where it came from, and what it left out."""

    table: PriceTable
    origin: PriceOrigin
    skipped: tuple[SkippedModel, ...] = ()
    ignored_fields: tuple[str, ...] = ()
    cache_problem: CacheProblem | None = None


@dataclass(frozen=True, slots=True)
class _Cached:
    table: PriceTable
    age: float | None


async def fetch_cached(
    cache_path: str | os.PathLike[str],
    source: PriceSource = MODELS_DEV,
    options: CacheOptions = CacheOptions(),
) -> CachedPrices:
    """Fetch ``source`` through the cache at ``cache_path``; never raises (see the module
    docs for the order). Installs nothing."""
    path = Path(cache_path)
    shown = display_url(source.url)
    cached, problem = await anyio.to_thread.run_sync(_read_cache, path, source.url)
    if cached is not None and cached.age is not None and cached.age < options.max_age:
        origin = PriceOrigin(kind="cache", url=shown, age=cached.age)
        return CachedPrices(
            table=cached.table,
            origin=origin,
            ignored_fields=cached.table.ignored_fields,
            cache_problem=problem,
        )
    try:
        report = await fetch_prices(source, timeout=options.timeout)
    except PriceFetchError as error:
        usable = cached is not None and (
            cached.age <= options.max_stale
            if cached.age is not None
            else math.isinf(options.max_stale)
        )
        logger.warning(
            "price fetch failed (%s); using %s",
            error,
            "the expired cache" if usable else "the bundled snapshot",
        )
        if usable and cached is not None:
            origin = PriceOrigin(kind="stale_cache", url=shown, age=cached.age, fetch_error=error)
            return CachedPrices(
                table=cached.table,
                origin=origin,
                ignored_fields=cached.table.ignored_fields,
                cache_problem=problem,
            )
        origin = PriceOrigin(kind="bundled", url=shown, fetch_error=error)
        return CachedPrices(table=PriceTable.bundled(), origin=origin, cache_problem=problem)
    write_error = await anyio.to_thread.run_sync(_write_cache, path, source.url, report.table)
    return CachedPrices(
        table=report.table,
        origin=PriceOrigin(kind="fetched", url=shown, cache_write_error=write_error),
        skipped=report.skipped,
        ignored_fields=report.ignored_fields,
        cache_problem=problem,
    )


def _read_cache(path: Path, url: str) -> tuple[_Cached | None, CacheProblem | None]:
    """The cache at ``path`` if it holds ``url``'s prices; every problem but absence is logged."""

    def problem(
        kind: Literal["unreadable", "invalid", "source_mismatch"], detail: str
    ) -> tuple[None, CacheProblem]:
        found = CacheProblem(kind=kind, path=str(path), detail=detail)
        logger.warning("ignoring the %s", found)
        return None, found

    try:
        modified = path.stat().st_mtime
        text = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return problem("unreadable", error.strerror or type(error).__name__)
    age = time.time() - modified
    try:
        data = as_object(json.loads(text))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        return problem("invalid", f"not valid JSON: {error}")
    if data is None or data.get(_CACHE_MARKER) != 1:
        return problem("invalid", f"not a yoagent price cache (no `{_CACHE_MARKER}: 1`)")
    if data.get("source_sha256") != _digest(url):
        return problem(
            "source_mismatch",
            f"it caches {data.get('source')!r}, not {display_url(url)!r}; use one cache per source",
        )
    try:
        entries, comment, ignored = parse_document(data.get("prices"), str(path))
        table = PriceTable(entries, comment=comment, ignored_fields=ignored)
        table.check_plausible(origin=str(path))
    except PriceError as error:
        return problem("invalid", str(error))
    return _Cached(table=table, age=age if age >= 0 else None), None


def _write_cache(path: Path, url: str, table: PriceTable) -> PriceError | None:
    """Write the cache atomically; a failure is logged and returned."""
    document = {
        _CACHE_MARKER: 1,
        "source": display_url(url),
        "source_sha256": _digest(url),
        "prices": table.to_document(),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(document))
    except OSError as error:
        failure = PriceFileError(str(path), f"cannot write the cache: {error.strerror or error}")
        logger.warning("%s", failure)
        return failure
    return None


def _digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"
