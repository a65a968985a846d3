"""A real MCP server on the official Python SDK (MCPServer, the former FastMCP), for the tests.

    python py_server.py stdio
    python py_server.py http PORT [PATH]

Its tools cover each content type and each way a server can misbehave.
"""

from __future__ import annotations

import base64
import os
import sys
import threading
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

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


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    else:
        port = int(sys.argv[2])
        path = sys.argv[3] if len(sys.argv) > 3 else "/mcp"
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            streamable_http_path=path,
        )


if __name__ == "__main__":
    main()
