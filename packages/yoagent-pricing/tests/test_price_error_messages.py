"""What pricing's errors say and carry: the first ten problems and how many more, where
the data came from, which field of which entry is wrong (a long value cut short), and the
parts of a fetch error a caller reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx
from pricing_helpers import one

from yoagent.pricing import (
    PriceDataError,
    PriceFetchError,
    PriceFileError,
    PriceSource,
    PriceTable,
    UnsupportedSchemaError,
    fetch_prices,
)


def test_ten_problems_are_all_shown_and_more_are_counted() -> None:
    ten = PriceDataError([f"p{i}" for i in range(10)])
    assert str(ten) == "invalid price data: " + "; ".join(f"p{i}" for i in range(10))
    assert ten.origin is None
    twelve = PriceDataError([f"p{i}" for i in range(12)], origin="here")
    assert str(twelve) == (
        "invalid price data from here: " + "; ".join(f"p{i}" for i in range(10)) + "; and 2 more"
    )
    assert twelve.origin == "here" and len(twelve.problems) == 12


def test_a_missing_schema_is_said_so() -> None:
    error = UnsupportedSchemaError(None, origin="f.json")
    assert error.found is None and error.origin == "f.json"
    assert str(error) == (
        "invalid price data from f.json: schema is missing; "
        "this release reads schema 1 (upgrade yoagent-pricing?)"
    )
    with pytest.raises(UnsupportedSchemaError) as raised:
        PriceTable.from_json('{"providers": {}}', origin="f.json")
    assert raised.value.origin == "f.json"


def test_file_and_fetch_errors_carry_their_parts() -> None:
    file_error = PriceFileError("/p.json", "no such file")
    assert (file_error.path, file_error.reason) == ("/p.json", "no such file")
    fetch = PriceFetchError("https://x.test/p?token=1", "HTTP 503", status=503)
    assert (fetch.url, fetch.reason, fetch.status, fetch.timed_out) == (
        "https://x.test/p?…",
        "HTTP 503",
        503,
        False,
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{oops", "not valid JSON: "),
        ('{"schema": 1, "providers": {}, "providers": {}}', "duplicate key(s) 'providers'"),
    ],
)
def test_unreadable_text_names_its_origin(text: str, problem: str) -> None:
    with pytest.raises(PriceDataError) as raised:
        PriceTable.from_json(text, origin="f.json")
    assert raised.value.origin == "f.json"
    assert raised.value.problems[0].startswith(problem)


def test_every_duplicate_key_is_listed() -> None:
    text = '{"schema": 1, "comment": "a", "comment": "b", "providers": {}, "providers": {}}'
    with pytest.raises(PriceDataError) as raised:
        PriceTable.from_json(text)
    assert raised.value.problems == ("duplicate key(s) 'comment', 'providers': which one wins?",)


def problems(text: str) -> tuple[str, ...]:
    with pytest.raises(PriceDataError) as raised:
        PriceTable.from_json(text)
    return raised.value.problems


def test_a_bad_field_of_a_tier_is_named_by_its_path() -> None:
    entry = {
        "input": 1,
        "output": 2,
        "tiers": [{"above_prompt_tokens": 0, "input": -1, "output": 1}],
    }
    assert problems(one(entry)) == (
        "p/m: tiers[0].above_prompt_tokens is 0; a tier starts above at least 1 prompt token",
        "p/m: tiers[0].input is -1; rates must be finite and non-negative",
    )


def test_a_negative_non_rate_field_is_not_called_a_rate() -> None:
    assert problems(one({"input": 1, "output": 2, "note": 5})) == (
        "p/m: note: input should be a valid string, got 5",
    )


def test_a_top_level_error_has_no_entry_name() -> None:
    assert problems('{"schema": 1, "comment": 5, "providers": {}}') == (
        "comment: input should be a valid string, got 5",
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [("x" * 58, repr("x" * 58)), ("y" * 59, repr("y" * 59)[:57] + "...")],
)
def test_a_value_is_shown_whole_up_to_sixty_characters(value: str, shown: str) -> None:
    found = problems(json.dumps({"schema": 1, "providers": {"p": value}}))
    assert found == (f"providers.p: input should be a valid dictionary, got {shown}",)


@pytest.mark.parametrize(
    ("data", "kind"), [("[]", "an array"), ('"x"', "a string"), ("7", "int"), ("null", "NoneType")]
)
def test_a_document_that_is_not_an_object_says_what_it_is(data: str, kind: str) -> None:
    assert problems(data) == (f"expected a JSON object, got {kind}",)


async def fetched(source: PriceSource, body: bytes) -> Any:
    with respx.mock(assert_all_called=True) as router:
        router.get(source.url).respond(200, content=body)
        return await fetch_prices(source)


async def refused_cause(source: PriceSource, body: bytes) -> Any:
    with pytest.raises(PriceFetchError) as raised:
        await fetched(source, body)
    return raised.value.__cause__


@pytest.mark.anyio
async def test_a_price_file_source_is_read_as_a_price_file() -> None:
    source = PriceSource.price_file("https://x.test/prices.json?key=k")
    assert source.format == "price_file"
    report = await fetched(source, one({"input": 1, "output": 2, "oops": 1}).encode())
    assert report.ignored_fields == ("providers.p.m.oops",)
    shown = "https://x.test/prices.json?…"
    implausible = await refused_cause(source, one({"input": 1e9, "output": 2}).encode())
    assert isinstance(implausible, PriceDataError) and implausible.origin == shown
    broken = await refused_cause(source, b"{oops")
    assert isinstance(broken, PriceDataError) and broken.origin == shown
    upstream = PriceSource.models_dev("https://m.test/api.json?key=k")
    empty = await refused_cause(upstream, b"[]")
    assert isinstance(empty, PriceDataError) and empty.origin == "https://m.test/api.json?…"


def test_tiers_out_of_order_in_two_models_are_both_listed() -> None:
    backwards = {
        "input": 1,
        "output": 2,
        "tiers": [
            {"above_prompt_tokens": 2000, "input": 2, "output": 4},
            {"above_prompt_tokens": 1000, "input": 3, "output": 6},
        ],
    }
    text = json.dumps({"schema": 1, "providers": {"p": {"a": backwards, "b": backwards}}})
    found = problems(text)
    assert [problem.split(":")[0] for problem in found] == ["p/a", "p/b"]
