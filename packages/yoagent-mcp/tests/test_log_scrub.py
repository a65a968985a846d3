"""A key in the server URL never reaches a log line, whenever the logger that writes it was
made: httpx2 imports httpcore2 (which logs response headers) only when the first client is
built, after the connection started guarding the logs."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from yoagent.core.support import Scrubber, scrub_logs
from yoagent.mcp._transport import SDK_LOGGERS

FRESH_PROCESS = textwrap.dedent(
    """
    import io, logging, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import anyio

    from yoagent.mcp import McpClient, McpError

    SECRET = "sk-live-SECRETSECRET123"


    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # a redirect to a URL that holds the key
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:1/{SECRET}/x")
            self.send_header("content-length", "0")
            self.end_headers()

        do_GET = do_POST


    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    serving = {"poll_interval": 0.05}  # shutdown() waits for the next poll
    threading.Thread(target=server.serve_forever, kwargs=serving, daemon=True).start()
    logs = io.StringIO()
    handler = logging.StreamHandler(logs)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)
    url = f"http://127.0.0.1:{server.server_address[1]}/{SECRET}/mcp"


    async def main():
        try:
            with anyio.fail_after(30):
                async with McpClient.http(url, handshake_timeout=20):
                    print("connected to a server that only redirects?")
        except McpError as error:
            print("ERROR", error)


    assert "httpcore2" not in sys.modules, "httpcore2 was imported before the first connection"
    anyio.run(main)
    server.shutdown()
    print(logs.getvalue())
    """
)


def test_the_first_connection_in_a_fresh_process_is_scrubbed_from_httpcore2_debug_logs(
    tmp_path: Path,
) -> None:
    script = tmp_path / "first_connection.py"
    script.write_text(FRESH_PROCESS)

    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=90, check=False
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ERROR MCP server http://127.0.0.1:" in done.stdout
    lines = done.stdout.splitlines()
    headers = [line for line in lines if "receive_response_headers.complete" in line]
    assert headers and headers[0].startswith("httpcore2.http11 ")
    assert "(b'Location', b'http://127.0.0.1:1/[redacted]/x')" in headers[0]
    assert "SECRETSECRET" not in done.stdout + done.stderr


def test_a_logger_made_after_the_guard_started_is_scrubbed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    secrets = Scrubber(urls=["http://h/sk-made-later-0123/mcp"])
    guard = scrub_logs(secrets, SDK_LOGGERS)
    try:
        late = logging.getLogger("httpcore2.made_after_the_guard")
        late.debug("Location: %s", "http://h/sk-made-later-0123/x")
        logging.getLogger("unrelated.library").debug("sk-made-later-0123")
    finally:
        guard.close()
    late.debug("after the connection: %s", "sk-made-later-0123")

    assert [record.getMessage() for record in caplog.records] == [
        "Location: http://h/[redacted]/x",
        "sk-made-later-0123",  # not the SDK's or its HTTP stack's logger: left alone
        "after the connection: sk-made-later-0123",  # nothing guarded any more
    ]
