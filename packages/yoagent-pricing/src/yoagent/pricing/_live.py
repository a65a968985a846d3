"""Live prices over the bundled snapshot, opted into process-wide (the only requests
pricing ever makes, and only because these were called)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from yoagent.core.support import display_url

from ._cache import CacheOptions, CacheProblem, PriceOrigin, fetch_cached
from ._changes import PriceChange
from ._errors import PriceFetchError
from ._layers import enable_with
from ._logging import logger
from ._models_dev import SkippedModel
from ._sources import DEFAULT_FETCH_TIMEOUT, MODELS_DEV, PriceSource, check_timeout, fetch_prices


@dataclass(frozen=True, slots=True, kw_only=True)
class LivePrices:
    """What :func:`enable_live` / :func:`enable_live_cached` installed.

    ``origin`` says where the prices came from and, when it was not a fresh fetch, why
    (``str(origin)`` is a sentence to show). ``changes`` are the models whose billed price
    changed; ``skipped`` the models.dev models that could not be mapped; ``ignored_fields``
    what a parse ignored; ``cache_problem`` a cache file that existed but was unusable.
    """

    origin: PriceOrigin
    changes: tuple[PriceChange, ...] = ()
    skipped: tuple[SkippedModel, ...] = ()
    ignored_fields: tuple[str, ...] = ()
    cache_problem: CacheProblem | None = None

    @property
    def fell_back(self) -> bool:
        """The fetch failed and no cache would do: only the bundled snapshot is in effect."""
        return self.origin.fell_back


async def enable_live(
    source: PriceSource = MODELS_DEV,
    *,
    timeout: float = DEFAULT_FETCH_TIMEOUT,  # noqa: ASYNC109 (a deadline that falls back, not a cancel)
) -> LivePrices:
    """Fetch ``source`` now and install it over the bundled snapshot, process-wide.

    The snapshot stays underneath: the fetched table wins for every model it lists, the
    rest keep the snapshot's price. If the fetch fails (unreachable, ``timeout`` seconds
    passed, an error status, not price data), the snapshot alone is enabled, a WARNING
    says why, and ``fell_back`` is true with the reason in ``origin.fetch_error``. Never
    raises for a fetch failure. For a process that starts often, prefer
    :func:`enable_live_cached`.
    """
    check_timeout(timeout)
    try:
        report = await fetch_prices(source, timeout=timeout)
    except PriceFetchError as error:
        logger.warning("price fetch failed (%s); falling back to the bundled snapshot", error)
        origin = PriceOrigin(kind="bundled", url=display_url(source.url), fetch_error=error)
        return LivePrices(origin=origin, changes=tuple(enable_with(None)))
    return LivePrices(
        origin=PriceOrigin(kind="fetched", url=display_url(source.url)),
        changes=tuple(enable_with(report.table)),
        skipped=report.skipped,
        ignored_fields=report.ignored_fields,
    )


async def enable_live_cached(
    cache_path: str | os.PathLike[str],
    source: PriceSource = MODELS_DEV,
    options: CacheOptions = CacheOptions(),  # noqa: B008 (frozen)
) -> LivePrices:
    """:func:`enable_live` through a cache file (see :func:`fetch_cached`): a fresh cache
    is used with no request, a failed fetch falls back to an expired cache within
    ``options.max_stale``, then to the bundled snapshot."""
    cached = await fetch_cached(cache_path, source, options)
    fetched = None if cached.origin.fell_back else cached.table
    return LivePrices(
        origin=cached.origin,
        changes=tuple(enable_with(fetched)),
        skipped=cached.skipped,
        ignored_fields=cached.ignored_fields,
        cache_problem=cached.cache_problem,
    )
