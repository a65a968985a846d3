"""The SDK's loggers are scrubbed of URL secrets; lenient results keep what the SDK models and
mend the rest."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from yoagent.core.support import Scrubber, scrub_logs
from yoagent.mcp._lenient import lenient_tool_result
from yoagent.mcp._transport import SDK_LOGGERS


def test_guarded_loggers_scrub_messages_arguments_and_tracebacks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = Scrubber(urls=["http://h/sk-logged-secret-42/mcp"])
    caplog.set_level(logging.DEBUG)
    guard = scrub_logs(secrets, SDK_LOGGERS)
    try:
        log = logging.getLogger("httpx2")
        log.info("HTTP Request: %s %s", "POST", "http://h/sk-logged-secret-42/mcp")
        try:
            raise ValueError("bad url http://h/sk-logged-secret-42/mcp")
        except ValueError:
            log.exception("failed")
    finally:
        guard.close()
    assert "sk-logged-secret-42" not in caplog.text
    assert caplog.text.count("[redacted]") >= 2


def test_wellformed_blocks_pass_unchanged() -> None:
    result = {
        "content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "u", "text": "t"}},
        ],
        "isError": False,
    }
    assert lenient_tool_result(result) == result


def test_importing_yoagent_core_or_yoagent_mcp_does_not_import_the_sdk() -> None:
    probe = (
        "import sys, yoagent.core, yoagent.mcp; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'httpx2')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
