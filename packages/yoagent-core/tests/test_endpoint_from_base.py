"""``endpoint_from_base``: the endpoint's path joined to a base URL whose query (a
gateway's key or version) stays a query, after the endpoint's own."""

from __future__ import annotations

import pytest

from yoagent.core.support import endpoint_from_base


def chat(base: str) -> str:
    return f"{base}/chat/completions"


@pytest.mark.parametrize(
    ("base_url", "query", "url"),
    [
        ("https://h/v1", "", "https://h/v1/chat/completions"),
        ("  https://h/v1//  ", "", "https://h/v1/chat/completions"),
        ("https://h/v1?key=k", "", "https://h/v1/chat/completions?key=k"),
        ("https://h/v1/?key=k&v=2", "", "https://h/v1/chat/completions?key=k&v=2"),
        ("https://h/v1?key=k", "alt=sse", "https://h/v1/chat/completions?alt=sse&key=k"),
        ("https://h/v1", "alt=sse", "https://h/v1/chat/completions?alt=sse"),
        ("https://h/v1?", "", "https://h/v1/chat/completions"),  # an empty query: no "?"
        ("https://h/v1#top", "", "https://h/v1/chat/completions"),  # never sent
        ("https://h/v1?key=k#top?x", "", "https://h/v1/chat/completions?key=k"),
    ],
)
def test_the_path_goes_before_the_query(base_url: str, query: str, url: str) -> None:
    assert endpoint_from_base(base_url, chat, query) == url


def test_path_for_sees_the_base_alone() -> None:
    seen: list[str] = []
    endpoint_from_base(" https://h/a/b/?q=1#f ", lambda base: seen.append(base) or base)
    assert seen == ["https://h/a/b"]
