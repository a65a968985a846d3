"""Giving OpenAPI tools to an Agent: the source, the helpers, and a scripted run."""

from __future__ import annotations

import json

from openapi_testing import API_KEY, PETSTORE_30, PETSTORE_31, PetstoreServer

from yoagent.core import (
    Agent,
    AgentTool,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    ToolSource,
)
from yoagent.openapi import (
    ApiKeyAuth,
    OpenApiConfig,
    OpenApiToolAdapter,
    OpenApiToolSource,
    OperationFilter,
    with_openapi_file,
    with_openapi_spec,
    with_openapi_url,
)


def _calls(*calls: ToolCall) -> AssistantMessage:
    return AssistantMessage(content=list(calls), stop_reason=StopReason.TOOL_USE)


async def test_the_source_is_a_tool_source_with_a_fixed_generation() -> None:
    adapter = OpenApiToolAdapter.from_file(
        PETSTORE_31, config=OpenApiConfig(base_url="http://127.0.0.1:9")
    )

    source = adapter.source()

    assert isinstance(source, ToolSource)
    assert all(isinstance(tool, AgentTool) for tool in adapter.tools)
    assert isinstance(source, OpenApiToolSource)
    assert [t.name for t in await source.tools()] == [t.name for t in adapter.tools]
    assert source.generation() == source.generation() == 0


async def test_an_agent_calls_the_api_and_reads_results_and_errors(server: PetstoreServer) -> None:
    provider = MockProvider(
        [
            _calls(
                ToolCall(id="c1", name="getPetById", arguments={"petId": 2}),
                ToolCall(id="c2", name="getPetById", arguments={"petId": 77}),
                ToolCall(id="c3", name="getPetById", arguments={"petId": "two"}),
            ),
            AssistantMessage(content=[TextContent(text="Pet 2 is Tom.")]),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock())
    adapter = with_openapi_file(
        agent,
        PETSTORE_30,
        config=OpenApiConfig(
            base_url=server.origin + "/api/v3", auth=ApiKeyAuth("api_key", API_KEY)
        ),
        filter=OperationFilter(tags=["pet"]),
    )

    await agent.prompt("What is pet 2 called?")

    offered = [tool.name for tool in provider.requests[0].tools]
    assert offered == sorted(tool.name for tool in adapter.tools)  # sourced tools, by name
    results = {m.tool_call_id: m for m in agent.messages if isinstance(m, ToolResultMessage)}
    assert not results["c1"].is_error
    assert json.loads(results["c1"].text.split("\n\n", 1)[1])["name"] == "Tom"
    assert results["c2"].is_error
    assert results["c2"].text.startswith("HTTP 404 Not Found from GET /pet/{petId}")
    assert results["c3"].is_error
    assert results["c3"].text.startswith("invalid arguments for getPetById: petId: 'two'")
    # The two valid calls run in parallel: either may reach the server first; the invalid
    # third never does.
    assert sorted(r.path for r in server.requests) == ["/api/v3/pet/2", "/api/v3/pet/77"]


async def test_the_helpers_add_a_source_each(server: PetstoreServer) -> None:
    agent = Agent.from_provider(MockProvider.text("ok"), ModelConfig.mock())
    spec = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}

    with_openapi_spec(agent, spec, config=OpenApiConfig(base_url="http://127.0.0.1:9"))
    from_url = await with_openapi_url(agent, server.origin + "/api/v31/openapi.json")

    assert len(agent.settings.tool_sources) == 2
    assert len(from_url.tools) == 8
