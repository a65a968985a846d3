"""Prices for the status line and ``/cost``: yoagent-pricing's layers, switched on at start-up.

``pricing`` (``--pricing`` or the config key) says where prices come from:

- ``bundled`` (the default): the snapshot yoagent-pricing ships (offline, reproducible);
- ``live``: a live table over the snapshot, fetched through a cache file in the user cache
  folder (a day's cache is used with no request); models.dev by default, or the price file
  at ``prices_url``. A failed fetch falls back to an expired cache, then to the snapshot,
  and says why;
- ``off``: the snapshot is not enabled, so nothing is priced — except what
  ``YOAGENT_PRICES`` lists (yoagent-pricing reads that variable on its own).

The rest is for ``/cost``: why a model has no price, and a ``YOAGENT_PRICES`` that was
refused.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

import platformdirs

from yoagent.core import ModelConfig
from yoagent.pricing import (
    MODELS_DEV,
    PRICES_ENV_VAR,
    CacheOptions,
    PriceSource,
    enable_bundled,
    enable_live_cached,
    env_override_status,
    price_key,
    pricing_enabled,
    resolved,
)

LIVE_FETCH_TIMEOUT = 5.0
"""Seconds a live fetch may take at start-up before the cache or the snapshot is used."""


class PricingMode(StrEnum):
    """Where prices come from (see the module docstring)."""

    BUNDLED = "bundled"
    LIVE = "live"
    OFF = "off"


def price_cache_file() -> Path:
    """``<user cache folder>/yoagent/prices.json``: the live table's cache."""
    return Path(platformdirs.user_cache_dir("yoagent", appauthor=False)) / "prices.json"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _pricing_warnings() -> Generator[list[str]]:
    """While inside, yoagent-pricing's warnings are collected (to be said once, here)."""
    logger = logging.getLogger("yoagent.pricing")
    handler = _Collect()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


async def enable_prices(
    mode: PricingMode, *, cache_file: Path | None = None, prices_url: str | None = None
) -> list[str]:
    """Turn pricing on as ``mode`` says, process-wide; returns the warnings to show.

    A ``YOAGENT_PRICES`` that was refused (or that yoagent-pricing warns about) is a
    warning in every mode. ``live`` never fails: where the live table came from is a
    warning when it is not a fresh one (an expired cache, or the snapshot because the
    fetch failed), with the reason; what yoagent-pricing says about a table fetched now
    (the models it prices unlike the snapshot) is passed on, once, not again on every
    start that reads it from the cache. Each thing is said once: yoagent-pricing's own log
    lines for what is said here are held back.
    """
    with _pricing_warnings() as logged:
        status = env_override_status()  # reads YOAGENT_PRICES now
    problem = env_override_problem()
    warnings = [] if problem is None else [problem]
    warnings += _not_covered(logged, [str(status.error)] if status.error else [])
    if mode is PricingMode.BUNDLED:
        with _pricing_warnings() as logged:
            enable_bundled()
        warnings += _not_covered(logged, [])
    elif mode is PricingMode.LIVE:
        warnings += await _enable_live(cache_file or price_cache_file(), prices_url)
    return warnings


def _not_covered(logged: list[str], covered: list[str]) -> list[str]:
    """The logged warnings that say more than ``covered``, each as a ``prices:`` warning."""
    return [
        f"prices: {message}"
        for message in logged
        if not any(text and text in message for text in covered)
    ]


async def _enable_live(cache_file: Path, prices_url: str | None) -> list[str]:
    source = PriceSource.price_file(prices_url) if prices_url else MODELS_DEV
    with _pricing_warnings() as logged:
        live = await enable_live_cached(
            cache_file, source, CacheOptions(timeout=LIVE_FETCH_TIMEOUT)
        )
    warnings: list[str] = []
    covered: list[str] = []
    origin = live.origin
    if origin.fell_back or origin.kind == "stale_cache":
        warnings.append(f"prices: using {origin}")
        covered.append(str(origin.fetch_error))
    if live.cache_problem is not None:
        warnings.append(f"prices: ignored the {live.cache_problem}")
        covered.append(str(live.cache_problem))
    if origin.kind == "fetched":  # a cached table's were said when it was fetched
        warnings += _not_covered(logged, covered)
    return warnings


def env_override_problem() -> str | None:
    """What was wrong with ``YOAGENT_PRICES`` when yoagent-pricing refused it, else ``None``."""
    status = env_override_status()
    if status.state != "rejected":
        return None
    return f"{PRICES_ENV_VAR} ({status.source}) was ignored: {status.error}"


def why_unpriced(model: ModelConfig, mode: PricingMode) -> str:
    """Why ``model``'s usage has no cost, in a sentence that says what to do."""
    if not pricing_enabled():
        if mode is PricingMode.OFF:
            return 'pricing is off (pricing = "off" or --pricing off)'
        return f"no prices are in effect (set {PRICES_ENV_VAR}, or --pricing bundled)"
    key = price_key(model.provider)
    if key is None:
        return (
            f"{model.provider} models are never priced from the price tables (a gateway, "
            "local server or custom endpoint bills its own prices); "
            "--provider with a vendor's name prices a vendor's model behind a proxy"
        )
    if resolved().entry(key, model.id) is None:
        return (
            f"the price tables have no entry for {key}/{model.id}; add one with "
            f"{PRICES_ENV_VAR} (a price file's path or JSON, see docs/pricing.md)"
        )
    return (
        f"{key}/{model.id} is priced now, but part of this conversation ran at no known "
        "price (another model, a sub-agent or a summary)"
    )
