"""Exactly what a Match compares, where two requests first differ and how it is shown
(from the mutation triage: each test pins a behaviour a surviving mutant changed)."""

from __future__ import annotations

import math
from typing import Any

from yoagent.testing import Difference, Match, first_difference
from yoagent.testing._match import MISSING, canonical_json


def test_exact_matching_compares_the_endpoint_and_timestamps() -> None:
    exact = Match.exact()
    assert (exact.endpoint, exact.timestamps) == (True, True)
    request = {"endpoint": {"base_url": "https://a.example"}, "messages": []}
    assert exact.apply(request) == request
    assert Match().apply(request) == {"messages": []}


def test_a_request_without_the_parts_left_out_is_compared_as_it_is() -> None:
    # model, endpoint, cache and timestamps are dropped only where they are present
    match = Match(model=False, cache=False)
    assert match.apply({"messages": [{"role": "user"}]}) == {"messages": [{"role": "user"}]}
    assert match.apply({}) == {}


def test_messages_that_are_not_a_list_are_left_alone() -> None:
    assert Match().apply({"messages": "abc"}) == {"messages": "abc"}
    assert Match().apply({"messages": None}) == {"messages": None}


def test_a_normalizer_changing_nested_values_leaves_the_request_as_it_was() -> None:
    def drop_texts(request: dict[str, Any]) -> dict[str, Any]:
        for message in request["messages"]:
            message["content"].clear()
        return request

    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    kept = canonical_json(request)
    normalized = Match(normalize=drop_texts).apply(request)
    assert normalized == {"messages": [{"role": "user", "content": []}]}
    assert canonical_json(request) == kept


def _conversation(calls: tuple[Any, Any, Any], results: tuple[Any, Any], **stamp: Any) -> Any:
    """Three tool calls with these ids, then results naming these ids (``stamp``: fields
    of the first result), with a block and a message that are not objects."""
    content = [
        {"type": "tool_call", "id": call_id, "name": name}
        for call_id, name in zip(calls, "abc", strict=True)
    ]
    return {
        "messages": [
            {"role": "assistant", "content": [{"type": "text", "text": "calls"}, *content, "?"]},
            {"role": "tool_result", "tool_call_id": results[0], **stamp},
            {"role": "tool_result", "tool_call_id": results[1]},
            "not a message",
        ]
    }


def test_tool_call_ids_are_renamed_in_order_of_appearance() -> None:
    request = _conversation(("toolu_x", "toolu_y", 7), ("toolu_y", "toolu_x"), timestamp=1)
    assert Match(tool_call_ids=False).apply(request) == _conversation(
        ("call_1", "call_2", 7), ("call_2", "call_1")
    )


def test_a_missing_field_is_missing_on_its_side_only() -> None:
    assert first_difference({"a": 1}, {}) == Difference(("a",), 1, MISSING)
    assert first_difference({}, {"b": [2]}) == Difference(("b",), MISSING, [2])
    assert repr(MISSING) == "<missing>"


def test_a_longer_list_differs_at_its_first_extra_item() -> None:
    assert first_difference([1, 2], [1]) == Difference((1,), 2, MISSING)
    assert first_difference([1], [1, 2]) == Difference((1,), MISSING, 2)
    assert first_difference({"m": []}, {"m": [{"x": 1}]}) == Difference(("m", 0), MISSING, {"x": 1})


def test_an_object_against_a_list_differs_as_a_whole() -> None:
    assert first_difference({"a": 1}, ["a"]) == Difference((), {"a": 1}, ["a"])
    assert first_difference(["a"], {"a": 1}) == Difference((), ["a"], {"a": 1})
    assert first_difference([1], "x") == Difference((), [1], "x")
    assert first_difference("x", [1]) == Difference((), "x", [1])


def test_numbers_differ_by_value_and_nan_only_equals_nan() -> None:
    assert first_difference(1.0, 2.0) == Difference((), 1.0, 2.0)
    assert first_difference(1.0, math.nan) is not None
    assert first_difference(math.nan, 1.0) is not None
    assert first_difference(math.nan, math.nan) is None


def test_canonical_json_is_compact_sorted_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'


def test_describe_names_the_message_from_either_side() -> None:
    recorded = {"messages": [{"role": "user"}, {"role": "assistant"}]}
    actual = {"messages": [{"role": "user"}]}
    difference = first_difference(recorded, actual)
    assert difference == Difference(("messages", 1), {"role": "assistant"}, MISSING)
    assert difference.describe(recorded, actual) == (
        "messages[1] (message 1, assistant) differs\n"
        '  recorded: {"role": "assistant"}\n'
        "  got:      (nothing)"
    )
    assert difference.describe(None, recorded).startswith("messages[1] (message 1, assistant)")


def test_describe_without_a_role_names_only_the_message() -> None:
    difference = Difference(("messages", 0, "text"), 1, 2)
    assert (
        difference.describe()
        == "messages[0].text (message 0) differs\n  recorded: 1\n  got:      2"
    )
    odd = {"messages": [{"role": 5}]}
    assert difference.describe(odd, odd).startswith("messages[0].text (message 0) differs")
    assert Difference((), None, True).describe() == (
        "the request differs\n  recorded: null\n  got:      true"
    )


def test_values_are_shown_as_json_up_to_300_characters() -> None:
    def shown(value: Any) -> str:
        return Difference(("x",), value, 0).describe().split("\n")[1].removeprefix("  recorded: ")

    assert shown(["é"]) == '["é"]'
    assert shown("é") == "'é'"
    fits = "a" * 298  # its repr, with quotes, is 300 characters
    assert shown(fits) == repr(fits)
    assert shown(fits + "b") == repr(fits + "b")[:299] + "…"
    assert len(shown(fits + "bc")) == 300
