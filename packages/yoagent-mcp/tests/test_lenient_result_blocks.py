"""What a server may put in a ``tools/call`` result that the SDK would refuse: each block
judged on its own, a bad one made text with big binary fields bounded, the rest kept as sent."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from yoagent.core.support import reset_warn_once
from yoagent.mcp._lenient import lenient_tool_result


@pytest.fixture(autouse=True)
def warnings_afresh() -> None:
    reset_warn_once()  # each unmodelled type is warned about once per process


def texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"]]


@pytest.mark.parametrize(
    "resource",
    [
        {"uri": "file:///a", "text": "t"},
        {"uri": "file:///a", "blob": "AAAA"},
        {"uri": "file:///a", "text": "t", "blob": "AAAA"},
    ],
)
def test_an_embedded_resource_with_a_uri_and_a_text_or_a_blob_is_kept(
    resource: dict[str, Any],
) -> None:
    block = {"type": "resource", "resource": resource}
    assert lenient_tool_result({"content": [block]})["content"] == [block]


@pytest.mark.parametrize(
    "resource",
    [
        "file:///a",  # not an object
        {"text": "no uri"},
        {"uri": 7, "text": "a uri that is not text"},
        {"uri": "file:///a"},  # neither text nor blob
        {"uri": "file:///a", "text": 7},
        {"uri": "file:///a", "blob": 7},
    ],
)
def test_an_embedded_resource_without_them_becomes_text(resource: Any) -> None:
    block = {"type": "resource", "resource": resource}
    [made] = lenient_tool_result({"content": [block]})["content"]
    assert made["type"] == "text"
    if isinstance(resource, dict) and isinstance(resource.get("text"), str):
        assert made["text"] == resource["text"]  # its own text, not the JSON
    else:
        assert made["text"] == json.dumps(block)


@pytest.mark.parametrize(
    ("block", "kept"),
    [
        ({"type": "text", "text": "t"}, True),
        ({"type": "text", "text": 1}, False),
        ({"type": "image", "data": "AA==", "mimeType": "image/png"}, True),
        ({"type": "image", "data": "AA=="}, False),
        ({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}, True),
        ({"type": "audio", "mimeType": "audio/wav"}, False),
        ({"type": "resource_link", "uri": "file:///a", "name": "a"}, True),
        ({"type": "resource_link", "uri": "file:///a"}, False),
        ({"type": "resource_link", "name": "a"}, False),
    ],
)
def test_each_modelled_type_is_kept_only_with_its_fields(block: dict[str, Any], kept: bool) -> None:
    [made] = lenient_tool_result({"content": [block]})["content"]
    assert (made == block) is kept
    if not kept:
        assert made == {"type": "text", "text": json.dumps(block)}


def test_binary_fields_over_1_kib_are_replaced_by_their_size_at_any_depth() -> None:
    at_limit, over = "x" * 1024, "y" * 1025
    block = {
        "type": "hologram",
        "data": over,
        "blob": at_limit,  # at the bound: kept
        "note": "z" * 5000,  # not a binary field: kept however long
        "parts": [{"blob": over}, [{"data": over}], "w" * 2000],
        "resource": {"blob": over, "uri": "file:///h"},
        "count": [1] * 2000,  # a long list under another name: kept
    }

    [made] = lenient_tool_result({"content": [block]})["content"]

    assert json.loads(made["text"]) == {
        "type": "hologram",
        "data": "<1025 characters>",
        "blob": at_limit,
        "note": "z" * 5000,
        "parts": [{"blob": "<1025 characters>"}, [{"data": "<1025 characters>"}], "w" * 2000],
        "resource": {"blob": "<1025 characters>", "uri": "file:///h"},
        "count": [1] * 2000,
    }


def test_a_binary_field_that_is_not_text_is_kept_whatever_its_length() -> None:
    block = {"type": "hologram", "data": [0] * 2000, "blob": {"x": "short"}}
    [made] = lenient_tool_result({"content": [block]})["content"]
    assert json.loads(made["text"]) == block


def test_a_block_made_text_keeps_non_ascii_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    result = lenient_tool_result({"content": [{"type": "émoji✓", "label": "naïve"}, ["ü"]]})
    assert texts(result) == ['{"type": "émoji✓", "label": "naïve"}', '["ü"]']
    assert [record.getMessage() for record in caplog.records] == [
        "an MCP tool result held a 'émoji✓' block this client does not model; passed on as text",
        "an MCP tool result held a 'list' block this client does not model; passed on as text",
    ]


def test_blocks_that_are_not_objects_are_json_and_named_by_their_python_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    result = lenient_tool_result({"content": [5, None, "plain", {"data": "no type"}]})
    assert texts(result) == ["5", "null", '"plain"', '{"data": "no type"}']
    named = [record.args[0] for record in caplog.records]  # type: ignore[index]
    assert named == ["int", "NoneType", "str", "<no type>"]


def test_each_unmodelled_type_is_warned_about_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    blocks = [{"type": "a"}, {"type": "b"}, {"type": "a"}, 1, 2]
    lenient_tool_result({"content": blocks})
    lenient_tool_result({"content": blocks})
    assert [record.args[0] for record in caplog.records] == ["a", "b", "int"]  # type: ignore[index]


def test_content_that_is_not_a_list_is_read_as_one_block() -> None:
    one = {"type": "text", "text": "alone"}
    assert lenient_tool_result({"content": one})["content"] == [one]
    assert lenient_tool_result({"content": "bare"})["content"] == [
        {"type": "text", "text": '"bare"'}
    ]


def test_a_result_without_content_is_returned_as_it_is() -> None:
    result = {"tools": [], "nextCursor": None}
    assert lenient_tool_result(result) is result


def test_the_result_given_is_not_changed() -> None:
    result: dict[str, Any] = {
        "content": [{"type": "x"}],
        "structuredContent": [1],
        "isError": 1,
    }
    before = json.loads(json.dumps(result))
    out = lenient_tool_result(result)
    assert result == before
    assert out == {
        "content": [{"type": "text", "text": '{"type": "x"}'}, {"type": "text", "text": "[1]"}],
        "isError": True,
    }


@pytest.mark.parametrize(
    ("structured", "extra"),
    [
        ({"a": 1}, None),  # an object is what MCP allows: kept where it is
        ("é", '"é"'),
        (3, "3"),
        ([], "[]"),
    ],
)
def test_structured_content_that_is_not_an_object_becomes_a_last_text_block(
    structured: Any, extra: str | None
) -> None:
    out = lenient_tool_result(
        {"content": [{"type": "text", "text": "t"}], "structuredContent": structured}
    )
    if extra is None:
        assert out["structuredContent"] == structured and texts(out) == ["t"]
    else:
        assert "structuredContent" not in out and texts(out) == ["t", extra]


@pytest.mark.parametrize(
    ("given", "read"),
    [(0, False), (1, True), ("", False), ("yes", True), (None, False), (True, True)],
)
def test_is_error_that_is_not_a_boolean_is_read_by_its_truth(given: Any, read: bool) -> None:
    out = lenient_tool_result({"content": [], "isError": given})
    assert out["isError"] is read


def test_is_error_left_out_stays_left_out() -> None:
    assert "isError" not in lenient_tool_result({"content": []})
