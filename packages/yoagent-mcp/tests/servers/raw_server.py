"""A hand-written stdio MCP server that misbehaves on purpose (line by line JSON-RPC)."""

from __future__ import annotations

import json
import sys


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name: str) -> dict[str, object]:
    return {"name": name, "description": name, "inputSchema": {"type": "object"}}


def main() -> None:
    print("starting up, not JSON", flush=True)
    print("[1, 2, 3]", flush=True)  # JSON, but not a JSON-RPC message
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        elif method == "tools/list":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {
                        "tools": [tool("odd"), tool("nullid"), tool("ask"), tool("garbage")]
                    },
                }
            )
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "odd":
                content = [
                    {"type": "text", "text": "fine"},
                    {"type": "hologram", "data": "x" * 5000, "note": "3d"},
                    {"type": "widget", "resource": {"text": "widget text"}},
                    {"type": "image", "mimeType": "image/png"},  # no data: malformed
                ]
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": ident,
                        "result": {
                            "content": content,
                            "structuredContent": [1, 2],
                            "isError": 0,
                        },
                    }
                )
            elif name == "nullid":
                send(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "lost id"}}
                )
            elif name == "ask":
                send({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
                answer = json.loads(sys.stdin.readline())
                code = answer.get("error", {}).get("code")
                send({"jsonrpc": "2.0", "id": "srv-2", "method": "ping"})
                pong = json.loads(sys.stdin.readline())
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": ident,
                        "result": {
                            "content": [
                                {
                                    "type": "text",
                                    "text": f"roots answer code {code}; ping {pong.get('result')}",
                                }
                            ]
                        },
                    }
                )
            elif name == "garbage":
                print("oops, a log line on stdout", flush=True)
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": ident,
                        "result": {"content": [{"type": "text", "text": "after garbage"}]},
                    }
                )
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})


if __name__ == "__main__":
    main()
