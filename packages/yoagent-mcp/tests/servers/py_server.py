"""A real MCP server on the official Python SDK (MCPServer, the former FastMCP), for the tests.

    python py_server.py stdio
    python py_server.py http PORT [PATH]

Its tools cover each content type and each way a server can misbehave. Over HTTP it sits
behind a small gateway (``_Gateway``) that answers the way real deployments sometimes do:
redirects, HTTP error statuses, a count of the requests it got.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    NotificationParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, ConfigDict

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()

server = MCPServer(
    "py-test-server", version="1.2.3", instructions="Use echo to test.", log_level="WARNING"
)


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def image() -> CallToolResult:
    """A one-pixel PNG."""
    return CallToolResult(content=[ImageContent(type="image", data=PNG, mime_type="image/png")])


@server.tool()
def mixed() -> CallToolResult:
    """Every kind of content block at once."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="first"),
            AudioContent(
                type="audio", data=base64.b64encode(b"RIFF....").decode(), mime_type="audio/wav"
            ),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="file:///notes.txt", text="the notes", mime_type="text/plain"
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///dot.png", blob=PNG, mime_type="image/png"
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///data.bin",
                    blob=base64.b64encode(b"\0" * 30).decode(),
                    mime_type="application/octet-stream",
                ),
            ),
            ResourceLink(
                type="resource_link", uri="file:///big.log", name="big.log", description="the log"
            ),
        ]
    )


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
def weather(city: str) -> Weather:
    """Structured output (with an output schema)."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def structured_only() -> CallToolResult:
    """Structured content and no content blocks."""
    return CallToolResult(content=[], structured_content={"answer": 42})


@server.tool()
def fail(message: str) -> str:
    """Raise: the SDK answers with an isError result."""
    raise ValueError(message)


@server.tool()
def die(code: int = 3) -> str:
    """Say something on stderr, then exit at once (mid-call)."""
    os.write(2, b"dying now: disk on fire\n")
    os._exit(code)


@server.tool()
async def hang(seconds: float = 3600) -> str:
    """Take (far) longer than any call timeout."""
    await anyio.sleep(seconds)
    return "woke"


@server.tool()
def flood_stderr(kib: int = 256) -> str:
    """Write ``kib`` KiB of non-UTF-8 bytes to stderr, then a last line."""
    chunk = bytes(range(128, 256)) * 8
    for _ in range(kib):
        os.write(2, chunk)
    os.write(2, b"\nlast words \xff\xfe\n")
    return "flooded"


@server.tool()
def exit_after_answer(code: int = 0) -> str:
    """Answer, then exit shortly after (between calls)."""

    def later() -> None:
        time.sleep(0.2)
        os.write(2, b"bye after answering\n")
        os._exit(code)

    threading.Thread(target=later, daemon=True).start()
    return "leaving"


@server.tool()
def banner() -> str:
    """Print a line that is not JSON-RPC on stdout (stdio only), then answer."""
    os.write(1, b"hello from a chatty server\n")
    return "printed"


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable (empty when unset)."""
    return os.environ.get(name, "")


@server.tool()
async def log(message: str, ctx: Context) -> str:
    """Send ``message`` to the client as a log notification (level info), then answer."""
    await ctx.info(message)
    return "logged"


def extra() -> str:
    """A tool that appears when add_tool is called."""
    return "extra here"


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Add the `extra` tool and tell the client its list changed."""
    server.add_tool(extra, name="extra")
    await ctx.session.send_tool_list_changed()
    return "added"


@server.tool()
async def remove_tool(name: str, ctx: Context) -> str:
    """Remove a tool and tell the client its list changed."""
    server.remove_tool(name)
    await ctx.session.send_tool_list_changed()
    return "removed"


class Note(NotificationParams):
    """The params of ``notifications/yoagent-test/note``, which the client sends with ``notify``."""

    model_config = ConfigDict(extra="allow")


NOTES: list[dict[str, Any]] = []


async def _on_note(ctx: Any, params: Note) -> None:
    NOTES.append(params.model_dump(exclude={"meta"}))


# MCPServer has no public way to take a client notification yet; its low-level server does.
server._lowlevel_server.add_notification_handler(  # pyright: ignore[reportPrivateUsage]
    "notifications/yoagent-test/note", Note, _on_note
)


@server.tool()
def notes() -> str:
    """The params of every ``notifications/yoagent-test/note`` received, as JSON."""
    return json.dumps(NOTES)


class _Gateway:
    """What sits in front of the MCP endpoint over HTTP (an ASGI app around the SDK's):

    * ``/moved`` answers 307 with ``Location: /mcp`` (a redirect within the origin), and
      ``/see-other`` 303 (which would make a POST a GET);
    * ``/elsewhere?to=URL`` answers 307 with ``Location: URL`` (to another origin);
    * ``/status/CODE`` answers every request with ``CODE`` and a short text body;
    * a ``tools/call`` of ``http_status`` (arguments ``{"code": CODE}``), and a notification
      whose params hold ``"http_status": CODE``, are answered with ``CODE`` the same way;
    * a notification whose params hold ``"http_delay": SECONDS`` is answered that late;
    * a notification whose params hold ``"http_exit": true`` ends the server's process
      before it answers (the connection drops with no response);
    * ``GET /hits`` says how many other requests it got.
    """

    def __init__(self, app: Any, path: str) -> None:
        self.app = app
        self.path = path
        self.hits = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        query = scope.get("query_string", b"").decode()
        if path == "/hits":
            await _answer(send, 200, str(self.hits))
            return
        self.hits += 1
        if path in ("/moved", "/see-other"):
            status = 307 if path == "/moved" else 303
            target = self.path + (f"?{query}" if query else "")
            await _answer(send, status, "moved", location=target)
        elif path == "/elsewhere":
            target = dict(part.split("=", 1) for part in query.split("&") if "=" in part)["to"]
            await _answer(send, 307, "elsewhere", location=target)
        elif path.startswith("/status/"):
            await _drain(receive)
            await _answer(send, int(path.removeprefix("/status/")), "the gateway says no")
        elif path == self.path:
            body = await _drain(receive)
            code = _status_asked(body) if scope["method"] == "POST" else None
            if code is not None:
                await _answer(send, code, f"the gateway answers {code}")
                return
            if scope["method"] == "POST" and _exit_asked(body):
                os._exit(0)
            delay = _delay_asked(body) if scope["method"] == "POST" else None
            if delay is not None:
                await anyio.sleep(delay)
            await self.app(scope, _replay(body, receive), send)
        else:
            await self.app(scope, receive, send)


def _status_asked(body: bytes) -> int | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    params = message.get("params") or {}
    if message.get("method") == "tools/call" and params.get("name") == "http_status":
        return int(params.get("arguments", {}).get("code", 500))
    if "id" not in message and "http_status" in params:
        return int(params["http_status"])
    return None


def _delay_asked(body: bytes) -> float | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or "id" in message:
        return None
    params = message.get("params") or {}
    return float(params["http_delay"]) if "http_delay" in params else None


def _exit_asked(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if not isinstance(message, dict) or "id" in message:
        return False
    return bool((message.get("params") or {}).get("http_exit"))


async def _drain(receive: Any) -> bytes:
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            return body


def _replay(body: bytes, receive: Any) -> Any:
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _answer(send: Any, status: int, text: str, *, location: str | None = None) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(text)).encode())]
    if location is not None:
        headers.append((b"location", location.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text.encode()})


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    else:
        import uvicorn

        port = int(sys.argv[2])
        path = sys.argv[3] if len(sys.argv) > 3 else "/mcp"
        app = _Gateway(server.streamable_http_app(streamable_http_path=path), path)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
