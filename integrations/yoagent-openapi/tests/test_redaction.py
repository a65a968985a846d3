"""What is scrubbed and what is left alone: credential-named headers and real credentials,
never a plain header value or a short credential inside the rest of a result; log records
of loggers made after a call started, in a fresh process as in this one."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from openapi_testing import PETSTORE_30, PetstoreServer

from yoagent.core import ToolContext, ToolError, ToolResult
from yoagent.core.support import Scrubber, scrub_logs
from yoagent.openapi import (
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
    OpenApiAuth,
    OpenApiConfig,
    OpenApiTool,
    OpenApiToolAdapter,
)
from yoagent.openapi._http import HTTP_LOGGERS

TOM = {"id": 2, "name": "Tom", "photoUrls": [], "status": "sold"}


def _adapter(server: PetstoreServer, **config: Any) -> OpenApiToolAdapter:
    return OpenApiToolAdapter.from_file(
        PETSTORE_30, config=OpenApiConfig(base_url=server.origin + "/api/v3", **config)
    )


async def _call(tool: OpenApiTool, **arguments: Any) -> ToolResult:
    return await tool.execute(arguments, ToolContext(tool_call_id="c1", tool_name=tool.name))


def _parts(result_text: str) -> tuple[str, Any]:
    head, _, body = result_text.partition("\n\n")
    return head, json.loads(body)


# --- defect: every header value and every short credential was scrubbed everywhere ------------


async def test_plain_config_headers_are_sent_and_never_redacted_from_the_result() -> None:
    with PetstoreServer() as server:
        adapter = _adapter(
            server,
            auth=ApiKeyAuth("api_key", server.api_key),
            headers={"X-Api-Version": "2", "Accept": "application/json"},
        )
        result = await _call(adapter.tool("getPetById"), petId=2)

    assert server.requests[-1].headers["x-api-version"] == "2"
    assert _parts(result.text) == ("HTTP 200 OK\ncontent-type: application/json", TOM)
    assert result.details["content_type"] == "application/json"


@pytest.mark.parametrize(
    "auth",
    [
        BearerAuth("2"),
        BasicAuth("u", "2"),
        ApiKeyAuth("api_key", "2"),
        ApiKeyAuth("api_key", "2", location="query"),
        ApiKeyAuth("api_key", "2", location="cookie"),
    ],
    ids=["bearer", "basic", "header", "query", "cookie"],
)
async def test_a_short_credential_leaves_the_result_intact(auth: OpenApiAuth) -> None:
    with PetstoreServer(api_key="2") as server:
        result = await _call(_adapter(server, auth=auth).tool("getPetById"), petId=2)

    assert _parts(result.text) == ("HTTP 200 OK\ncontent-type: application/json", TOM)


async def test_a_short_credential_is_still_redacted_in_its_own_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="httpx")
    with PetstoreServer(api_key="40") as server:
        query = _adapter(server, auth=ApiKeyAuth("api_key", "40", location="query"))
        await _call(query.tool("getPetById"), petId=2)
        bearer = _adapter(server, auth=BearerAuth("40"))
        with pytest.raises(ToolError) as refused:
            await _call(bearer.tool("getPetById"), petId=401)

    # httpx logged the URL with the key as its query parameter; the status stays readable.
    assert "/pet/2?api_key=[redacted] " in caplog.text
    assert "api_key=40" not in caplog.text
    assert '"HTTP/1.1 200 OK"' in caplog.text
    # The server echoed the Authorization header: the token goes, the 401 stays.
    assert str(refused.value).startswith("HTTP 401 Unauthorized from GET /pet/{petId}")
    assert "credential Bearer [redacted] may not see pet 401" in str(refused.value)


# --- defect: loggers made after a call started were never scrubbed ----------------------------


def test_a_logger_made_after_the_guard_started_is_scrubbed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    secrets = Scrubber(["sk-made-later-0123"])
    with scrub_logs(secrets, HTTP_LOGGERS):
        late = logging.getLogger("httpcore.made_after_the_guard")
        late.debug("Location: %s", "https://h/?key=sk-made-later-0123")
        logging.getLogger("unrelated.library").debug("sk-made-later-0123")
    late.debug("after the call: %s", "sk-made-later-0123")

    messages = [record.getMessage() for record in caplog.records]
    assert messages == [
        "Location: https://h/?key=[redacted]",
        "sk-made-later-0123",  # not an HTTP library's logger: left alone
        "after the call: sk-made-later-0123",  # no call in flight: nothing to scrub
    ]


FRESH_PROCESS = textwrap.dedent(
    """
    import io, logging, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import anyio

    from yoagent.core import ToolContext, ToolError
    from yoagent.openapi import ApiKeyAuth, OpenApiConfig, OpenApiToolAdapter

    KEY = "AbC/dEf+GhI=jKl~mNoPq"


    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # a trailing-slash redirect that keeps the query, key and all
            self.send_response(301)
            self.send_header("Location", "http://example.invalid" + self.path + "/")
            self.send_header("content-length", "0")
            self.end_headers()


    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    serving = {"poll_interval": 0.05}  # shutdown() waits for the next poll
    threading.Thread(target=server.serve_forever, kwargs=serving, daemon=True).start()
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": f"http://127.0.0.1:{server.server_address[1]}"}],
        "paths": {"/items": {"get": {"operationId": "listItems", "responses": {}}}},
    }
    logs = io.StringIO()
    handler = logging.StreamHandler(logs)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)
    config = OpenApiConfig(auth=ApiKeyAuth("api_key", KEY, location="query"))
    tool = OpenApiToolAdapter.from_spec(spec, config=config).tool("listItems")
    assert "httpcore" not in sys.modules, "httpcore was imported before the first call"


    async def main():
        try:
            await tool.execute({}, ToolContext(tool_call_id="c1", tool_name="listItems"))
        except ToolError as error:
            print("ERROR", str(error).splitlines()[0])


    anyio.run(main)
    server.shutdown()
    print(logs.getvalue())
    """
)


def test_the_first_call_in_a_fresh_process_is_scrubbed_from_httpcore_debug_logs(
    tmp_path: Path,
) -> None:
    script = tmp_path / "first_call.py"
    script.write_text(FRESH_PROCESS)

    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ERROR HTTP 301 Moved Permanently from GET /items" in done.stdout
    lines = done.stdout.splitlines()
    headers = [line for line in lines if "receive_response_headers.complete" in line]
    assert headers and headers[0].startswith("httpcore.http11 ")
    assert "b'http://example.invalid/items?api_key=[redacted]/'" in headers[0]
    for form in ("AbC/dEf", "AbC%2FdEf"):
        assert form not in done.stdout + done.stderr
