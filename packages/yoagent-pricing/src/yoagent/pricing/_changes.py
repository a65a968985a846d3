"""How two price tables differ, compared as billed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

from yoagent.core import ContextTier, CostConfig

Costs = Mapping[tuple[str, str], CostConfig]
"""``(provider, model) -> rates``: what a table bills."""

_Band = TypeVar("_Band", CostConfig, ContextTier)


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceChange:
    """One model whose price differs between two states.

    ``before`` / ``after`` are ``None`` where the model was, or became, unpriced.
    ``shadowed`` marks a change in a layer the user layer overrides for this model: it does
    not change what is billed until the override is cleared.
    """

    provider: str
    model: str
    before: CostConfig | None
    after: CostConfig | None
    shadowed: bool = False

    def __str__(self) -> str:
        name = f"{self.provider}/{self.model}: "
        before, after = self.before, self.after
        if before is None and after is None:
            text = "unpriced"
        elif before is None:
            assert after is not None
            text = f"new ({describe(after)})"
        elif after is None:
            text = f"no longer priced (was {describe(before)})"
        else:
            text = _difference(as_billed(before), as_billed(after))
        return name + text + (" [shadowed by the user layer]" if self.shadowed else "")


def diff(before: Costs, after: Costs) -> list[PriceChange]:
    """Every model whose billed price differs between ``before`` and ``after``, sorted."""
    changes: list[PriceChange] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old is None and new is None:
            continue
        if old is not None and new is not None and as_billed(old) == as_billed(new):
            continue
        changes.append(PriceChange(provider=key[0], model=key[1], before=old, after=new))
    return changes


def as_billed(cost: CostConfig) -> CostConfig:
    """``cost`` with every zero cache rate replaced by its band's input rate."""
    tiers = tuple(_band_as_billed(tier) for tier in cost.tiers)
    return replace(_band_as_billed(cost), tiers=tiers)


def _band_as_billed(band: _Band) -> _Band:
    return replace(
        band,
        cache_read=band.cache_read or band.input,
        cache_write=band.cache_write or band.input,
    )


def describe(cost: CostConfig) -> str:
    """``input 5, output 30, cache_read 0.5, cache_write 5, tiers [>272000: 10/45/1/10]``."""
    text = (
        f"input {cost.input:g}, output {cost.output:g}, "
        f"cache_read {cost.cache_read:g}, cache_write {cost.cache_write:g}"
    )
    return text + (f", tiers {_tiers(cost.tiers)}" if cost.tiers else "")


def _difference(before: CostConfig, after: CostConfig) -> str:
    parts = [
        f"{name} {getattr(before, name):g} -> {getattr(after, name):g}"
        for name in ("input", "output", "cache_read", "cache_write")
        if getattr(before, name) != getattr(after, name)
    ]
    if before.tiers != after.tiers:
        parts.append(f"tiers {_tiers(before.tiers)} -> {_tiers(after.tiers)}")
    return ", ".join(parts)


def _tiers(tiers: tuple[ContextTier, ...]) -> str:
    bands = [
        f">{t.above_prompt_tokens}: {t.input:g}/{t.output:g}/{t.cache_read:g}/{t.cache_write:g}"
        for t in tiers
    ]
    return "[" + "; ".join(bands) + "]"
