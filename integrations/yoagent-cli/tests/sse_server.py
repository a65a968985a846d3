"""A scripted OpenAI-compatible server on loopback, for driving the real ``yoagent``.

``POST /v1/chat/completions`` answers with Chat Completions SSE chunks, and
``POST /v1/responses`` with Responses API events (what ``--provider openai`` speaks), from
one script of :class:`Reply` objects (text pieces with optional delays, reasoning, tool
calls, an HTTP error), one reply per request of either kind. Every request body is
recorded, with its headers under ``_headers`` and its path under ``_path``.
``GET /v1/models`` lists one model.

Run it alone for trying the CLI by hand (a small rule-based responder):

    uv run python integrations/yoagent-cli/tests/sse_server.py --port 8765
    uv run yoagent --base-url http://127.0.0.1:8765/v1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-model"


@dataclass
class Text:
    """A piece of the reply's text, sent after ``delay`` seconds."""

    text: str
    delay: float = 0.0


@dataclass
class Think:
    """A piece of reasoning (``reasoning_content``), sent after ``delay`` seconds."""

    text: str
    delay: float = 0.0


@dataclass
class Call:
    """A tool call (its arguments are streamed in two pieces)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""
    delay: float = 0.0


@dataclass
class Reply:
    """One response: SSE ``parts``, or an HTTP error when ``status`` is not 200."""

    parts: list[Text | Think | Call] = field(default_factory=list)
    status: int = 200
    error: str = "scripted failure"
    usage: tuple[int, int, int] = (100, 20, 0)  # prompt (cached included), completion, cached


def text(*pieces: str, delay: float = 0.0) -> Reply:
    """A reply streaming ``pieces`` of text."""
    return Reply([Text(piece, delay) for piece in pieces])


def call(name: str, /, **arguments: Any) -> Reply:
    """A reply asking for one tool call."""
    return Reply([Call(name, arguments)])


Responder = Callable[[dict[str, Any]], Reply]


ENDPOINTS = ("models", "chat/completions", "responses")
"""What a full server offers: the model list and both OpenAI protocols."""

NOT_FOUND_PAGE = (
    "<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body>\n"
    "<center><h1>404 Not Found</h1></center>\n<hr><center>nginx/1.24.0</center>\n"
    "</body>\n</html>\n"
)
"""A reverse proxy's page for a path its server does not have."""


class ScriptedServer:
    """The server; use as a context manager. ``url`` is the ``--base-url`` to pass."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        responder: Responder | None = None,
        port: int = 0,
        serves: Iterable[str] = ENDPOINTS,
    ) -> None:
        self.serves = frozenset(serves)
        """The endpoints it offers; the others answer a web server's HTML 404 page."""
        self.replies: deque[Reply] = deque(replies)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self._missing():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": MODEL}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self._missing():
                    return
                path = self.path.rstrip("/")
                if path.endswith("/chat/completions"):
                    chunks = owner._chunks
                elif path.endswith("/responses"):
                    chunks = owner._response_events
                else:
                    self._json(404, {"error": {"message": "not found"}})
                    return
                reply = owner._next({**body, "_path": path}, dict(self.headers))
                if reply.status != 200:
                    self._json(
                        reply.status,
                        {"error": {"message": reply.error, "type": "scripted", "code": None}},
                    )
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                try:
                    for chunk in chunks(reply):
                        if isinstance(chunk, float):
                            if owner.stopping.wait(chunk):
                                return
                            continue
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return

            def _missing(self) -> bool:
                """Answer a known endpoint the server does not offer, as a web server would."""
                path = self.path.split("?", 1)[0].rstrip("/")
                endpoint = next((e for e in ENDPOINTS if path.endswith("/" + e)), None)
                if endpoint is None or endpoint in owner.serves:
                    return False
                page = NOT_FOUND_PAGE.encode()
                self.send_response(404)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return True

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        # Polled often: stopping waits for the loop to notice, half a second by default.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        with self._lock:
            self.replies.extend(replies)

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append({**body, "_headers": headers})
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            return self.responder(chat_messages(body))
        return text("(no more scripted replies)")

    def _chunks(self, reply: Reply) -> Iterable[bytes | float]:
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": MODEL}

        def event(payload: dict[str, Any]) -> bytes:
            return b"data: " + json.dumps({**base, **payload}).encode() + b"\n\n"

        def choice(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        yield choice({"role": "assistant", "content": ""})
        calls = 0
        for part in reply.parts:
            if part.delay:
                yield part.delay
            if isinstance(part, Text):
                yield choice({"content": part.text})
                continue
            if isinstance(part, Think):
                yield choice({"reasoning_content": part.text})
                continue
            arguments = json.dumps(part.arguments)
            half = len(arguments) // 2
            call_id = part.id or f"call_{int(time.time() * 1000)}_{calls}"
            head = {
                "index": calls,
                "id": call_id,
                "type": "function",
                "function": {"name": part.name, "arguments": arguments[:half]},
            }
            yield choice({"tool_calls": [head]})
            yield choice(
                {"tool_calls": [{"index": calls, "function": {"arguments": arguments[half:]}}]}
            )
            calls += 1
        yield choice({}, "tool_calls" if calls else "stop")
        prompt, completion, cached = reply.usage
        yield event(
            {
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }
        )
        yield b"data: [DONE]\n\n"

    def _response_events(self, reply: Reply) -> Iterable[bytes | float]:
        """The reply as Responses API events: one reasoning item per run of ``Think``
        parts, one message item per run of ``Text`` parts, one function call per ``Call``,
        each opened, streamed and closed with its final copy, then ``response.completed``."""
        number = 0

        def event(kind: str, **payload: Any) -> bytes:
            nonlocal number
            data = json.dumps({"type": kind, **payload, "sequence_number": number})
            number += 1
            return f"event: {kind}\n".encode() + b"data: " + data.encode() + b"\n\n"

        response = {"id": "resp_scripted", "object": "response", "model": MODEL}
        yield event("response.created", response={**response, "status": "in_progress"})
        index = -1
        open_item: dict[str, Any] | None = None  # the message or reasoning being streamed
        streamed = ""

        def close() -> Iterable[bytes]:
            nonlocal open_item, streamed
            if open_item is None:
                return
            if open_item["type"] == "message":
                content = [{"type": "output_text", "text": streamed, "annotations": []}]
                done = {**open_item, "status": "completed", "content": content}
            else:
                done = {**open_item, "summary": [{"type": "summary_text", "text": streamed}]}
            yield event("response.output_item.done", output_index=index, item=done)
            open_item, streamed = None, ""

        calls = 0
        for part in reply.parts:
            if part.delay:
                yield part.delay
            kind = "message" if isinstance(part, Text) else "reasoning"
            if isinstance(part, Call):
                yield from close()
                index += 1
                arguments = json.dumps(part.arguments)
                half = len(arguments) // 2
                item = {
                    "id": f"fc_{index}",
                    "type": "function_call",
                    "status": "in_progress",
                    "arguments": "",
                    "call_id": part.id or f"call_{int(time.time() * 1000)}_{calls}",
                    "name": part.name,
                }
                calls += 1
                yield event("response.output_item.added", output_index=index, item=item)
                for piece in (arguments[:half], arguments[half:]):
                    yield event(
                        "response.function_call_arguments.delta",
                        item_id=item["id"],
                        output_index=index,
                        delta=piece,
                    )
                yield event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    arguments=arguments,
                )
                done = {**item, "status": "completed", "arguments": arguments}
                yield event("response.output_item.done", output_index=index, item=done)
                continue
            if open_item is None or open_item["type"] != kind:
                yield from close()
                index += 1
                if kind == "message":
                    open_item = {"id": f"msg_{index}", "type": kind, "role": "assistant"}
                    open_item["content"] = []
                else:
                    open_item = {"id": f"rs_{index}", "type": kind, "summary": []}
                yield event("response.output_item.added", output_index=index, item=open_item)
            streamed += part.text
            item_id = open_item["id"]
            if kind == "message":
                yield event(
                    "response.output_text.delta",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    delta=part.text,
                )
            else:
                yield event(
                    "response.reasoning_summary_text.delta",
                    item_id=item_id,
                    output_index=index,
                    summary_index=0,
                    delta=part.text,
                )
        yield from close()
        prompt, completion, cached = reply.usage
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        completed = {**response, "status": "completed", "usage": usage}
        yield event("response.completed", response=completed)


def chat_messages(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request body with its ``input`` read back as Chat Completions
    ``messages`` (user text, assistant text, tool results as ``role: tool``), so one
    responder serves both APIs; a Chat Completions body is returned as it is."""
    if "input" not in body:
        return body
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    for item in body.get("input", []):
        if item.get("type") == "function_call_output":
            output = item.get("output")
            content = output if isinstance(output, str) else json.dumps(output)
            messages.append({"role": "tool", "content": content})
        elif item.get("role") == "user":
            messages.append({"role": "user", "content": _input_text(item.get("content"))})
        elif item.get("type") == "message":
            messages.append({"role": "assistant", "content": _input_text(item.get("content"))})
    return {**body, "messages": messages}


def _input_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the newest user message in a request body."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def demo_responder(body: dict[str, Any]) -> Reply:
    """For trying the CLI by hand: ``write NAME TEXT`` writes a file, ``run CMD`` runs bash,
    ``slow`` streams slowly, anything else gets a Markdown echo; tool results get "Done."."""
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return text("Done: ", "`", messages[-1].get("content", "")[:60], "`.")
    prompt = last_user_text(body).strip()
    words = prompt.split(maxsplit=2)
    if len(words) >= 3 and words[0] == "write":
        return Reply(
            [
                Text("Writing the file.\n"),
                Call("write_file", {"path": words[1], "content": words[2] + "\n"}),
            ]
        )
    if len(words) >= 2 and words[0] == "run":
        return Reply([Call("bash", {"command": prompt[4:]})])
    if prompt == "slow":
        return Reply([Text(f"word{i} ", 0.3) for i in range(100)])
    return text(
        "## You said\n\n",
        f"> {prompt}\n\n",
        "Here is a list:\n\n- one\n- two\n\n",
        "```python\nprint('hello')\n```\n",
        delay=0.05,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = ScriptedServer(responder=demo_responder, port=args.port)
    print(f"serving {server.url} (Ctrl+C stops)", flush=True)
    with server, contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


if __name__ == "__main__":
    main()
