"""The model behind the test agents: a scripted OpenAI Chat Completions server on loopback
(``yoagent.providers.testing.ScriptedSseServer``), answering by the request's last message:

- a tool result → the text ``Result: <its content>`` (``Atlantis`` in it → HTTP 400,
  an error in the middle of a run);
- ``hello`` → reasoning ``Let me think.``, then the text ``Hello there!`` in pieces;
- ``weather CITY`` → a ``get_weather`` call for ``CITY``;
- ``call NAME JSON`` → a call of the tool ``NAME`` with the arguments ``JSON``;
- ``slow`` → ``tick `` every 50 ms, 400 times (``hung_up`` is set if the client leaves);
- ``fail`` → HTTP 400;
- anything else → ``echo: <text>``.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from yoagent.providers.testing import RecordedRequest, ScriptedReply, ScriptedSseServer

PROMPT_TOKENS = 11
COMPLETION_TOKENS = 7


class ModelServer:
    """The server, a context manager; ``url`` is the ``base_url`` to give a model."""

    def __init__(self) -> None:
        self._server = ScriptedSseServer(check=_answer)

    @property
    def url(self) -> str:
        return f"{self._server.url}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests so far."""
        return [request.json() for request in self._server.requests]

    @property
    def hung_up(self) -> threading.Event:
        """Set when a client went away before its reply was fully sent."""
        return self._server.disconnected

    def __enter__(self) -> ModelServer:
        self._server.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.__exit__(*exc_info)


def _answer(request: RecordedRequest) -> ScriptedReply:
    last = request.json()["messages"][-1]
    content = last.get("content") or ""
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content)
    if last["role"] == "tool" and "Atlantis" in content:
        return _error("the model broke")
    if last["role"] == "tool":
        return _text([f"Result: {content}"])
    if content == "hello":
        return _text(["Hel", "lo there", "!"], reasoning="Let me think.")
    if content.startswith("weather "):
        return _call("get_weather", {"city": content.removeprefix("weather ")})
    if content.startswith("call "):
        _, name, arguments = content.split(" ", 2)
        return _call(name, json.loads(arguments))
    if content == "slow":
        ticks = [_choice({"content": "tick "}) for _ in range(400)]
        return ScriptedReply(
            [_choice({"role": "assistant", "content": ""}), *ticks, *_end("stop")], delay=0.05
        )
    if content == "fail":
        return _error("bad request")
    return _text([f"echo: {content}"])


def _error(message: str) -> ScriptedReply:
    body = json.dumps({"error": {"message": message, "type": "invalid"}}).encode()
    return ScriptedReply([body], status=400, headers={"content-type": "application/json"})


def _event(payload: dict[str, Any]) -> bytes:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "scripted"}
    return b"data: " + json.dumps({**base, **payload}).encode() + b"\n\n"


def _choice(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def _end(finish: str) -> list[bytes]:
    usage = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
    }
    return [_choice({}, finish), _event({"choices": [], "usage": usage}), b"data: [DONE]\n\n"]


def _text(pieces: list[str], reasoning: str | None = None) -> ScriptedReply:
    first = [_choice({"role": "assistant", "reasoning_content": reasoning})] if reasoning else []
    body = [_choice({"role": "assistant", "content": piece}) for piece in pieces]
    return ScriptedReply([*first, *body, *_end("stop")])


def _call(name: str, arguments: dict[str, Any]) -> ScriptedReply:
    call = {
        "index": 0,
        "id": f"call_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    text = json.dumps(arguments)
    middle = len(text) // 2
    parts = [
        _choice({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        for piece in (text[:middle], text[middle:])
    ]
    return ScriptedReply(
        [
            _choice({"role": "assistant", "content": None, "tool_calls": [call]}),
            *parts,
            *_end("tool_calls"),
        ]
    )
