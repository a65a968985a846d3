"""models.dev's ``api.json`` mapped into a :class:`PriceTable` (pure: no request made here).

The document is ``{provider: {"models": {id: {"cost": {...}}}}}``. ``cost`` maps directly
(``input``, ``output``, ``cache_read``, ``cache_write``; a missing cache rate bills at the
input rate); context bands come from ``tiers`` (``{"tier": {"type": "context", "size": N},
...rates}``), or when that is absent from the older ``context_over_200k`` (one band above
200,000 prompt tokens). Provider ``alibaba`` is our ``qwen``.

A model whose cost says something :class:`~yoagent.core.CostConfig` cannot express is
skipped with the reason, never approximated: an unknown cost key, a ``reasoning`` rate
other than ``output`` (or 0), a band that is not by context size, a rate that is not a
finite non-negative number, a rate above :data:`~yoagent.pricing.MAX_PLAUSIBLE_RATE` (a data
error, never a price). Audio rates are ignored: yoagent sends text.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from yoagent.core import ContextTier, CostConfig

from ._entry import PriceEntry, implausible_rate
from ._errors import PriceDataError
from ._json import as_array, as_object
from ._table import PriceTable

MODELS_DEV_URL = "https://models.dev/api.json"

_PROVIDER_RENAMES = {"alibaba": "qwen"}
_RATES = ("input", "output", "cache_read", "cache_write")
_IGNORED = frozenset({"input_audio", "output_audio"})
_LEGACY_BAND_ABOVE = 200_000


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedModel:
    """A model a models.dev document listed that no :class:`PriceTable` entry can express."""

    provider: str
    model: str
    reason: str


class _Inexpressible(Exception):
    """This cost cannot be a CostConfig; the message says why."""


def map_models_dev(
    text: str | bytes, *, source: str = MODELS_DEV_URL
) -> tuple[PriceTable, list[SkippedModel]]:
    """The priced models of a models.dev document, and those skipped with why.

    Entries record ``source`` (a display URL). A document that is not a JSON object, or
    from which no model maps (its shape changed?), is a :class:`PriceDataError`, so a
    changed envelope can never install an empty table.
    """
    try:
        data: object = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise PriceDataError([f"not valid JSON: {error}"], origin=source) from None
    document = as_object(data)
    if document is None:
        raise PriceDataError(["a models.dev document is a JSON object of providers"], origin=source)
    entries: dict[tuple[str, str], PriceEntry] = {}
    skipped: list[SkippedModel] = []
    for key, provider_data in document.items():
        models = as_object((as_object(provider_data) or {}).get("models"))
        if models is None:
            continue
        provider = _PROVIDER_RENAMES.get(key, key)
        for model_id, info in models.items():
            try:
                cost = _cost((as_object(info) or {}).get("cost"))
            except _Inexpressible as reason:
                skipped.append(SkippedModel(provider=provider, model=model_id, reason=str(reason)))
                continue
            if not model_id.strip():
                skipped.append(SkippedModel(provider=provider, model=model_id, reason="empty id"))
                continue
            entries[provider, model_id] = PriceEntry(cost=cost, source=source)
    if not entries:
        raise PriceDataError(
            [
                f"no model carried a usable price ({len(document)} providers, "
                f"{len(skipped)} models skipped); has the document's shape changed?"
            ],
            origin=source,
        )
    return PriceTable(entries), skipped


def _cost(cost: object) -> CostConfig:
    if cost is None:
        raise _Inexpressible("models.dev lists no cost")
    band = _object(cost, "cost")
    rates = _band(band, structural={"tiers", "context_over_200k"})
    tiers: list[ContextTier] = []
    if "tiers" in band:
        raw_tiers = as_array(band["tiers"])
        if raw_tiers is None:
            raise _Inexpressible("`tiers` is not an array")
        for raw in raw_tiers:
            tier = _object(raw, "a tier")
            tiers.append(
                ContextTier(
                    above_prompt_tokens=_context_size(tier), **_band(tier, structural={"tier"})
                )
            )
    elif "context_over_200k" in band:
        over = _object(band["context_over_200k"], "`context_over_200k`")
        tiers.append(
            ContextTier(above_prompt_tokens=_LEGACY_BAND_ABOVE, **_band(over, structural=set()))
        )
    try:
        return CostConfig(**rates, tiers=tuple(tiers))
    except ValueError as error:  # bands out of order
        raise _Inexpressible(str(error)) from None


def _band(band: dict[str, Any], *, structural: set[str]) -> dict[str, float]:
    """One band's four rates; ``structural`` names the keys the caller reads itself."""
    for key in band:
        if (
            key not in _RATES
            and key != "reasoning"
            and key not in _IGNORED
            and key not in structural
        ):
            raise _Inexpressible(f"unknown cost key `{key}`")
    rates = {
        "input": _rate(band, "input", required=True),
        "output": _rate(band, "output", required=True),
    }
    rates["cache_read"] = _rate(band, "cache_read", required=False)
    rates["cache_write"] = _rate(band, "cache_write", required=False)
    reasoning = _rate(band, "reasoning", required=False)
    if reasoning not in (0.0, rates["output"]):
        raise _Inexpressible(
            f"a separate reasoning rate ({reasoning:g}) differs from output ({rates['output']:g})"
        )
    return rates


def _rate(band: dict[str, Any], key: str, *, required: bool) -> float:
    value = band.get(key)
    if value is None:
        if required:
            raise _Inexpressible(f"no `{key}` rate")
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Inexpressible(f"`{key}` is not a number: {value!r}")
    rate = float(value)
    if not math.isfinite(rate) or rate < 0:
        raise _Inexpressible(f"`{key}` is {rate}; rates must be finite and non-negative")
    refusal = implausible_rate(key, rate)
    if refusal is not None:
        raise _Inexpressible(refusal)
    return rate


def _context_size(tier: dict[str, Any]) -> int:
    spec = _object(tier.get("tier"), "a tier's `tier` spec")
    kind = spec.get("type")
    if kind != "context":
        raise _Inexpressible(f"unsupported tier type {kind!r}")
    extra = [key for key in spec if key not in ("type", "size")]
    if extra:
        raise _Inexpressible(f"unknown tier spec key `{extra[0]}`")
    size = spec.get("size")
    if (
        isinstance(size, bool)
        or not isinstance(size, int | float)
        or not math.isfinite(size)
        or size < 1
        or size != int(size)
    ):
        raise _Inexpressible(f"tier size {size!r} is not a positive integer")
    return int(size)


def _object(value: object, what: str) -> dict[str, Any]:
    found = as_object(value)
    if found is None:
        raise _Inexpressible(f"{what} is not an object")
    return found
