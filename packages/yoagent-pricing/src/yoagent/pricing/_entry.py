"""One model's price with where it came from, and the checks every entry passes."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from yoagent.core import ContextTier, CostConfig

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

MAX_PLAUSIBLE_RATE = 10_000.0
"""The highest rate, in USD per million tokens, a fetched table may hold.

The dearest list price so far is $600 per million output tokens (o1-pro); a rate past this
bound is a data error (a unit mix-up, a corrupted or hostile table), never a price. Fetched
tables (models.dev, a price file at a URL, their cache) refuse it; a table you install
yourself may hold it, with a warning. Even at the bound a million-token turn costs $10,000,
a finite figure: a rate near the float maximum would make the next large turn cost ``inf``.
"""

_BAND_RATES = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceEntry:
    """The rates a model bills at (``cost``) and their provenance.

    ``cache_write_at_input`` states that the vendor charges no cache-write premium and
    every band writes ``cache_write`` out as its own ``input`` rate (checked); the price
    audit then accepts an upstream table that leaves ``cache_write`` out. ``source`` is the
    vendor page the rates were checked against, ``verified`` the day (``YYYY-MM-DD``) they
    were, ``note`` a caveat, and ``absent_upstream`` why models.dev lacks the model.
    """

    cost: CostConfig
    cache_write_at_input: bool = False
    note: str | None = None
    source: str | None = None
    verified: str | None = None
    absent_upstream: str | None = None


def entry_problems(provider: str, model: str, entry: PriceEntry) -> list[str]:
    """What is wrong with ``entry`` stored under ``provider/model`` (empty when it is valid).

    Rates and tier order are already checked by :class:`~yoagent.core.CostConfig`; this adds
    the ids, the ``verified`` date and the ``cache_write_at_input`` promise.
    """
    name = f"{provider}/{model}"
    problems: list[str] = []
    if not provider.strip() or not model.strip():
        problems.append(f"{name!r}: the provider and model id must be non-empty")
    if entry.verified is not None and not _is_iso_date(entry.verified):
        problems.append(f"{name}: verified is {entry.verified!r}; expected a YYYY-MM-DD date")
    if entry.cache_write_at_input:
        bands: tuple[CostConfig | ContextTier, ...] = (entry.cost, *entry.cost.tiers)
        for band in bands:
            if band.cache_write != band.input:
                problems.append(
                    f"{name}: cache_write_at_input is set, but a band has cache_write "
                    f"{band.cache_write} and input {band.input}; write the input rate out"
                )
                break
    return problems


def implausible_rate(name: str, rate: float) -> str | None:
    """Why a source's ``name`` rate is refused as a data error, or ``None`` (a mapped
    source skips the model with this reason)."""
    if rate <= MAX_PLAUSIBLE_RATE:
        return None
    return (
        f"`{name}` is {rate:g} USD per million tokens, above the plausible "
        f"{MAX_PLAUSIBLE_RATE:g}: refused as a data error"
    )


def implausible_rates(provider: str, model: str, entry: PriceEntry) -> list[str]:
    """Every rate of ``entry`` (tiers included) above :data:`MAX_PLAUSIBLE_RATE`, each as
    ``provider/model: field is N USD per million tokens, above the plausible 10000``."""
    bands: tuple[CostConfig | ContextTier, ...] = (entry.cost, *entry.cost.tiers)
    found: list[str] = []
    for index, band in enumerate(bands):
        where = "" if index == 0 else f"tiers[{index - 1}]."
        for name in _BAND_RATES:
            rate = getattr(band, name)
            if rate > MAX_PLAUSIBLE_RATE:
                found.append(
                    f"{provider}/{model}: {where}{name} is {rate:g} USD per million tokens, "
                    f"above the plausible {MAX_PLAUSIBLE_RATE:g}"
                )
    return found


def _is_iso_date(text: str) -> bool:
    if _ISO_DATE.match(text) is None:
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True
