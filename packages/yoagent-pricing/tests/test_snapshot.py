"""The bundled snapshot: this package's own data file, held to its own rules."""

from __future__ import annotations

import datetime

from yoagent.pricing import DECISION_PRICE_KEYS, PriceTable, price_key
from yoagent.pricing._keys import inert_entries


def test_the_snapshot_loads_with_nothing_ignored() -> None:
    bundled = PriceTable.bundled()
    assert len(bundled) >= 17
    assert bundled.ignored_fields == ()
    assert bundled.comment is not None and "enable_bundled" in bundled.comment


def test_every_entry_names_its_source_and_the_day_it_was_checked() -> None:
    today = datetime.datetime.now(tz=datetime.UTC).date()
    for provider, model, entry in PriceTable.bundled().items():
        name = f"{provider}/{model}"
        assert entry.source is not None and entry.source.startswith("https://"), name
        assert entry.verified is not None, name
        assert datetime.date.fromisoformat(entry.verified) <= today, name


def test_every_entry_is_read_by_some_lookup() -> None:
    bundled = PriceTable.bundled()
    assert inert_entries(bundled) == []
    assert all(price_key(provider) == provider for provider in bundled.providers())


def test_decision_prices_say_why_models_dev_lacks_them() -> None:
    for provider, model, entry in PriceTable.bundled().items():
        if provider in DECISION_PRICE_KEYS:
            assert entry.absent_upstream, f"{provider}/{model}"


def test_the_snapshot_is_one_shared_value() -> None:
    assert PriceTable.bundled() is PriceTable.bundled()
