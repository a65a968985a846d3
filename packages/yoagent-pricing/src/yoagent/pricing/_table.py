"""PriceTable: validated prices keyed by provider then model id, as an immutable value."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from yoagent.core import CostConfig

from ._changes import PriceChange, diff
from ._entry import PriceEntry, entry_problems, implausible_rates
from ._errors import PriceDataError, PriceFileError
from ._schema import parse_text, to_document

BUNDLED_ORIGIN = "yoagent-pricing's bundled prices.json"


class PriceTable:
    """Model prices keyed by ``(provider, model id)``: plain data, never installed by itself.

    Read one with :meth:`from_json` / :meth:`from_path`, take :meth:`bundled`, or build one
    from :class:`PriceEntry` values; combine with :meth:`layered`. Every entry is validated
    on the way in (a :class:`PriceDataError` lists each bad entry by name).
    ``ignored_fields`` lists the dotted paths of fields the source held that the format
    does not define: reported, never fatal. Installing a table process-wide is
    :func:`~yoagent.pricing.install_override` or :func:`~yoagent.pricing.install_fetched`.
    """

    __slots__ = ("_comment", "_entries", "_ignored")

    def __init__(
        self,
        entries: Mapping[tuple[str, str], PriceEntry] | None = None,
        *,
        comment: str | None = None,
        ignored_fields: Iterable[str] = (),
    ) -> None:
        checked = dict(entries or {})
        problems = [
            problem
            for (provider, model), entry in checked.items()
            for problem in entry_problems(provider, model, entry)
        ]
        if problems:
            raise PriceDataError(problems)
        self._entries = dict(sorted(checked.items()))
        self._comment = comment
        self._ignored = tuple(ignored_fields)

    @classmethod
    def from_json(cls, text: str | bytes, *, origin: str | None = None) -> PriceTable:
        """Parse and validate a price file's text (``origin`` names it in errors)."""
        entries, comment, ignored = parse_text(text, origin)
        return cls._trusted(entries, comment, ignored)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> PriceTable:
        """Read, parse and validate a price file; errors name the path."""
        shown = os.fspath(path)
        try:
            with open(path, "rb") as file:
                text = file.read()
        except OSError as error:
            raise PriceFileError(shown, error.strerror or type(error).__name__) from None
        return cls.from_json(text, origin=shown)

    @classmethod
    def bundled(cls) -> PriceTable:
        """The snapshot this release ships (its ``prices.json``). Reading it installs nothing."""
        return _bundled()

    @classmethod
    def _trusted(
        cls,
        entries: dict[tuple[str, str], PriceEntry],
        comment: str | None,
        ignored: Iterable[str] = (),
    ) -> PriceTable:
        """A table from entries already validated (skips the checks)."""
        table = cls.__new__(cls)
        table._entries = dict(sorted(entries.items()))
        table._comment = comment
        table._ignored = tuple(ignored)
        return table

    @property
    def comment(self) -> str | None:
        """The file's ``comment``, if any."""
        return self._comment

    @property
    def ignored_fields(self) -> tuple[str, ...]:
        """Dotted paths of fields the source held that the format does not define."""
        return self._ignored

    def to_json(self) -> str:
        """This table in the file format, which :meth:`from_json` reads back equal."""
        return json.dumps(self.to_document(), indent=2) + "\n"

    def to_document(self) -> dict[str, Any]:
        """This table as the file format's JSON object."""
        return to_document(self._entries, self._comment)

    def entry(self, provider: str, model: str) -> PriceEntry | None:
        """The entry for ``provider/model``, with its metadata."""
        return self._entries.get((provider, model))

    def cost(self, provider: str, model: str) -> CostConfig | None:
        """The rates for ``provider/model``, or ``None`` when the table does not list it."""
        entry = self._entries.get((provider, model))
        return None if entry is None else entry.cost

    def costs(self) -> dict[tuple[str, str], CostConfig]:
        """Every listed model's rates."""
        return {key: entry.cost for key, entry in self._entries.items()}

    def items(self) -> Iterator[tuple[str, str, PriceEntry]]:
        """``(provider, model, entry)`` for every entry, sorted by provider then model."""
        return ((p, m, e) for (p, m), e in self._entries.items())

    def providers(self) -> list[str]:
        """The providers with at least one entry, sorted."""
        return sorted({provider for provider, _ in self._entries})

    def layered(self, over: PriceTable) -> PriceTable:
        """This table with every entry of ``over`` replacing the same model's entry whole."""
        return PriceTable._trusted(
            {**self._entries, **over._entries}, self.comment, self.ignored_fields
        )

    def with_entry(self, provider: str, model: str, entry: PriceEntry) -> PriceTable:
        """A copy with ``entry`` added (or replacing the model's entry), validated."""
        problems = entry_problems(provider, model, entry)
        if problems:
            raise PriceDataError(problems)
        return PriceTable._trusted(
            {**self._entries, (provider, model): entry}, self.comment, self.ignored_fields
        )

    def check_plausible(self, *, origin: str | None = None) -> PriceTable:
        """This table, or a :class:`PriceDataError` listing every rate above
        :data:`~yoagent.pricing.MAX_PLAUSIBLE_RATE` (how a fetched table is checked)."""
        problems = [
            problem
            for (provider, model), entry in self._entries.items()
            for problem in implausible_rates(provider, model, entry)
        ]
        if problems:
            raise PriceDataError(problems, origin=origin)
        return self

    def changes_from(self, base: PriceTable) -> list[PriceChange]:
        """Models this table prices differently from ``base`` (or ``base`` lacks), as billed:
        what layering this table over ``base`` would change. Installs nothing."""
        base_costs = base.costs()
        mine = self.costs()
        return diff({key: base_costs[key] for key in mine if key in base_costs}, mine)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PriceTable):
            return NotImplemented
        return self._entries == other._entries and self.comment == other.comment

    __hash__ = None  # type: ignore[assignment]  # equal by value, so not hashable

    def __repr__(self) -> str:
        return f"PriceTable({len(self._entries)} entries, providers={self.providers()})"


@cache
def _bundled() -> PriceTable:
    # Checked by this package's tests: a failure here is a packaging defect, said plainly.
    text = files("yoagent.pricing").joinpath("prices.json").read_bytes()
    return PriceTable.from_json(text, origin=BUNDLED_ORIGIN)
