"""A small Petstore on loopback, for testing OpenAPI tools against a real HTTP server.

It implements a few of the Petstore's operations under both ``/api/v3`` and
``/api/v31`` (the 3.0 and 3.1 fixtures' server paths), serves the fixtures themselves
(``/api/v3/openapi.yaml``, ``/api/v31/openapi.json``), checks the API key on every
call, records every request, and has a few pets that misbehave on purpose:

- pet 500 answers ``500`` with a JSON error body;
- pet 401 answers ``401`` quoting the API key it was sent (as careless servers do);
- order 999 answers only after ``slow_seconds`` (or when the server stops);
- ``findByTags`` streams ``huge_bytes`` of JSON, until the client hangs up.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

FIXTURES = Path(__file__).parent / "fixtures"
PETSTORE_30 = FIXTURES / "petstore-3.0.yaml"
PETSTORE_31 = FIXTURES / "petstore-3.1.json"
API_KEY = "pk-test-5f8a2c7d9e1b4a6f"
"""The key the server expects: in the ``api_key`` header or query parameter, as a bearer
token, or as the password of basic auth (any user name)."""


@dataclass(slots=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Reply = tuple[int, dict[str, str], bytes]


class PetstoreServer:
    """The Petstore on ``http://127.0.0.1:<port>``; use as a context manager."""

    def __init__(self, *, api_key: str = API_KEY) -> None:
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.pets: dict[int, dict[str, Any]] = {
            1: {"id": 1, "name": "Rex", "photoUrls": [], "status": "available"},
            2: {"id": 2, "name": "Tom", "photoUrls": [], "status": "sold"},
        }
        self.slow_seconds = 30.0
        self.huge_bytes = 64 * 1024 * 1024
        self.huge_sent = 0
        self.huge_done = threading.Event()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> PetstoreServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- the API -------------------------------------------------------------------------

    def _route(self, method: str, path: str, request: Recorded) -> Reply | Callable[[Any], None]:
        if path == "/docs":  # where a document moved
            return 301, {"location": "/api/v31/openapi.json"}, b""
        match = re.fullmatch(r"/api/v31?(/.*)", path)
        if match is None:
            return _json(404, {"message": f"no route {path}"})
        route = match.group(1)
        if route == "/openapi.yaml":
            return 200, {"content-type": "application/yaml"}, PETSTORE_30.read_bytes()
        if route == "/openapi.json":
            return 200, {"content-type": "application/json"}, PETSTORE_31.read_bytes()
        if self.credential(request) is None:
            return _json(401, {"message": "missing or wrong api_key"})
        pet = re.fullmatch(r"/pet/([^/]+)", route)
        if route == "/pet" and method == "POST":
            body = request.json()
            with self._lock:
                new_id = max(self.pets) + 1
                self.pets[new_id] = {**body, "id": new_id}
            return _json(200, self.pets[new_id])
        if route == "/pet/findByStatus" and method == "GET":
            wanted = [v for k, v in request.query if k == "status"] or ["available"]
            found = [p for p in self.pets.values() if p.get("status") in wanted]
            return _json(200, found)
        if route == "/pet/findByTags" and method == "GET":
            return self._huge
        if pet is not None and method in ("GET", "DELETE"):
            return self._pet(method, pet.group(1), request)
        order = re.fullmatch(r"/store/order/([^/]+)", route)
        if order is not None and method == "GET":
            if order.group(1) == "999":
                self.stopping.wait(self.slow_seconds)
            return _json(200, {"id": int(order.group(1)), "status": "placed"})
        return _json(404, {"message": f"no route {method} {route}"})

    def credential(self, request: Recorded) -> str | None:
        """How the request carried the right key (``header``, ``query``...), as sent."""
        authorization = request.headers.get("authorization", "")
        if request.headers.get("api_key") == self.api_key:
            return request.headers["api_key"]
        if ("api_key", self.api_key) in request.query:
            return self.api_key
        if authorization == f"Bearer {self.api_key}":
            return authorization
        if authorization.startswith("Basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            if decoded.partition(":")[2] == self.api_key:
                return authorization
        cookies = dict(
            piece.strip().split("=", 1)
            for piece in request.headers.get("cookie", "").split(";")
            if "=" in piece
        )
        if cookies.get("api_key") == self.api_key:
            return self.api_key
        return None

    def _pet(self, method: str, raw_id: str, request: Recorded) -> Reply:
        if not raw_id.isdigit():
            return _json(400, {"message": f"Invalid ID supplied: {raw_id}"})
        pet_id = int(raw_id)
        if pet_id == 500:
            return _json(500, {"message": "the pet database is on fire"})
        if pet_id == 401:
            sent = self.credential(request)
            return _json(401, {"message": f"credential {sent} may not see pet 401"})
        with self._lock:
            found = self.pets.get(pet_id)
            if found is not None and method == "DELETE":
                del self.pets[pet_id]
        if found is None:
            return _json(404, {"message": "Pet not found"})
        return _json(200, found) if method == "GET" else (200, {}, b"")

    def _huge(self, handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(self.huge_bytes))
        handler.end_headers()
        chunk = b'{"name": "doggie", "tags": ["a", "b"]},' * 1024
        sent = 0
        try:
            while sent < self.huge_bytes and not self.stopping.is_set():
                piece = chunk[: self.huge_bytes - sent]
                handler.wfile.write(piece)
                sent += len(piece)
        except OSError:
            handler.close_connection = True
        finally:
            with self._lock:
                self.huge_sent = sent
            self.huge_done.set()

    # --- plumbing ------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                recorded = Recorded(
                    method=self.command,
                    path=parts.path,
                    query=parse_qsl(parts.query, keep_blank_values=True),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                with server._lock:
                    server.requests.append(recorded)
                outcome = server._route(self.command, parts.path, recorded)
                if callable(outcome):
                    outcome(self)
                    return
                status, headers, payload = outcome
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        return Handler


def _json(status: int, value: Any) -> Reply:
    return status, {"content-type": "application/json"}, json.dumps(value).encode()
