"""What a server sends as a log message (``notifications/message``) is logged at debug with
the keys of the server's URL redacted: a server may quote the URL it was reached at."""

from __future__ import annotations

import logging

import pytest
from mcp_helpers import SECRET_PATH

from yoagent.mcp import McpClient

QUERY_KEY = "tok-query-5555566666"


async def test_a_server_log_message_quoting_the_url_is_logged_without_its_keys(
    py_http_secret_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="yoagent.mcp")
    origin = f"http://127.0.0.1:{py_http_secret_port}"
    url = f"{origin}/{SECRET_PATH}/mcp?token={QUERY_KEY}"
    async with McpClient.http(url) as client:
        await client.call_tool("log", {"message": f"serving {url}"})
    logged = [r.getMessage() for r in caplog.records if r.name == "yoagent.mcp"]
    server_said = [message for message in logged if " logged (info): " in message]
    assert server_said == [f"MCP server {origin} logged (info): serving [redacted]"]
    for message in logged:
        assert SECRET_PATH not in message and QUERY_KEY not in message
