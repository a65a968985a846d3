"""A scripted OpenAI-compatible model server on loopback, shared by every Ray worker.

``POST /v1/chat/completions`` answers with Chat Completions SSE chunks, chosen by the
last message of the request (so one server drives many independent runs):

- a tool result → the text ``done``;
- a user prompt ``slow S`` → the text ``ok`` after ``S`` seconds (or nothing, once the
  client hangs up);
- ``bash CMD`` → one ``bash`` tool call running ``CMD``;
- ``call NAME`` → one call of the tool ``NAME`` with no arguments;
- ``fix REPO ...`` → a coding model at work: one ``bash`` call that fixes ``calc.py`` in
  the folder ``REPO`` (``a - b`` becomes ``a + b``) and runs its test;
- ``fail`` → HTTP 400 (not retryable);
- ``flaky KEY N`` → HTTP 429 to the first ``N`` requests naming ``KEY``, then ``ok``;
- anything else → the text ``echo: <prompt>``.

Every reply reports ``PROMPT_TOKENS`` in and ``COMPLETION_TOKENS`` out. The server counts
requests in flight; with ``max_concurrent`` set, a request arriving above it gets a 429
(a vendor's rate limit), and ``peak``/``rejected`` say what it saw.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 11
COMPLETION_TOKENS = 7


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 drops bursts of connections (1 s SYN retries)
    daemon_threads = True


class ModelServer:
    """The server; a context manager. ``url`` is the ``base_url`` to give a model."""

    def __init__(self, *, max_concurrent: int | None = None) -> None:
        self.max_concurrent = max_concurrent
        self.in_flight = 0
        self.peak = 0
        self.requests = 0
        self.rejected = 0
        self.flaky: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                if not owner._enter():
                    self._json(429, {"error": {"message": "slow down", "type": "rate_limit"}})
                    return
                self.counted = True
                try:
                    self._answer(body["messages"][-1])
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    self._done()

            def _done(self) -> None:
                """Stop counting this request (once), before its last byte goes out: a
                client that got its reply and sends the next request must find the slot
                free, as with a real provider."""
                if self.counted:
                    self.counted = False
                    owner._leave()

            def _answer(self, last: dict[str, Any]) -> None:
                content = last.get("content") or ""
                if isinstance(content, list):
                    content = " ".join(part.get("text", "") for part in content)
                if last["role"] == "tool":
                    chunks = _text("done")
                elif content.startswith("slow "):
                    if self._client_left_within(float(content.split()[1])):
                        return
                    chunks = _text("ok")
                elif content.startswith("bash "):
                    chunks = _tool_call("bash", {"command": content.removeprefix("bash ")})
                elif content.startswith("fix "):
                    repo = content.split()[1]
                    command = f"cd {repo} && sed -i 's/a - b/a + b/' calc.py && python test_calc.py"
                    chunks = _tool_call("bash", {"command": command})
                elif content.startswith("call "):
                    chunks = _tool_call(content.split()[1], {})
                elif content.startswith("flaky ") and owner._flaky(content):
                    self._json(429, {"error": {"message": "flaky", "type": "rate_limit"}})
                    return
                elif content.startswith("flaky "):
                    chunks = _text("ok")
                elif content == "fail":
                    self._json(400, {"error": {"message": "bad request", "type": "invalid"}})
                    return
                else:
                    chunks = _text(f"echo: {content}")
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                *body_chunks, last_chunk = chunks
                for chunk in body_chunks:
                    self.wfile.write(chunk)
                self.wfile.flush()
                self._done()
                self.wfile.write(last_chunk)
                self.wfile.flush()
                self.close_connection = True

            def _client_left_within(self, seconds: float) -> bool:
                """Wait ``seconds``; True as soon as the client hangs up (or we stop), so a
                cancelled request stops counting as in flight."""
                deadline = time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0 and not owner._stopping.is_set():
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.2))
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        return True
                return owner._stopping.is_set()

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def reset(self, *, max_concurrent: int | None = None) -> None:
        """Forget the counts and set a new limit."""
        with self._lock:
            self.max_concurrent = max_concurrent
            self.peak = self.requests = self.rejected = 0

    def _enter(self) -> bool:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            if self.max_concurrent is not None and self.in_flight > self.max_concurrent:
                self.in_flight -= 1
                self.rejected += 1
                return False
            return True

    def _flaky(self, content: str) -> bool:
        """True while ``flaky KEY N`` has been answered fewer than N times."""
        _, key, failures = content.split()
        with self._lock:
            seen = self.flaky.get(key, 0)
            self.flaky[key] = seen + 1
            return seen < int(failures)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()


def _event(payload: dict[str, Any]) -> bytes:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "scripted"}
    return b"data: " + json.dumps({**base, **payload}).encode() + b"\n\n"


def _choice(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def _usage() -> bytes:
    usage = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
    }
    return _event({"choices": [], "usage": usage})


def _text(text: str) -> Iterator[bytes]:
    yield _choice({"role": "assistant", "content": text})
    yield _choice({}, "stop")
    yield _usage()
    yield b"data: [DONE]\n\n"


def _tool_call(name: str, arguments: dict[str, Any]) -> Iterator[bytes]:
    call = {
        "index": 0,
        "id": f"call_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    yield _choice({"role": "assistant", "content": None, "tool_calls": [call]})
    yield _choice({}, "tool_calls")
    yield _usage()
    yield b"data: [DONE]\n\n"


if __name__ == "__main__":  # a server in a process of its own (the benchmark's)
    with ModelServer() as running:
        print(running.url, flush=True)
        threading.Event().wait()
