"""Loading is bounded and leaves the event loop free: YAML alias bombs in an OpenAPI 3.1
``components/schemas``, a schema that holds itself, and a large document read by URL."""

from __future__ import annotations

import threading
import time

import anyio
import httpx
import pytest
import yaml
from large_spec import make_large_spec

from yoagent.openapi import OpenApiConfig, OpenApiError, OpenApiToolAdapter

LOCAL = OpenApiConfig(base_url="http://127.0.0.1:9/api")
URL = "http://api.test/openapi.yaml"
HANG_GUARD = 60.0
"""Seconds a load may take before the test calls it hung (each loads in milliseconds)."""

FINE_OPERATION = """paths:
  /fine:
    get:
      operationId: fine
      responses: {'200': {description: ok}}
"""


def alias_bomb(levels: int, *, width: int = 4, ids: bool = False) -> str:
    """An OpenAPI 3.1 document whose ``components/schemas`` nest ``levels`` YAML aliases,
    each schema naming the one below ``width`` times: a few hundred bytes of text, and
    ``width ** levels`` places a schema stands when the aliases are expanded."""
    lines = ['openapi: "3.1.0"', "info: {title: bomb, version: '1'}", FINE_OPERATION]
    lines += ["components:", "  schemas:", "    s0: &s0 {type: string}"]
    for level in range(1, levels + 1):
        properties = ", ".join(f"p{i}: *s{level - 1}" for i in range(width))
        identifier = f"$id: 's{level}', " if ids else ""
        lines.append(
            f"    s{level}: &s{level} {{{identifier}type: object, properties: {{{properties}}}}}"
        )
    return "\n".join(lines)


def load(text: str) -> OpenApiToolAdapter:
    """``from_str``, failing the test when it takes over :data:`HANG_GUARD` seconds (on a
    daemon thread, so a hung load does not hold the test process open)."""
    outcome: list[OpenApiToolAdapter | BaseException] = []

    def attempt() -> None:
        try:
            outcome.append(OpenApiToolAdapter.from_str(text, config=LOCAL))
        except BaseException as error:
            outcome.append(error)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(HANG_GUARD)
    if worker.is_alive():
        pytest.fail(f"loading took more than {HANG_GUARD:g} s")
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def test_a_31_alias_bomb_in_the_components_loads_at_once() -> None:
    """The 1.5 KB bomb (16 levels, 4 wide: 4**16 places) loads in 0.75 ms (best of 5 on a
    loaded 2-core machine).

    Before: the ``$id`` crawl of ``components/schemas`` visited each place, so the issue's
    2-wide form took 12.7 s at 1.4 KB (x4 per two levels) and this one did not end within
    the hang guard. Now the crawl skips the schemas that hold no identifier.
    """
    text = alias_bomb(16)
    assert 1_400 < len(text) < 1_600

    adapter = load(text)

    assert [tool.name for tool in adapter.tools] == ["fine"]


def test_a_31_alias_bomb_of_ids_is_refused_at_once() -> None:
    """With a ``$id`` on every level the crawl would register each place, so the document is
    refused before the crawl starts (in 0.84 ms, best of 5), naming the bound it breaks.

    Before: the crawl ran, and did not end within the hang guard."""
    with pytest.raises(OpenApiError) as refused:
        load(alias_bomb(16, ids=True))

    assert str(refused.value) == (
        "the document: YAML aliases make the $id crawl visit more than 100000 schemas "
        "beyond its 18 distinct ones (write a shared schema once and $ref it)"
    )


def test_a_31_identified_schema_that_holds_itself_is_refused() -> None:
    """A recursive YAML alias has no JSON form; the crawl went round it forever."""
    text = "\n".join(
        [
            'openapi: "3.1.0"',
            "info: {title: loop, version: '1'}",
            FINE_OPERATION,
            "components:",
            "  schemas:",
            "    Node: &node {$id: 'node', type: object, properties: {next: *node}}",
        ]
    )

    with pytest.raises(OpenApiError) as refused:
        load(text)

    assert str(refused.value) == (
        "the document: a schema holds itself (a recursive YAML alias), which JSON cannot express"
    )


def test_a_31_schema_that_holds_itself_without_ids_costs_only_its_operation() -> None:
    """The crawl has nothing to register in it, so it is not crawled; the operation that
    uses it is left out by the schema bounds, as a 3.0 document's is."""
    text = "\n".join(
        [
            'openapi: "3.1.0"',
            "info: {title: loop, version: '1'}",
            FINE_OPERATION.rstrip(),
            "  /nodes:",
            "    post:",
            "      operationId: addNode",
            "      requestBody:",
            "        content:",
            "          application/json:",
            "            schema: {$ref: '#/components/schemas/Node'}",
            "      responses: {'200': {description: ok}}",
            "components:",
            "  schemas:",
            "    Node: &node {type: object, properties: {next: *node}}",
        ]
    )

    adapter = load(text)

    assert [tool.name for tool in adapter.tools] == ["fine"]
    (skipped,) = adapter.skipped
    assert skipped.operation_id == "addNode"


def test_shared_schemas_with_ids_still_load_and_resolve() -> None:
    """Reuse within the budget is fine: an identified schema aliased in 50 places."""
    uses = ", ".join(f"u{i}: *money" for i in range(50))
    text = "\n".join(
        [
            'openapi: "3.1.0"',
            "info: {title: shared, version: '1'}",
            "paths:",
            "  /pay:",
            "    post:",
            "      operationId: pay",
            "      requestBody:",
            "        content:",
            "          application/json:",
            "            schema: {$ref: 'https://example.com/money'}",
            "      responses: {'200': {description: ok}}",
            "components:",
            "  schemas:",
            "    Money: &money {$id: 'https://example.com/money', type: integer, minimum: 0}",
            f"    Ledger: {{type: object, properties: {{{uses}}}}}",
        ]
    )

    adapter = load(text)

    assert adapter.tool("pay").parameters["properties"]["body"] == {
        "type": "integer",
        "minimum": 0,
    }


async def test_a_document_read_by_url_is_built_off_the_event_loop() -> None:
    """While ``from_url`` parses and builds the 240-operation document, the event loop
    keeps running: a 5 ms ticker ticks during the load (a count, not a timing: on a busy
    machine the pauses vary, but a build on the loop would let it tick not once).

    Before: the build ran on the event loop, and the ticker stood still for all of it.
    """
    text = yaml.safe_dump(make_large_spec(), sort_keys=False)

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=text, headers={"content-type": "application/yaml"})

    ticks: list[float] = []

    async def tick() -> None:
        while True:
            ticks.append(time.perf_counter())
            await anyio.sleep(0.005)

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(serve)) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(tick)
        await anyio.sleep(0.05)  # ticking before the load starts
        before = len(ticks)
        with anyio.fail_after(HANG_GUARD):
            adapter = await OpenApiToolAdapter.from_url(URL, client=client)
        during = len(ticks) - before
        group.cancel_scope.cancel()

    assert len(adapter.tools) == 232
    assert during >= 2, f"the event loop ticked {during} time(s) while the document loaded"
