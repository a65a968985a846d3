"""A scripted SystemOne decision endpoint on loopback, for ``yoagent --tool-gate``.

``POST /v1/systemone`` answers every yes/no question by its id from a fixed table and
records each request body and its headers. ``url`` is what ``--tool-gate`` (or
``TYPESAFE_BASE_URL``) takes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class DecisionServer:
    """The server; use as a context manager."""

    def __init__(self, nouls: Mapping[str, float]) -> None:
        self.nouls = dict(nouls)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(body)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.rstrip("/") != "/v1/systemone":
                    self._json(404, {"error": "not found"})
                    return
                answers = {
                    qid: {"type": "noul", "noul": owner.nouls[qid]}
                    for qid in body.get("questions", {})
                    if qid in owner.nouls
                }
                usage = {"input_tokens": 120, "output_tokens": 2}
                self._json(200, {"model": "jev-test", "answers": answers, "usage": usage})

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> DecisionServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
