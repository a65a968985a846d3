"""Parameter styles on the wire, after the specification's style table (and RFC 6570)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from yoagent.core import ToolContext
from yoagent.openapi import OpenApiConfig, OpenApiToolAdapter
from yoagent.openapi._serialize import (
    SerializeProblem,
    cookie_pairs,
    header_value,
    path_value,
    query_pairs,
)

PRIMITIVE = "blue"
ARRAY = ["blue", "black", "brown"]
OBJECT = {"R": 100, "G": 200, "B": 150}
STRINGS = {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize(
    ("style", "explode", "expected"),
    [
        ("simple", False, ("blue", "blue,black,brown", "R,100,G,200,B,150")),
        ("simple", True, ("blue", "blue,black,brown", "R=100,G=200,B=150")),
        ("label", False, (".blue", ".blue,black,brown", ".R,100,G,200,B,150")),
        ("label", True, (".blue", ".blue.black.brown", ".R=100.G=200.B=150")),
        ("matrix", False, (";color=blue", ";color=blue,black,brown", ";color=R,100,G,200,B,150")),
        (
            "matrix",
            True,
            (";color=blue", ";color=blue;color=black;color=brown", ";R=100;G=200;B=150"),
        ),
    ],
)
def test_path_styles(style: str, explode: bool, expected: tuple[str, str, str]) -> None:
    got = tuple(path_value("color", value, style, explode) for value in (PRIMITIVE, ARRAY, OBJECT))

    assert got == expected


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("form", None, ARRAY, [("color", "blue"), ("color", "black"), ("color", "brown")]),
        ("form", False, ARRAY, [("color", "blue,black,brown")]),
        ("form", True, OBJECT, [("R", "100"), ("G", "200"), ("B", "150")]),
        ("form", False, OBJECT, [("color", "R,100,G,200,B,150")]),
        ("spaceDelimited", False, ARRAY, [("color", "blue black brown")]),
        ("pipeDelimited", False, ARRAY, [("color", "blue|black|brown")]),
        (
            "deepObject",
            True,
            OBJECT,
            [("color[R]", "100"), ("color[G]", "200"), ("color[B]", "150")],
        ),
        (None, None, True, [("color", "true")]),
        (None, None, None, [("color", "")]),
        (None, None, 2.5, [("color", "2.5")]),
    ],
)
def test_query_styles(style: str | None, explode: bool | None, value: Any, expected: Any) -> None:
    assert query_pairs("color", value, style, explode) == expected


def test_path_values_are_percent_encoded_and_cannot_be_dot_segments() -> None:
    assert path_value("p", "a/b c?d#e", None, None) == "a%2Fb%20c%3Fd%23e"
    assert path_value("p", "..", None, None) == "%2E%2E"
    assert path_value("p", ".", None, None) == "%2E"
    assert path_value("p", "v1.2", None, None) == "v1.2"


def test_a_header_value_with_a_line_break_is_refused() -> None:
    assert header_value("X-Tag", ["a", "b"], None) == "a,b"
    with pytest.raises(SerializeProblem, match="printable ASCII"):
        header_value("X-Tag", "a\r\nInjected: yes", None)


def test_a_cookie_value_cannot_end_its_cookie_early() -> None:
    assert cookie_pairs("session", "abc; admin=1", None) == [("session", "abc%3B%20admin%3D1")]


def test_a_wrong_style_for_the_location_is_refused() -> None:
    with pytest.raises(SerializeProblem, match="not a path style"):
        path_value("p", "x", "form", None)
    with pytest.raises(SerializeProblem, match="deepObject needs an object"):
        query_pairs("p", "x", "deepObject", True)


async def test_parameters_of_every_location_arrive_as_styled() -> None:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/items/{ids}": {
                "get": {
                    "operationId": "getItems",
                    "parameters": [
                        {"name": "ids", "in": "path", "required": True, "style": "label",
                         "schema": {"type": "array", "items": {"type": "integer"}}},
                        {"name": "tag", "in": "query", "schema": STRINGS},
                        {"name": "filter", "in": "query", "style": "deepObject", "explode": True,
                         "schema": {"type": "object"}},
                        {"name": "where", "in": "query",
                         "content": {"application/json": {"schema": {"type": "object"}}}},
                        {"name": "X-Flags", "in": "header", "schema": STRINGS},
                        {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }  # fmt: skip
    async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
        adapter = OpenApiToolAdapter.from_spec(
            spec, config=OpenApiConfig(base_url="http://api.test/v1"), client=client
        )
        await adapter.tool("getItems").execute(
            {
                "ids": [1, 2],
                "tag": ["a b", "c"],
                "filter": {"age": 3},
                "where": {"name": "Rex"},
                "X-Flags": ["x", "y"],
                "session": "s1",
            },
            ToolContext(tool_call_id="c1", tool_name="getItems"),
        )

    (request,) = seen
    assert request.url.path == "/v1/items/.1,2"
    assert list(request.url.params.multi_items()) == [
        ("tag", "a b"),
        ("tag", "c"),
        ("filter[age]", "3"),
        ("where", '{"name":"Rex"}'),
    ]
    assert request.headers["x-flags"] == "x,y"
    assert request.headers["cookie"] == "session=s1"
