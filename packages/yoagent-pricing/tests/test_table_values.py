"""A PriceTable as a value: an entry added in code, equality (the comment counts), the
file it writes byte for byte, a file that is not UTF-8, and how a change with context
tiers and an audit are described."""

from __future__ import annotations

from pathlib import Path

import pytest
from pricing_helpers import table

from yoagent.core import ContextTier, CostConfig
from yoagent.pricing import (
    PriceChange,
    PriceDataError,
    PriceEntry,
    PriceTable,
    audit,
    parse_models_dev,
)


def test_with_entry_adds_a_model_and_keeps_the_rest() -> None:
    base = table({"openai": {"m": {"input": 1, "output": 2, "cache_reed": 1}}}, comment="mine")
    added = base.with_entry("openai", "n", PriceEntry(cost=CostConfig(input=3, output=4)))
    assert added.cost("openai", "n") == CostConfig(input=3, output=4)
    assert added.cost("openai", "m") == CostConfig(input=1, output=2)
    assert list(added) == [("openai", "m"), ("openai", "n")]
    assert added.comment == "mine"
    assert added.ignored_fields == ("providers.openai.m.cache_reed",)
    assert "n" not in {m for _, m in base}  # the original is unchanged
    replaced = added.with_entry("openai", "m", PriceEntry(cost=CostConfig(input=9, output=9)))
    assert replaced.cost("openai", "m") == CostConfig(input=9, output=9)


def test_a_table_built_in_code_keeps_its_comment_and_so_does_one_layered_over() -> None:
    built = PriceTable({("p", "m"): PriceEntry(cost=CostConfig(input=1, output=2))}, comment="c")
    assert built.comment == "c"
    lower = table({"openai": {"m": {"input": 1, "output": 2, "cache_reed": 1}}}, comment="low")
    layered = lower.layered(built)
    assert (layered.comment, layered.ignored_fields) == ("low", ("providers.openai.m.cache_reed",))
    assert list(layered) == [("openai", "m"), ("p", "m")]


def test_tables_with_the_same_entries_and_another_comment_differ() -> None:
    entries = {"openai": {"m": {"input": 1, "output": 2}}}
    assert table(entries, comment="a") == table(entries, comment="a")
    assert table(entries, comment="a") != table(entries, comment="b")
    assert table(entries) != table({"openai": {"m": {"input": 1, "output": 3}}})


def test_to_json_is_indented_by_two_and_ends_with_a_newline() -> None:
    written = table({"openai": {"m": {"input": 1.5, "output": 2}}}, comment="c").to_json()
    assert written == (
        "{\n"
        '  "schema": 1,\n'
        '  "comment": "c",\n'
        '  "providers": {\n'
        '    "openai": {\n'
        '      "m": {\n'
        '        "input": 1.5,\n'
        '        "output": 2.0\n'
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


def test_a_file_that_is_not_utf8_is_invalid_price_data(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_bytes(b'{"schema": 1, "comment": "\xff", "providers": {}}')
    with pytest.raises(PriceDataError, match="not valid JSON") as raised:
        PriceTable.from_path(path)
    assert raised.value.origin == str(path)


TIERED = CostConfig(
    input=1,
    output=2,
    tiers=(
        ContextTier(above_prompt_tokens=1000, input=2, output=4),
        ContextTier(above_prompt_tokens=5000, input=3, output=6, cache_read=0.5, cache_write=4),
    ),
)


def test_a_new_tiered_price_is_described_with_its_tiers() -> None:
    change = PriceChange(provider="p", model="m", before=None, after=TIERED)
    assert str(change) == (
        "p/m: new (input 1, output 2, cache_read 0, cache_write 0, "
        "tiers [>1000: 2/4/0/0; >5000: 3/6/0.5/4])"
    )
    flat = PriceChange(provider="p", model="m", before=CostConfig(input=1, output=2), after=None)
    assert str(flat) == "p/m: no longer priced (was input 1, output 2, cache_read 0, cache_write 0)"
    assert str(PriceChange(provider="p", model="m", before=None, after=None)) == "p/m: unpriced"


def test_an_implausible_tier_rate_is_named_by_its_tier() -> None:
    tiered = CostConfig(
        input=1,
        output=2,
        tiers=(
            ContextTier(above_prompt_tokens=1000, input=2, output=10_000),
            ContextTier(above_prompt_tokens=5000, input=3, output=20_000),
        ),
    )
    bad = PriceTable({("p", "m"): PriceEntry(cost=tiered)})
    with pytest.raises(PriceDataError) as raised:
        bad.check_plausible(origin="here")
    assert raised.value.problems == (
        "p/m: tiers[1].output is 20000 USD per million tokens, above the plausible 10000",
    )
    assert raised.value.origin == "here"


def test_an_audit_report_reads_one_finding_a_line() -> None:
    ours = table({"p": {"a": {"input": 1, "output": 2}, "b": {"input": 1, "output": 2}}})
    report = audit(ours, PriceTable())
    assert str(report) == (
        "2 entries: 0 agree, 2 disagree, 0 absent upstream as documented\n"
        "  p/a: missing: upstream does not list it (set absent_upstream if that is expected)\n"
        "  p/b: missing: upstream does not list it (set absent_upstream if that is expected)"
    )


def test_models_dev_tiers_that_are_not_an_array_are_skipped() -> None:
    document = (
        '{"acme": {"models": {'
        '"odd": {"cost": {"input": 1, "output": 2, "tiers": {}}},'
        '"flat": {"cost": {"input": 1, "output": 2}}}}}'
    )
    report = parse_models_dev(document)
    assert [(s.model, s.reason) for s in report.skipped] == [("odd", "`tiers` is not an array")]
    assert report.table.cost("acme", "odd") is None
