"""The price file format (schema 1) as pydantic models: reading it, writing it, and saying
exactly which entry and field is wrong.

A file is ``{"schema": 1, "comment": ..., "providers": {provider: {model: entry}}}``. An
entry has ``input`` and ``output`` (required), ``cache_read``, ``cache_write`` (0 or left
out: the band's input rate), ``tiers`` (``above_prompt_tokens`` plus the four rates,
strictly ascending), and metadata: ``cache_write_at_input``, ``note``, ``source``,
``verified``, ``absent_upstream``. A field the format does not define is ignored and
reported by its dotted path (``providers.anthropic.claude-opus-5.cache_reed``), never fatal,
so a file written by a newer release that added metadata still loads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError
from pydantic_core import ErrorDetails

from yoagent.core import ContextTier, CostConfig

from ._entry import PriceEntry, entry_problems
from ._errors import PriceDataError, UnsupportedSchemaError
from ._json import as_object

SCHEMA_VERSION = 1
"""The only ``schema`` value this release reads."""

Rate = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
_RATE_FIELDS = frozenset({"input", "output", "cache_read", "cache_write"})


class _Wire(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class TierWire(_Wire):
    """One context band of an entry."""

    above_prompt_tokens: Annotated[int, Field(ge=1, strict=True)]
    input: Rate
    output: Rate
    cache_read: Rate = 0.0
    cache_write: Rate = 0.0


class EntryWire(_Wire):
    """One model's entry."""

    input: Rate
    output: Rate
    cache_read: Rate = 0.0
    cache_write: Rate = 0.0
    tiers: list[TierWire] = Field(default_factory=list[TierWire])
    cache_write_at_input: StrictBool = False
    note: StrictStr | None = None
    source: StrictStr | None = None
    verified: StrictStr | None = None
    absent_upstream: StrictStr | None = None


class FileWire(_Wire):
    """A whole price file (``schema`` is checked before this model sees it)."""

    schema_version: int = Field(alias="schema")
    comment: StrictStr | None = None
    providers: dict[str, dict[str, EntryWire]] = Field(
        default_factory=dict[str, dict[str, EntryWire]]
    )


Parsed = tuple[dict[tuple[str, str], PriceEntry], str | None, tuple[str, ...]]
"""``(entries, comment, ignored field paths)``."""


def parse_text(text: str | bytes, origin: str | None) -> Parsed:
    """Read a price file's text; every defect is reported at once in a PriceDataError."""
    duplicates: list[str] = []
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _no_duplicates(pairs, duplicates))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise PriceDataError([f"not valid JSON: {error}"], origin=origin) from None
    if duplicates:
        listed = ", ".join(repr(key) for key in duplicates)
        raise PriceDataError([f"duplicate key(s) {listed}: which one wins?"], origin=origin)
    return parse_document(data, origin)


def parse_document(data: object, origin: str | None) -> Parsed:
    """Validate an already-decoded price file."""
    document = as_object(data)
    if document is None:
        raise PriceDataError([f"expected a JSON object, got {_kind(data)}"], origin=origin)
    schema = document.get("schema")
    if type(schema) is not int or schema != SCHEMA_VERSION:
        raise UnsupportedSchemaError(schema, origin=origin)
    try:
        wire = FileWire.model_validate(document)
    except ValidationError as error:
        raise PriceDataError([_describe(e) for e in error.errors()], origin=origin) from None
    entries: dict[tuple[str, str], PriceEntry] = {}
    problems: list[str] = []
    for provider, models in wire.providers.items():
        for model, entry_wire in models.items():
            try:
                entry = _entry(entry_wire)
            except ValueError as error:  # tier order, caught by CostConfig
                problems.append(f"{provider}/{model}: {error}")
                continue
            problems.extend(entry_problems(provider, model, entry))
            entries[provider, model] = entry
    if problems:
        raise PriceDataError(problems, origin=origin)
    return entries, wire.comment, tuple(_ignored(wire))


def to_document(
    entries: Mapping[tuple[str, str], PriceEntry], comment: str | None
) -> dict[str, Any]:
    """The file for ``entries`` (sorted; zero cache rates and empty fields left out)."""
    providers: dict[str, dict[str, Any]] = {}
    for provider, model in sorted(entries):
        providers.setdefault(provider, {})[model] = _entry_document(entries[provider, model])
    document: dict[str, Any] = {"schema": SCHEMA_VERSION}
    if comment is not None:
        document["comment"] = comment
    document["providers"] = providers
    return document


def _entry(wire: EntryWire) -> PriceEntry:
    tiers = tuple(
        ContextTier(
            above_prompt_tokens=t.above_prompt_tokens,
            input=t.input,
            output=t.output,
            cache_read=t.cache_read,
            cache_write=t.cache_write,
        )
        for t in wire.tiers
    )
    cost = CostConfig(
        input=wire.input,
        output=wire.output,
        cache_read=wire.cache_read,
        cache_write=wire.cache_write,
        tiers=tiers,
    )
    return PriceEntry(
        cost=cost,
        cache_write_at_input=wire.cache_write_at_input,
        note=wire.note,
        source=wire.source,
        verified=wire.verified,
        absent_upstream=wire.absent_upstream,
    )


def _entry_document(entry: PriceEntry) -> dict[str, Any]:
    cost = entry.cost
    out: dict[str, Any] = _rates(cost)
    if cost.tiers:
        out["tiers"] = [
            {"above_prompt_tokens": t.above_prompt_tokens, **_rates(t)} for t in cost.tiers
        ]
    if entry.cache_write_at_input:
        out["cache_write_at_input"] = True
    for key in ("note", "source", "verified", "absent_upstream"):
        value = getattr(entry, key)
        if value is not None:
            out[key] = value
    return out


def _rates(band: CostConfig | ContextTier) -> dict[str, float]:
    out = {"input": band.input, "output": band.output}
    if band.cache_read:
        out["cache_read"] = band.cache_read
    if band.cache_write:
        out["cache_write"] = band.cache_write
    return out


def _ignored(wire: FileWire) -> list[str]:
    """Dotted paths of the fields the format does not define, in file order."""
    found = list(wire.model_extra or {})
    for provider, models in wire.providers.items():
        for model, entry in models.items():
            at = f"providers.{provider}.{model}"
            found += [f"{at}.{key}" for key in entry.model_extra or {}]
            for index, tier in enumerate(entry.tiers):
                found += [f"{at}.tiers[{index}].{key}" for key in tier.model_extra or {}]
    return found


def _no_duplicates(pairs: list[tuple[str, Any]], duplicates: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            duplicates.append(key)
        out[key] = value
    return out


def _describe(error: ErrorDetails) -> str:
    """One pydantic error as ``provider/model: field ...``."""
    loc = [str(part) for part in error["loc"]]
    if len(loc) >= 3 and loc[0] == "providers":
        where = f"{loc[1]}/{loc[2]}"
        field = _dotted(error["loc"][3:])
    else:
        where = ""
        field = _dotted(error["loc"])
    value = _short(error.get("input"))
    kind = error["type"]
    name = field.rsplit(".", 1)[-1]
    if kind in {"greater_than_equal", "finite_number"} and name in _RATE_FIELDS:
        text = f"{field} is {value}; rates must be finite and non-negative"
    elif kind == "greater_than_equal" and name == "above_prompt_tokens":
        text = f"{field} is {value}; a tier starts above at least 1 prompt token"
    elif kind == "missing":
        text = f"{field} is missing"
    elif field:
        text = f"{field}: {error['msg'].lower()}, got {value}"
    else:
        text = f"{error['msg'].lower()}, got {value}"
    return f"{where}: {text}" if where else text


def _dotted(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else type(value).__name__
