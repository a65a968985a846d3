"""A scripted OpenAI Chat Completions server on loopback, for durable runs in worker
processes that the tests kill.

The reply depends on the conversation, never on the clock, so a run and its recovery see
the same replies (tool call ids included). The prompt (first user message) picks the
script; ``turn`` is the number of assistant replies already in the request:

- ``effects N ...``: ``N`` turns each calling ``effect`` with ``{"n": turn}``, then the
  text ``done``;
- ``approve ...``: one ``guarded`` call with ``{"n": 1}``, then ``done``;
- ``delegate ...``: one call of the sub-agent tool ``helper`` with ``{"task": "help"}``,
  then ``done``; the sub-agent (whose prompt is ``help``) answers ``helped``;
- ``slow ...``: the text ``slow reply``, 0.05 s between chunks;
- anything else: the text ``echo: <prompt>``.

Every reply streams in several chunks and reports ``PROMPT_TOKENS`` / ``COMPLETION_TOKENS``.
``completed[key]`` counts the replies sent whole, by ``(prompt, turn)``. A hold
(:meth:`hold`) makes the next matching request stop after ``chunks`` chunks until the
client goes away (or :meth:`release` lets it go on); ``held`` is set when it got
there. With a limit set (:meth:`set_limit`), a request above it gets a 429.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 11
COMPLETION_TOKENS = 7


@dataclass
class Hold:
    prompt: str
    turn: int
    chunks: int
    held: threading.Event


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True


class ModelServer:
    """The server; a context manager. ``url`` is the ``base_url`` to give a model."""

    def __init__(self) -> None:
        self.completed: Counter[tuple[str, int]] = Counter()
        self.max_concurrent: int | None = None
        self.in_flight = 0
        self.peak = 0
        self.rejected = 0
        self._holds: list[Hold] = []
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            counted = False  # this request holds a slot (see done())
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()  # replies go out at once (no Nagle delay on small writes)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                if not owner._enter():
                    self._reject()
                    return
                self.counted = True
                try:
                    if body.get("stream"):
                        owner._answer(self, body["messages"])
                    else:
                        owner._answer_whole(self, body["messages"])
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    self.done()

            def done(self) -> None:
                """Stop counting this request (once), before its last byte goes out: a
                client that got its reply and sends the next request must find the slot
                free, as with a real provider."""
                if self.counted:
                    self.counted = False
                    owner._leave()

            def _reject(self) -> None:
                data = json.dumps({"error": {"message": "slow down", "type": "rate_limit"}})
                self.send_response(429)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("retry-after", "0.05")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(data.encode())
                self.close_connection = True

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def hold(self, prompt: str, turn: int, *, chunks: int = 1) -> threading.Event:
        """Stop the next reply to ``(prompt, turn)`` after ``chunks`` chunks; the event is
        set once it stopped there."""
        held = threading.Event()
        with self._lock:
            self._holds.append(Hold(prompt, turn, chunks, held))
        return held

    def release(self) -> None:
        """Let every held reply go on to its end."""
        self._released.set()

    def set_limit(self, max_concurrent: int | None) -> None:
        with self._lock:
            self.max_concurrent = max_concurrent
            self.peak = self.rejected = 0

    def _enter(self) -> bool:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            if self.max_concurrent is not None and self.in_flight > self.max_concurrent:
                self.in_flight -= 1
                self.rejected += 1
                return False
            return True

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _take_hold(self, prompt: str, turn: int) -> Hold | None:
        with self._lock:
            for hold in self._holds:
                if hold.prompt == prompt and hold.turn == turn:
                    self._holds.remove(hold)
                    return hold
        return None

    def _answer(self, handler: BaseHTTPRequestHandler, messages: list[dict[str, Any]]) -> None:
        prompt = _text(next(m for m in messages if m["role"] == "user"))
        turn = sum(1 for m in messages if m["role"] == "assistant")
        chunks = list(_script(prompt, turn))
        hold = self._take_hold(prompt, turn)
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        slow = prompt.startswith("slow ")
        for index, chunk in enumerate(chunks):
            if hold is not None and index == hold.chunks:
                hold.held.set()
                if not self._wait_for_release(handler):
                    return
            if slow and index:
                time.sleep(0.05)
            if index == len(chunks) - 1:
                handler.done()  # pyright: ignore[reportAttributeAccessIssue]
            handler.wfile.write(chunk)
            handler.wfile.flush()
        with self._lock:
            self.completed[(prompt, turn)] += 1
        handler.close_connection = True

    def _answer_whole(
        self, handler: BaseHTTPRequestHandler, messages: list[dict[str, Any]]
    ) -> None:
        prompt = _text(next(m for m in messages if m["role"] == "user"))
        turn = sum(1 for m in messages if m["role"] == "assistant")
        data = json.dumps(completion(prompt, turn)).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.done()  # pyright: ignore[reportAttributeAccessIssue]
        handler.wfile.write(data)
        with self._lock:
            self.completed[(prompt, turn)] += 1

    def _wait_for_release(self, handler: BaseHTTPRequestHandler) -> bool:
        """Hold the reply until released (True), or until the client is gone (killed) or
        the server stops (False)."""
        connection = handler.connection
        connection.settimeout(0.05)
        try:
            while not self._stopping.is_set():
                if self._released.is_set():
                    return True
                try:
                    if not connection.recv(1):
                        return False
                except TimeoutError:
                    continue
                except OSError:
                    return False
            return False
        finally:
            connection.settimeout(None)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content)
    return str(content)


Plan = tuple[str, str, dict[str, Any]]
"""A reply: ``("text", text, {})`` or ``("call", call id, {"name": ..., "arguments": ...})``."""


def _plan(prompt: str, turn: int) -> Plan:
    words = prompt.split()
    if words and words[0] == "effects" and turn < int(words[1]):
        return ("call", f"call_{turn}", {"name": "effect", "arguments": {"n": turn}})
    if words and words[0] == "approve" and turn == 0:
        return ("call", "call_0", {"name": "guarded", "arguments": {"n": 1}})
    if words and words[0] == "delegate" and turn == 0:
        return ("call", "call_0", {"name": "helper", "arguments": {"task": "help"}})
    if words and words[0] == "slow":
        return ("text", "slow reply", {})
    if prompt == "help":
        return ("text", "helped", {})
    if words and words[0] in ("effects", "approve", "delegate"):
        return ("text", "done", {})
    return ("text", f"echo: {prompt}", {})


def _script(prompt: str, turn: int) -> Iterator[bytes]:
    kind, value, call = _plan(prompt, turn)
    if kind == "call":
        yield from _tool_call(value, call["name"], call["arguments"])
    else:
        yield from _reply(value)


def completion(prompt: str, turn: int) -> dict[str, Any]:
    """The same reply as one JSON ``chat.completion`` (a request with ``stream`` off)."""
    kind, value, call = _plan(prompt, turn)
    message: dict[str, Any] = {"role": "assistant", "content": value if kind == "text" else None}
    if kind == "call":
        function = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        message["tool_calls"] = [{"id": value, "type": "function", "function": function}]
    usage = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
    }
    finish = "tool_calls" if kind == "call" else "stop"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


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


def _reply(text: str) -> Iterator[bytes]:
    yield _choice({"role": "assistant", "content": ""})
    for index in range(0, len(text), 3):
        yield _choice({"content": text[index : index + 3]})
    yield _choice({}, "stop")
    yield _usage()
    yield b"data: [DONE]\n\n"


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> Iterator[bytes]:
    encoded = json.dumps(arguments)
    head = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    yield _choice({"role": "assistant", "content": None, "tool_calls": [head]})
    for index in range(0, len(encoded), 4):
        piece = {"index": 0, "function": {"arguments": encoded[index : index + 4]}}
        yield _choice({"tool_calls": [piece]})
    yield _choice({}, "tool_calls")
    yield _usage()
    yield b"data: [DONE]\n\n"


if __name__ == "__main__":  # a server in a process of its own (the benchmark's)
    with ModelServer() as running:
        print(running.url, flush=True)
        threading.Event().wait()
