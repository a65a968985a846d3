"""What yoagent-openapi costs: reading a large document into tools, and one tool call.

Load: the 240-operation document of integrations/yoagent-openapi/tests/large_spec.py,
as YAML text. The floor is parsing that text alone (PyYAML's C safe loader, as the
adapter uses); yoagent is ``OpenApiToolAdapter.from_str`` (parse + model + $ref inlining
+ meta-schema check + validators), and ``from_spec`` on the parsed dict (everything but
the parse).

Call: one ``getPetById`` call with a JSON reply, through an ``httpx.MockTransport`` (no
network, so the figure is the adapter's own work). The floor is the same request sent by
hand on the same client (``client.get`` + ``response.text``); yoagent is
``OpenApiTool.execute`` (argument validation, serialization, the credential, the capped
read, the scrubbed result text).

    uv run python benchmarks/openapi_load.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "integrations" / "yoagent-openapi" / "tests"))

from large_spec import make_large_spec  # noqa: E402

from yoagent.core import ToolContext  # noqa: E402
from yoagent.openapi import ApiKeyAuth, OpenApiConfig, OpenApiToolAdapter  # noqa: E402

PET = {"id": 1, "name": "Rex", "photoUrls": [], "status": "available"}
CALLS = 2_000


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def load(repeat: int) -> None:
    text = yaml.safe_dump(make_large_spec(), sort_keys=False)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(text, Loader=loader)
    parse = _median_ms(lambda: yaml.load(text, Loader=loader), repeat)
    from_str = _median_ms(lambda: OpenApiToolAdapter.from_str(text), repeat)
    from_spec = _median_ms(lambda: OpenApiToolAdapter.from_spec(data), repeat)
    tools = len(OpenApiToolAdapter.from_spec(data).tools)
    print(f"load ({len(text):,} bytes of YAML, {tools} tools), median of {repeat}:")
    print(f"  floor: parse only          {parse:8.1f} ms")
    print(f"  from_str (parse + build)   {from_str:8.1f} ms  ({from_str / parse:.1f}x floor)")
    print(f"  from_spec (build only)     {from_spec:8.1f} ms  ({from_spec / tools:.2f} ms/tool)")


async def call(repeat: int) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=PET)

    spec = yaml.safe_load(
        (ROOT / "integrations/yoagent-openapi/tests/fixtures/petstore-3.0.yaml").read_text()
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        config = OpenApiConfig(
            base_url="http://api.test/api/v3", auth=ApiKeyAuth("api_key", "k" * 24)
        )
        tool = OpenApiToolAdapter.from_spec(spec, config=config, client=client).tool("getPetById")
        ctx = ToolContext(tool_call_id="c1", tool_name=tool.name)

        async def floor() -> None:
            for _ in range(CALLS):
                response = await client.get(
                    "http://api.test/api/v3/pet/1", headers={"api_key": "k" * 24}
                )
                response.text  # noqa: B018

        async def ours() -> None:
            for _ in range(CALLS):
                await tool.execute({"petId": 1}, ctx)

        results: dict[str, list[float]] = {"floor": [], "yoagent": []}
        for _ in range(repeat):
            for name, run in (("floor", floor), ("yoagent", ours)):
                started = time.perf_counter()
                await run()
                results[name].append((time.perf_counter() - started) * 1e6 / CALLS)
    low, high = statistics.median(results["floor"]), statistics.median(results["yoagent"])
    print(f"call (MockTransport, {CALLS} calls a run), median of {repeat}:")
    print(f"  floor: client.get + .text  {low:8.1f} µs/call")
    print(f"  OpenApiTool.execute        {high:8.1f} µs/call  ({high / low:.2f}x floor)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the large document's left-out operations are expected
    load(args.repeat)
    asyncio.run(call(args.repeat))


if __name__ == "__main__":
    main()
