"""A small MCP server on the official Python SDK, for the CLI tests: notes kept in a file.

    python notes_mcp_server.py stdio [odd-names]
    python notes_mcp_server.py http PORT [PATH]

It calls itself ``notes``. ``add_note`` appends to ``notes.txt`` in the folder it runs in
(yoagent starts a stdio server in its working folder), so a test can see that a call ran;
``owner`` answers the ``NOTES_OWNER`` variable it was given (or ``unset``); ``shutdown``
answers, then the server exits with status 3 a moment later. With ``odd-names`` it also
has tools whose names MCP allows and the model APIs do not: ``notes.count`` (besides a
``notes_count``, its name once the dot is replaced) and ``count_`` + 70 × ``x``.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes", log_level="WARNING")
NOTES = Path("notes.txt")


@server.tool()
def add_note(text: str) -> str:
    """Add a note to the notebook."""
    with NOTES.open("a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    count = len(NOTES.read_text(encoding="utf-8").splitlines())
    return f"noted {text!r}; the notebook holds {count} note(s)"


@server.tool()
def owner() -> str:
    """Who owns the notebook."""
    return f"owner: {os.environ.get('NOTES_OWNER', 'unset')}"


@server.tool()
def shutdown() -> str:
    """Stop the server."""
    threading.Timer(0.2, os._exit, args=(3,)).start()
    return "shutting down"


def _count() -> str:
    return str(len(NOTES.read_text(encoding="utf-8").splitlines()) if NOTES.exists() else 0)


def add_odd_names() -> None:
    """Tools named as MCP allows (dots, up to 128 characters) and providers refuse."""
    server.add_tool(lambda: f"notes.count: {_count()}", name="notes.count", description="Count.")
    server.add_tool(lambda: f"notes_count: {_count()}", name="notes_count", description="Count.")
    long_name = "count_" + "x" * 70
    server.add_tool(lambda: f"long: {_count()}", name=long_name, description="Count.")


def main() -> None:
    if "odd-names" in sys.argv:
        add_odd_names()
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        path = sys.argv[3] if len(sys.argv) > 3 else "/mcp"
        server.run(
            "streamable-http", host="127.0.0.1", port=int(sys.argv[2]), streamable_http_path=path
        )


if __name__ == "__main__":
    main()
