"""The survey that prices ``referencing``'s ``$id`` crawl before it runs, on schemas built
in memory (as YAML aliases leave them: one object in many places): visits per path,
distinct schemas, identifiers and their dialects, a schema inside itself, and the bound.
From the mutation triage: the loading tests that reach the survey run it on a thread of
their own, where mutmut does not see which code a test runs."""

from __future__ import annotations

from typing import Any

import pytest
from referencing.jsonschema import DRAFT202012

from yoagent.openapi import OpenApiError, _crawl
from yoagent.openapi._crawl import Survey, check_crawl


def _object(*children: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {f"p{i}": c for i, c in enumerate(children)}, **extra}


def test_a_schema_in_several_places_is_visited_once_per_place_and_counted_once() -> None:
    leaf: dict[str, Any] = {"type": "string"}
    survey = Survey([(_object(leaf, leaf, leaf), DRAFT202012)])
    assert (survey.visits, survey.distinct) == (4, 2)
    middle = _object(leaf, leaf)
    survey = Survey([(_object(middle, middle), DRAFT202012), (leaf, DRAFT202012)])
    assert (survey.visits, survey.distinct) == (1 + 2 * 3 + 1, 3)
    assert survey.cyclic is False


def test_a_schema_inside_itself_is_found_and_refused() -> None:
    looped = _object()
    looped["properties"]["again"] = looped
    survey = Survey([(looped, DRAFT202012)])
    assert survey.cyclic is True
    with pytest.raises(OpenApiError) as caught:
        check_crawl(survey)
    assert str(caught.value) == (
        "the document: a schema holds itself (a recursive YAML alias), which JSON cannot express"
    )


def test_an_identifier_below_a_root_is_found_in_the_childs_own_dialect() -> None:
    # Draft 4 names a schema with "id"; 2020-12 reads only "$id".
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "id": "urn:draft4"}
    plain = {"id": "urn:not-an-identifier-in-2020-12"}
    anchored = {"$anchor": "here"}
    survey = Survey(
        [
            (_object(draft4), DRAFT202012),
            (_object(plain), DRAFT202012),
            (_object(anchored), DRAFT202012),
        ]
    )
    assert [survey.identified(i) for i in range(3)] == [True, False, True]


def test_the_bound_counts_visits_beyond_the_distinct_schemas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_crawl, "MAX_ALIAS_VISITS", 5)
    leaf: dict[str, Any] = {"type": "string"}
    at_bound = Survey([(_object(*[leaf] * 6), DRAFT202012)])
    assert at_bound.visits - at_bound.distinct == 5
    check_crawl(at_bound)  # exactly at the bound: crawled
    past = Survey([(_object(*[leaf] * 7), DRAFT202012)])
    with pytest.raises(OpenApiError) as caught:
        check_crawl(past)
    assert str(caught.value) == (
        "the document: YAML aliases make the $id crawl visit more than 5 schemas beyond its 2 "
        "distinct ones (write a shared schema once and $ref it)"
    )
