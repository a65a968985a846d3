"""models.dev documents at the edges of what maps: a provider without models or a model
with an empty id among good ones (the rest still map), free and boundary rates, the
context-band sizes a tier may have, and errors that name where the document came from."""

from __future__ import annotations

import json
from typing import Any

import pytest

from yoagent.core import ContextTier, CostConfig
from yoagent.pricing import MAX_PLAUSIBLE_RATE, PriceDataError, parse_models_dev

SOURCE = "https://mirror.example/api.json"


def document(**models: Any) -> str:
    return json.dumps({"acme": {"models": {m: {"cost": c} for m, c in models.items()}}})


def tier(size: Any, **spec: Any) -> dict[str, Any]:
    return {"tier": {"type": "context", "size": size, **spec}, "input": 2, "output": 4}


def test_a_provider_without_models_does_not_end_the_mapping() -> None:
    text = json.dumps(
        {
            "empty": {"name": "no models here"},
            "odd": "not an object",
            "acme": {"models": {"m": {"cost": {"input": 1, "output": 2}}}},
        }
    )
    report = parse_models_dev(text)
    assert list(report.table) == [("acme", "m")]


def test_a_model_with_an_empty_id_is_skipped_and_the_rest_map() -> None:
    report = parse_models_dev(
        document(**{" ": {"input": 1, "output": 2}, "b": {"input": 1, "output": 2}})
    )
    assert [(s.provider, s.model, s.reason) for s in report.skipped] == [("acme", " ", "empty id")]
    assert list(report.table) == [("acme", "b")]


def test_a_free_model_maps_at_zero() -> None:
    report = parse_models_dev(document(free={"input": 0, "output": 0, "cache_read": 0}))
    assert report.table.cost("acme", "free") == CostConfig(input=0, output=0)


def test_a_rate_at_the_plausible_bound_maps_and_past_it_is_refused() -> None:
    report = parse_models_dev(
        document(
            at={"input": MAX_PLAUSIBLE_RATE, "output": 1},
            past={"input": MAX_PLAUSIBLE_RATE + 0.5, "output": 1},
        )
    )
    assert report.table.cost("acme", "at") == CostConfig(input=MAX_PLAUSIBLE_RATE, output=1)
    assert [(s.model, s.reason) for s in report.skipped] == [
        (
            "past",
            "`input` is 10000.5 USD per million tokens, above the plausible 10000: "
            "refused as a data error",
        )
    ]


def test_a_model_without_an_input_rate_is_skipped() -> None:
    report = parse_models_dev(document(no_input={"output": 2}, ok={"input": 1, "output": 2}))
    assert [(s.model, s.reason) for s in report.skipped] == [("no_input", "no `input` rate")]


def test_a_context_band_may_start_above_one_token() -> None:
    report = parse_models_dev(document(m={"input": 1, "output": 2, "tiers": [tier(1)]}))
    assert report.table.cost("acme", "m") == CostConfig(
        input=1, output=2, tiers=(ContextTier(above_prompt_tokens=1, input=2, output=4),)
    )


@pytest.mark.parametrize(
    ("size", "shown"),
    [(0, "0"), (-5, "-5"), (1.5, "1.5"), (True, "True"), ("1000", "'1000'"), (None, "None")],
)
def test_a_band_size_that_is_not_a_positive_integer_is_skipped(size: Any, shown: str) -> None:
    report = parse_models_dev(
        document(m={"input": 1, "output": 2, "tiers": [tier(size)]}, ok={"input": 1, "output": 2})
    )
    assert [(s.model, s.reason) for s in report.skipped] == [
        ("m", f"tier size {shown} is not a positive integer")
    ]


def test_an_infinite_band_size_is_skipped() -> None:
    text = document(m={"input": 1, "output": 2, "tiers": [tier(0)]}, ok={"input": 1, "output": 2})
    report = parse_models_dev(text.replace('"size": 0', '"size": Infinity'))
    assert [(s.model, s.reason) for s in report.skipped] == [
        ("m", "tier size inf is not a positive integer")
    ]


def test_an_unknown_band_spec_key_is_named() -> None:
    report = parse_models_dev(
        document(
            m={"input": 1, "output": 2, "tiers": [tier(1000, unit="tokens", per="request")]},
            ok={"input": 1, "output": 2},
        )
    )
    assert [(s.model, s.reason) for s in report.skipped] == [("m", "unknown tier spec key `unit`")]


@pytest.mark.parametrize(
    ("cost", "reason"),
    [
        ("free", "cost is not an object"),
        ({"input": 1, "output": 2, "tiers": ["x"]}, "a tier is not an object"),
        (
            {"input": 1, "output": 2, "tiers": [{"tier": 7}]},
            "a tier's `tier` spec is not an object",
        ),
        ({"input": 1, "output": 2, "context_over_200k": 7}, "`context_over_200k` is not an object"),
    ],
)
def test_a_part_that_is_not_an_object_is_named(cost: Any, reason: str) -> None:
    report = parse_models_dev(document(m=cost, ok={"input": 1, "output": 2}))
    assert [(s.model, s.reason) for s in report.skipped] == [("m", reason)]


def test_the_legacy_band_takes_only_rates() -> None:
    report = parse_models_dev(
        document(
            m={
                "input": 1,
                "output": 2,
                "context_over_200k": {"input": 2, "output": 4, "tiers": []},
            },
            ok={"input": 1, "output": 2},
        )
    )
    assert [(s.model, s.reason) for s in report.skipped] == [("m", "unknown cost key `tiers`")]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{oops", "not valid JSON: "),
        ("[]", "a models.dev document is a JSON object of providers"),
        ("{}", "no model carried a usable price (0 providers, 0 models skipped)"),
    ],
)
def test_a_document_that_maps_nothing_names_its_source(text: str, problem: str) -> None:
    with pytest.raises(PriceDataError) as raised:
        parse_models_dev(text, source=SOURCE)
    assert raised.value.origin == SOURCE
    [found] = raised.value.problems
    assert found.startswith(problem)
