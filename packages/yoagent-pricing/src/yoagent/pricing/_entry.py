"""One model's price with where it came from, and the checks every entry passes."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from yoagent.core import ContextTier, CostConfig

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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


def _is_iso_date(text: str) -> bool:
    if _ISO_DATE.match(text) is None:
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True
