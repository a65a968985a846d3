"""A scripted SSE server on loopback, for testing agents against real HTTP without a vendor.

It serves queued replies to any ``POST`` in order, records each request, and runs in a
background thread, so it works under any event loop::

    with ScriptedSseServer() as server:
        server.enqueue(sse_body)  # bytes, or a ScriptedReply (status, pieces, delay)
        config = ModelConfig(..., base_url=server.url, api_key="test")

For Bedrock, :func:`bedrock_event_stream` frames ConverseStream events as the binary
eventstream and :func:`bedrock_reply` wraps them in a reply with the right content type.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._eventstream import encode_frame

EVENTSTREAM_CONTENT_TYPE = "application/vnd.amazon.eventstream"


@dataclass(slots=True)
class ScriptedReply:
    """One reply: status, headers, and the body as pieces sent ``delay`` seconds apart."""

    pieces: list[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    delay: float = 0.0


def bedrock_event_stream(events: Iterable[tuple[str, Mapping[str, Any]]]) -> bytes:
    """A Bedrock ConverseStream body: each ``(event type, payload)`` as one eventstream frame.

    For example ``[("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
    ("contentBlockStop", {"contentBlockIndex": 0}), ("messageStop", {"stopReason":
    "end_turn"}), ("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1}})]``.
    """
    return b"".join(
        encode_frame(
            {":event-type": name, ":content-type": "application/json", ":message-type": "event"},
            json.dumps(payload).encode(),
        )
        for name, payload in events
    )


def bedrock_reply(events: Iterable[tuple[str, Mapping[str, Any]]]) -> ScriptedReply:
    """A scripted 200 reply carrying ``events`` as a Bedrock eventstream."""
    return ScriptedReply(
        [bedrock_event_stream(events)], headers={"content-type": EVENTSTREAM_CONTENT_TYPE}
    )


class _Server(ThreadingHTTPServer):
    # The default backlog (5) resets connections when many agents connect at once.
    request_queue_size = 256
    daemon_threads = True


@dataclass(slots=True)
class RecordedRequest:
    """What the server received."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class ScriptedSseServer:
    """Serves queued :class:`ScriptedReply` values on ``http://127.0.0.1:<port>``.

    ``check`` sees each request first: a reply it returns is sent instead of the next
    queued one (say, a 403 for a request whose signature it recomputed and found wrong).
    """

    def __init__(
        self, check: Callable[[RecordedRequest], ScriptedReply | None] | None = None
    ) -> None:
        self._check = check
        self._replies: deque[ScriptedReply] = deque()
        self.requests: list[RecordedRequest] = []
        self.connections = 0
        self.disconnects = 0
        self.disconnected = threading.Event()
        """Set when a client went away before its reply was fully sent."""
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        # shutdown() waits for serve_forever's next poll: 0.5 s at its default.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """The server's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, reply: ScriptedReply | bytes) -> None:
        """Serve ``reply`` to the next request (bytes: one 200 event-stream piece)."""
        with self._lock:
            self._replies.append(
                reply if isinstance(reply, ScriptedReply) else ScriptedReply([reply])
            )

    def __enter__(self) -> ScriptedSseServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self) -> ScriptedReply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return ScriptedReply(
            [b'{"error": "no reply scripted"}'],
            status=500,
            headers={"content-type": "application/json"},
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Without it, Nagle's algorithm holds small writes back ~40 ms.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with server._lock:
                    server.connections += 1

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = RecordedRequest(self.path, headers, self.rfile.read(length))
                with server._lock:
                    server.requests.append(request)
                refused = server._check(request) if server._check is not None else None
                reply = refused if refused is not None else server._next()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(sum(len(p) for p in reply.pieces)))
                self.end_headers()
                try:
                    for piece in reply.pieces:
                        if reply.delay:
                            time.sleep(reply.delay)
                        self.wfile.write(piece)
                        self.wfile.flush()
                except OSError:
                    with server._lock:
                        server.disconnects += 1
                    server.disconnected.set()
                    self.close_connection = True

        return Handler
