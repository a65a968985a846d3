"""genai-prices's table (pydantic's maintained price data) mapped into a :class:`PriceTable`.

It is the broadest offline layer, under the snapshot: read the first time the bundled
layers are enabled (importing it takes about half a second), then kept. Only the providers
a lookup reads are mapped (``x-ai`` is our ``xai``); each model is listed under its id and
every id its match rule names exactly (``gpt-4o-2024-08-06``), not under the ids a prefix
rule would also match (``claude-sonnet-4-5-20250929``: price a dated id with an override).

A model is priced at the standard rates in force when the table is read (service tiers,
batch and fast mode are request options yoagent does not send). A model whose price cannot
be a :class:`~yoagent.core.CostConfig` is skipped with the reason, never approximated: a
price that changes with the time of day, a per-request or per-character fee, a separate
reasoning or image-input rate, a free cache rate (0 bills at the input rate here), a rate
above :data:`~yoagent.pricing.MAX_PLAUSIBLE_RATE`. Rates for what yoagent never sends or
receives are ignored: audio, video, image output, server-side searches, document pages,
and Anthropic's 1-hour cache writes (the provider places 5-minute breakpoints only).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from types import MappingProxyType
from typing import TYPE_CHECKING

from yoagent.core import ContextTier, CostConfig

from ._entry import PriceEntry, implausible_rate
from ._models_dev import SkippedModel
from ._table import PriceTable

if TYPE_CHECKING:
    from genai_prices.types import MatchLogic, ModelInfo, Provider, TieredPrices

GENAI_PRICES_URL = "https://github.com/pydantic/genai-prices"

GENAI_PROVIDERS: Mapping[str, str] = MappingProxyType(
    {
        "anthropic": "anthropic",
        "openai": "openai",
        "google": "google",
        "x-ai": "xai",
        "groq": "groq",
        "deepseek": "deepseek",
        "mistral": "mistral",
        "zai": "zai",
        "minimax": "minimax",
        "meta": "meta",
        "typesafe": "typesafe",
        "cloudflare": "cloudflare",
        "openai-decisions": "openai-decisions",
    }
)
"""genai-prices provider id → the price key it is listed under (only keys a lookup reads)."""

_RATES = {
    "input_mtok": "input",
    "output_mtok": "output",
    "cache_read_mtok": "cache_read",
    "cache_write_mtok": "cache_write",
}
_IGNORED = frozenset(
    {
        "cache_write_1h_mtok",
        "input_audio_mtok",
        "output_audio_mtok",
        "cache_audio_read_mtok",
        "audio_hours",
        "input_audio_hours",
        "input_video_mtok",
        "output_video_mtok",
        "output_image_mtok",
        "web_searches_kcount",
        "storage_searches_kcount",
        "input_document_kpages",
        "input_annotated_document_kpages",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GenaiPrices:
    """genai-prices's table as this package reads it: the ``table``, the models it
    ``skipped`` and why, the genai-prices ``version`` and the day (``at``) whose prices it
    holds."""

    table: PriceTable
    skipped: tuple[SkippedModel, ...]
    version: str
    at: datetime.date


class _Inexpressible(Exception):
    """This price cannot be a CostConfig; the message says why."""


def genai_prices() -> GenaiPrices:
    """The installed genai-prices's table, read once per process (today's prices)."""
    return _read(datetime.datetime.now(tz=datetime.UTC).date())


@cache
def _read(day: datetime.date) -> GenaiPrices:
    from genai_prices.data import providers  # heavy: only when the layer is first used

    return map_genai_prices(providers, at=day, version=_version())


def _version() -> str:
    try:
        return version("genai-prices")
    except PackageNotFoundError:  # pragma: no cover - a broken install
        return "unknown"


def map_genai_prices(
    providers: Iterable[Provider], *, at: datetime.date, version: str
) -> GenaiPrices:
    """The models of ``providers`` (genai-prices's ``Provider`` values) that a lookup reads,
    priced as on day ``at``, and those skipped with why. Pure: reads nothing else."""
    when = datetime.datetime.combine(at, datetime.time(12), tzinfo=datetime.UTC)
    entries: dict[tuple[str, str], PriceEntry] = {}
    skipped: list[SkippedModel] = []
    for provider in providers:
        key = GENAI_PROVIDERS.get(provider.id)
        if key is None:
            continue
        source = next(
            (url for url in provider.pricing_urls or () if url.startswith("https://")),
            GENAI_PRICES_URL,
        )
        for model in provider.models:
            try:
                cost = _cost(model, when)
            except _Inexpressible as reason:
                skipped.append(SkippedModel(provider=key, model=model.id, reason=str(reason)))
                continue
            entry = PriceEntry(cost=cost, source=source, note=f"from genai-prices {version}")
            for model_id in _ids(model):
                # genai-prices's own rule: the first model of a provider that matches wins.
                entries.setdefault((key, model_id), entry)
    return GenaiPrices(table=PriceTable(entries), skipped=tuple(skipped), version=version, at=at)


def _ids(model: ModelInfo) -> list[str]:
    """The model's id, then every id its match rule names exactly, without repeats."""
    from genai_prices.types import ClauseEquals, ClauseOr

    def exact(match: MatchLogic) -> Iterator[str]:
        if isinstance(match, ClauseEquals):
            yield match.equals
        elif isinstance(match, ClauseOr):
            for clause in match.or_:
                yield from exact(clause)

    found = [model.id, *exact(model.match)]
    return [model_id for index, model_id in enumerate(found) if model_id not in found[:index]]


def _cost(model: ModelInfo, when: datetime.datetime) -> CostConfig:
    from genai_prices.types import TieredPrices, TimeOfDateConstraint

    if isinstance(model.prices, list) and any(
        isinstance(price.constraint, TimeOfDateConstraint) for price in model.prices
    ):
        raise _Inexpressible("its price changes with the time of day")
    rates: dict[str, Decimal | TieredPrices] = {}
    for name, value in vars(model.get_prices(when)).items():
        if name.startswith("_") or value is None or name in _IGNORED:
            continue
        if name not in _RATES:
            raise _Inexpressible(f"a `{name}` price, which a CostConfig cannot express")
        rates[_RATES[name]] = value
    if "input" not in rates or "output" not in rates:
        raise _Inexpressible("no input or output rate")
    starts = sorted(
        {
            tier.start
            for value in rates.values()
            if isinstance(value, TieredPrices)
            for tier in value.tiers
        }
    )
    if starts and starts[0] < 1:
        raise _Inexpressible(f"a tier starts at {starts[0]} prompt tokens")
    base = _band(rates, None)
    tiers = tuple(ContextTier(above_prompt_tokens=start, **_band(rates, start)) for start in starts)
    return CostConfig(**base, tiers=tiers)


def _band(rates: Mapping[str, Decimal | TieredPrices], start: int | None) -> dict[str, float]:
    """The four rates of the band above ``start`` prompt tokens (``None``: the base band)."""
    from genai_prices.types import TieredPrices

    band: dict[str, float] = {}
    for name, value in rates.items():
        price = value
        if isinstance(value, TieredPrices):
            price = value.base
            for tier in value.tiers:
                if start is not None and tier.start <= start:
                    price = tier.price
        band[name] = _rate(name, price)
    for name in ("cache_read", "cache_write"):
        if band.get(name) == 0 and band["input"] > 0:
            raise _Inexpressible(
                f"a free {name} rate (0 here bills at the input rate, {band['input']:g})"
            )
    return band


def _rate(name: str, price: Decimal | TieredPrices) -> float:
    if not isinstance(price, Decimal) or not price.is_finite() or price < 0:
        raise _Inexpressible(f"`{name}` is {price!r}; rates must be finite and non-negative")
    rate = float(price)
    refusal = implausible_rate(name, rate)
    if refusal is not None:
        raise _Inexpressible(refusal)
    return rate
