"""An MCP server (the official SDK, stdio) whose tool names no provider accepts as they are.

Every tool answers ``<its own name>: <text>``, so a test can tell which one was called.
It also lists a tool named exactly as yoagent-mcp renames ``files.read``, to force a clash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer

LONG = "search_" + "x" * 80
RENAMED = "files_read_" + hashlib.sha256(b"files.read").hexdigest()[:8]
NAMES = [
    "files_read",
    "files.read",
    "files/read",
    RENAMED,
    LONG,
    LONG + "y",
    "ok-name",
    "émoji✓ tool",
]

server = MCPServer("hostile-names", log_level="WARNING")


def _answering_as(name: str) -> Callable[[str], str]:
    def answer(text: str) -> str:
        return f"{name}: {text}"

    return answer


for tool_name in NAMES:
    server.tool(name=tool_name, description=f"The tool {tool_name!r}.")(_answering_as(tool_name))

if __name__ == "__main__":
    server.run("stdio")
