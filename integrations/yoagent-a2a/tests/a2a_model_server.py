"""A scripted OpenAI Chat Completions server on loopback: the model behind the test agents.

``POST /v1/chat/completions`` answers with SSE chunks chosen by the request's last message:

- a tool result → the text ``Result: <its content>`` (``Atlantis`` in it → HTTP 400,
  an error in the middle of a run);
- ``hello`` → reasoning ``Let me think.``, then the text ``Hello there!`` in pieces;
- ``weather CITY`` → a ``get_weather`` call for ``CITY``;
- ``call NAME JSON`` → a call of the tool ``NAME`` with the arguments ``JSON``;
- ``slow`` → ``tick `` every 50 ms, 400 times, or until the client hangs up;
- ``fail`` → HTTP 400;
- anything else → ``echo: <text>``.
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
    daemon_threads = True


class ModelServer:
    """The server, a context manager; ``url`` is the ``base_url`` to give a model."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.hung_up = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                owner.requests.append(body)
                try:
                    self._answer(body["messages"][-1])
                except (BrokenPipeError, ConnectionResetError):
                    owner.hung_up.set()

            def _answer(self, last: dict[str, Any]) -> None:
                content = last.get("content") or ""
                if isinstance(content, list):
                    content = " ".join(part.get("text", "") for part in content)
                if last["role"] == "tool" and "Atlantis" in content:
                    self._json(400, {"error": {"message": "the model broke", "type": "invalid"}})
                    return
                if last["role"] == "tool":
                    chunks = _text([f"Result: {content}"])
                elif content == "hello":
                    chunks = _text(["Hel", "lo there", "!"], reasoning="Let me think.")
                elif content.startswith("weather "):
                    chunks = _call("get_weather", {"city": content.removeprefix("weather ")})
                elif content.startswith("call "):
                    _, name, arguments = content.split(" ", 2)
                    chunks = _call(name, json.loads(arguments))
                elif content == "slow":
                    self._slow()
                    return
                elif content == "fail":
                    self._json(400, {"error": {"message": "bad request", "type": "invalid"}})
                    return
                else:
                    chunks = _text([f"echo: {content}"])
                self._start()
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True

            def _start(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()

            def _slow(self) -> None:
                self._start()
                self.wfile.write(_choice({"role": "assistant", "content": ""}))
                for _ in range(400):
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        owner.hung_up.set()
                        return
                    self.wfile.write(_choice({"content": "tick "}))
                    self.wfile.flush()
                for chunk in _end("stop"):
                    self.wfile.write(chunk)
                self.close_connection = True

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
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _event(payload: dict[str, Any]) -> bytes:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "scripted"}
    return b"data: " + json.dumps({**base, **payload}).encode() + b"\n\n"


def _choice(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def _end(finish: str) -> Iterator[bytes]:
    yield _choice({}, finish)
    usage = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
    }
    yield _event({"choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"


def _text(pieces: list[str], reasoning: str | None = None) -> Iterator[bytes]:
    if reasoning is not None:
        yield _choice({"role": "assistant", "reasoning_content": reasoning})
    for piece in pieces:
        yield _choice({"role": "assistant", "content": piece})
    yield from _end("stop")


def _call(name: str, arguments: dict[str, Any]) -> Iterator[bytes]:
    call = {
        "index": 0,
        "id": f"call_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    yield _choice({"role": "assistant", "content": None, "tool_calls": [call]})
    text = json.dumps(arguments)
    middle = len(text) // 2
    for part in (text[:middle], text[middle:]):
        yield _choice({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
    yield from _end("tool_calls")
