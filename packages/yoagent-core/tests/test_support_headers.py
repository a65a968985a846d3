"""``merge_headers``: one header per name, whatever the case of its spellings."""

from __future__ import annotations

from yoagent.core.support import merge_headers


def test_a_later_header_replaces_one_of_the_same_name_in_any_case_keeping_its_spelling() -> None:
    ours = {"Authorization": "Bearer a", "Accept": "text/event-stream"}
    user = {"authorization": "Bearer b", "X-Extra": "1"}
    assert merge_headers(ours, user) == {
        "authorization": "Bearer b",
        "Accept": "text/event-stream",
        "X-Extra": "1",
    }


def test_nothing_to_merge_leaves_the_headers_as_they_were() -> None:
    assert merge_headers({"A": "1"}, {}) == {"A": "1"}
    assert merge_headers({}, {"b": "2"}) == {"b": "2"}
    assert merge_headers({"A": "1", "a": "2"}, {}) == {"a": "2"}  # one name given twice
