"""What a stdio server prints that is not JSON-RPC: skipped and counted, the first five
lines logged, each cut at 200 bytes and decoded lossily, never ending the connection."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from yoagent.mcp._stdio import _Bridge  # pyright: ignore[reportPrivateUsage]


def bridge() -> _Bridge:
    return _Bridge(SimpleNamespace(non_json_lines=0), "srv")  # type: ignore[arg-type]


def test_the_first_five_lines_that_are_not_json_rpc_are_logged_the_rest_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    lines = bridge()
    for number in range(1, 8):
        assert lines._parse(f"noise {number}".encode()) is None
    assert lines.state.non_json_lines == 7
    assert [record.getMessage() for record in caplog.records] == [
        f"MCP server srv printed a line that is not JSON-RPC (skipped): noise {number}"
        for number in range(1, 6)
    ]


def test_a_skipped_line_is_logged_cut_at_200_bytes_and_decoded_lossily(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="yoagent.mcp")
    lines = bridge()
    assert lines._parse(b"x" * 199 + b"yz" + b"w" * 100) is None
    assert lines._parse(b"bad \xff\xfe bytes") is None
    assert [record.args[1] for record in caplog.records] == [  # type: ignore[index]
        "x" * 199 + "y",
        "bad \ufffd\ufffd bytes",
    ]


def test_blank_lines_are_neither_messages_nor_counted() -> None:
    lines = bridge()
    assert lines._parse(b"") is None and lines._parse(b" \t\r") is None
    assert lines.state.non_json_lines == 0
