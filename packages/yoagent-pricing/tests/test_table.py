"""PriceTable: reading, validating and writing the price file format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pricing_helpers import one, table

from yoagent.core import ContextTier, CostConfig
from yoagent.pricing import (
    PriceDataError,
    PriceEntry,
    PriceFileError,
    PriceTable,
    UnsupportedSchemaError,
)


def test_a_file_reads_into_entries_with_their_rates_tiers_and_metadata() -> None:
    prices = table(
        {
            "openai": {
                "gpt-x": {
                    "input": 5,
                    "output": 30.0,
                    "cache_read": 0.5,
                    "tiers": [
                        {"above_prompt_tokens": 272000, "input": 10, "output": 45, "cache_read": 1}
                    ],
                    "note": "a caveat",
                    "source": "https://example.com/pricing",
                    "verified": "2026-09-25",
                }
            }
        },
        comment="hello",
    )
    entry = prices.entry("openai", "gpt-x")
    assert entry == PriceEntry(
        cost=CostConfig(
            input=5.0,
            output=30.0,
            cache_read=0.5,
            tiers=(
                ContextTier(above_prompt_tokens=272_000, input=10.0, output=45.0, cache_read=1.0),
            ),
        ),
        note="a caveat",
        source="https://example.com/pricing",
        verified="2026-09-25",
    )
    assert prices.cost("openai", "gpt-x") == entry.cost
    assert prices.cost("openai", "gpt-y") is None
    assert prices.comment == "hello"
    assert list(prices) == [("openai", "gpt-x")] and len(prices) == 1
    assert ("openai", "gpt-x") in prices


def test_to_json_reads_back_equal() -> None:
    bundled = PriceTable.bundled()
    again = PriceTable.from_json(bundled.to_json())
    assert again == bundled
    assert [e for _, _, e in again.items()] == [e for _, _, e in bundled.items()]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ('{"input": -1, "output": 2}', "p/m: input is -1; rates must be finite and non-negative"),
        ('{"input": NaN, "output": 2}', "p/m: input is nan; rates must be finite and non-negative"),
        (
            '{"input": 1, "output": Infinity}',
            "p/m: output is inf; rates must be finite and non-negative",
        ),
        (
            '{"input": 1, "output": 2, "cache_write": -0.5}',
            "p/m: cache_write is -0.5; rates must be finite and non-negative",
        ),
        (
            '{"input": 1, "output": 2, "tiers": [{"above_prompt_tokens": 10, "input": 2,'
            ' "output": 3, "cache_read": -0.1}]}',
            "p/m: tiers[0].cache_read is -0.1; rates must be finite and non-negative",
        ),
        ('{"input": "1", "output": 2}', "p/m: input: input should be a valid number, got '1'"),
        ('{"input": true, "output": 2}', "p/m: input: input should be a valid number, got True"),
        ('{"output": 2}', "p/m: input is missing"),
        (
            '{"input": 1, "output": 2, "tiers": [{"above_prompt_tokens": 0, "input": 2,'
            ' "output": 3}]}',
            "p/m: tiers[0].above_prompt_tokens is 0; a tier starts above at least 1 prompt token",
        ),
        (
            '{"input": 1, "output": 2, "verified": "2026-02-30"}',
            "p/m: verified is '2026-02-30'; expected a YYYY-MM-DD date",
        ),
        (
            '{"input": 1, "output": 2, "verified": "25/09/2026"}',
            "p/m: verified is '25/09/2026'; expected a YYYY-MM-DD date",
        ),
        (
            '{"input": 1, "output": 2, "cache_write": 1.25, "cache_write_at_input": true}',
            "p/m: cache_write_at_input is set, but a band has cache_write 1.25 and input 1.0",
        ),
    ],
)
def test_a_bad_entry_is_refused_with_its_name_and_field(entry: str, expected: str) -> None:
    with pytest.raises(PriceDataError) as caught:
        PriceTable.from_json(one(entry), origin="prices.json")
    assert str(caught.value).startswith("invalid price data from prices.json: ")
    assert any(problem.startswith(expected) for problem in caught.value.problems), caught.value


def test_every_bad_entry_is_listed_at_once() -> None:
    text = json.dumps(
        {
            "schema": 1,
            "providers": {
                "a": {"x": {"input": -1, "output": 1}, "ok": {"input": 1, "output": 1}},
                "b": {"y": {"input": 1, "output": -2}},
            },
        }
    )
    with pytest.raises(PriceDataError) as caught:
        PriceTable.from_json(text)
    assert [p.split(":")[0] for p in caught.value.problems] == ["a/x", "b/y"]


def test_tiers_out_of_order_are_refused() -> None:
    tiers = [
        {"above_prompt_tokens": 200, "input": 2, "output": 3},
        {"above_prompt_tokens": 100, "input": 3, "output": 4},
    ]
    with pytest.raises(PriceDataError, match=r"p/m: .*ascend strictly.*\[200, 100\]"):
        PriceTable.from_json(one({"input": 1, "output": 2, "tiers": tiers}))
    tiers[1]["above_prompt_tokens"] = 300
    assert (
        len(
            PriceTable.from_json(one({"input": 1, "output": 2, "tiers": tiers}))
            .cost("p", "m")
            .tiers
        )
        == 2
    )  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"schema": 2, "providers": {}}', 2),
        ('{"providers": {}}', None),
        ('{"schema": true, "providers": {}}', True),
        ('{"schema": "1", "providers": {}}', "1"),
    ],
)
def test_a_schema_this_release_cannot_read_is_refused(text: str, found: object) -> None:
    with pytest.raises(UnsupportedSchemaError) as caught:
        PriceTable.from_json(text)
    assert caught.value.found == found
    assert "this release reads schema 1" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got an array"),
        ('"prices"', "expected a JSON object, got a string"),
        ('{"schema": 1, "providers": {"p": {"m": 3}}}', "p/m: input should be a valid dictionary"),
        ('{"schema": 1, "providers": []}', "providers: input should be a valid dictionary"),
        (
            '{"schema": 1, "providers": {"p": {"m": {"input": 1, "output": 1}}}, "providers": {}}',
            "duplicate key(s) 'providers'",
        ),
    ],
)
def test_a_malformed_file_is_refused_and_says_how(text: str, message: str) -> None:
    with pytest.raises(PriceDataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        PriceTable.from_json(text)


def test_unknown_fields_are_reported_by_path_and_not_fatal() -> None:
    text = json.dumps(
        {
            "schema": 1,
            "generated": "today",
            "providers": {
                "p": {
                    "m": {
                        "input": 1,
                        "output": 2,
                        "cache_reed": 0.1,
                        "tiers": [{"above_prompt_tokens": 5, "input": 2, "output": 3, "x": 1}],
                    }
                }
            },
        }
    )
    prices = PriceTable.from_json(text)
    assert prices.ignored_fields == (
        "generated",
        "providers.p.m.cache_reed",
        "providers.p.m.tiers[0].x",
    )
    assert prices.cost("p", "m") == CostConfig(
        input=1, output=2, tiers=(ContextTier(above_prompt_tokens=5, input=2, output=3),)
    )


def test_a_file_is_read_from_a_path_and_a_missing_one_names_it(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(one({"input": 1, "output": 2}))
    assert PriceTable.from_path(path).cost("p", "m") == CostConfig(input=1, output=2)
    with pytest.raises(PriceFileError, match=r"nowhere\.json: No such file"):
        PriceTable.from_path(tmp_path / "nowhere.json")
    path.write_text(one({"input": -3, "output": 2}))
    with pytest.raises(PriceDataError, match=str(path)):
        PriceTable.from_path(path)


def test_a_table_built_in_code_is_validated_too() -> None:
    good = PriceEntry(cost=CostConfig(input=1, output=2), verified="2026-01-31")
    assert len(PriceTable({("p", "m"): good})) == 1
    with pytest.raises(PriceDataError, match="must be non-empty"):
        PriceTable({("p", " "): good})
    with pytest.raises(PriceDataError, match="verified is 'soon'"):
        PriceTable().with_entry("p", "m", PriceEntry(cost=CostConfig(), verified="soon"))


def test_layered_replaces_whole_entries_and_keeps_the_rest() -> None:
    low = table(
        {
            "p": {
                "a": {"input": 1, "output": 2, "cache_read": 0.1},
                "b": {"input": 3, "output": 4},
            }
        }
    )
    high = table({"p": {"a": {"input": 5, "output": 6}}, "q": {"c": {"input": 7, "output": 8}}})
    both = low.layered(high)
    assert both.cost("p", "a") == CostConfig(input=5, output=6)  # cache_read not kept from low
    assert both.cost("p", "b") == CostConfig(input=3, output=4)
    assert both.cost("q", "c") == CostConfig(input=7, output=8)
    assert len(low) == 2  # layering copies


def test_changes_from_compares_as_billed() -> None:
    base = table({"p": {"a": {"input": 5, "output": 30}, "b": {"input": 1, "output": 1}}})
    explicit = table(
        {
            "p": {
                "a": {"input": 5, "output": 30, "cache_read": 5, "cache_write": 5},
                "c": {"input": 2, "output": 2},
            }
        }
    )
    changes = explicit.changes_from(base)
    # A cache rate written out at the input rate is no change; a new model is.
    assert [(c.provider, c.model, c.before) for c in changes] == [("p", "c", None)]
    assert str(changes[0]) == "p/c: new (input 2, output 2, cache_read 0, cache_write 0)"


def test_json_nested_too_deep_is_refused_not_a_crash() -> None:
    with pytest.raises(PriceDataError, match="not valid JSON"):
        PriceTable.from_json("[" * 200_000 + "]" * 200_000)
