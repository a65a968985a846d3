"""The client that @modelcontextprotocol/conformance drives: yoagent-mcp's McpClient.

    conformance client --command "python client.py" --scenario initialize

The suite appends the server URL and names the scenario in MCP_CONFORMANCE_SCENARIO.
The client connects, lists the tools, calls each with arguments made from its schema,
and closes, as an agent would.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

from yoagent.mcp import McpClient, McpError

_SAMPLES: dict[str, Any] = {
    "number": 1,
    "integer": 1,
    "string": "test",
    "boolean": True,
    "array": [],
    "object": {},
}


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """A value for each required property, from its type."""
    properties: dict[str, Any] = schema.get("properties", {})
    return {
        name: _SAMPLES.get(properties.get(name, {}).get("type", "string"), "test")
        for name in schema.get("required", [])
    }


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    print(f"scenario {scenario!r} against {url}")
    async with McpClient.http(url, call_timeout=20) as client:
        print(f"connected to {client.server_name} ({client.protocol_version})")
        for tool in await client.list_tools():
            try:
                result = await client.call_tool(tool.name, arguments_for(tool.input_schema))
            except McpError as error:
                print(f"{tool.name}: {error}")
                continue
            print(f"{tool.name}: is_error={result.is_error} {len(result.content)} blocks")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
