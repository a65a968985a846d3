"""URL secrets are scrubbed exactly; lenient results keep what the SDK models and mend the rest."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from yoagent.core.support import Scrubber, display_url, scrub_logs
from yoagent.mcp._client import SDK_LOGGERS
from yoagent.mcp._lenient import lenient_tool_result


def url_origin(url: str) -> str:
    return display_url(url, path=False)


def test_the_origin_drops_userinfo_path_query_and_fragment() -> None:
    assert url_origin("https://u:p@Host.example:8443/a/b?c=d#e") == "https://host.example:8443"
    assert url_origin("http://[::1]:9/mcp") == "http://[::1]:9"


def test_every_long_piece_of_the_url_is_scrubbed_and_a_key_free_path_stays_readable() -> None:
    url = "https://alice:hunter2hunter2@h.example/v1/sk-abcdef123456/mcp?api_key=k3y-0987654321&x=1"
    secrets = Scrubber(urls=[url])
    text = f"POST {url} failed; key sk-abcdef123456; q k3y-0987654321; pw hunter2hunter2"
    scrubbed = secrets.scrub(text)
    for secret in ("sk-abcdef123456", "k3y-0987654321", "hunter2hunter2", "api_key=k3y"):
        assert secret not in scrubbed
    assert scrubbed.startswith("POST [redacted] failed; key [redacted]")
    plain = Scrubber(urls=["http://127.0.0.1:8000/mcp"])
    assert not plain
    assert plain.scrub("POST http://127.0.0.1:8000/mcp failed") == (
        "POST http://127.0.0.1:8000/mcp failed"
    )


def test_a_percent_encoded_key_is_scrubbed_as_written_and_decoded() -> None:
    secrets = Scrubber(urls=["https://h/mcp?token=a%2Bb%2Bc%2Bd%2Be"])
    assert "a+b+c+d+e" not in secrets.scrub("token a+b+c+d+e")
    assert "a%2Bb%2Bc%2Bd%2Be" not in secrets.scrub("token=a%2Bb%2Bc%2Bd%2Be")


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
