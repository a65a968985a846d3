"""An agent on MockProvider uses an OpenAPI tool end to end, beside the built-in tools.

The model's side is scripted; everything else is real: the document is fetched from a
Petstore on loopback, its operations become tools (``yoagent.openapi``), the agent loop
(``yoagent.core``) runs them against that server with a key the model never sees, and
the answer is written to disk with ``write_file`` (``yoagent.tools``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openapi_testing import API_KEY, PetstoreServer

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
)
from yoagent.openapi import ApiKeyAuth, OpenApiConfig, OperationFilter, with_openapi_url
from yoagent.tools import default_tools


def _call(call_id: str, name: str, **arguments: Any) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=call_id, name=name, arguments=arguments)],
        stop_reason=StopReason.TOOL_USE,
    )


async def test_an_agent_adds_a_pet_through_the_api_and_saves_the_answer(tmp_path: Path) -> None:
    new_pet = {"name": "Fido", "photoUrls": [], "status": "available"}
    provider = MockProvider(
        [
            _call("c1", "petstore_addPet", body=new_pet),
            _call("c2", "petstore_findPetsByStatus", status="available"),
            _call("c3", "petstore_getPetById", petId=401),  # a server that echoes the key
            _call("c4", "write_file", path="available.txt", content="Rex, Fido\n"),
            AssistantMessage(content=[TextContent(text="Rex and Fido are available.")]),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=default_tools([tmp_path]))

    with PetstoreServer() as server:
        adapter = await with_openapi_url(
            agent,
            server.origin + "/api/v3/openapi.yaml",
            config=OpenApiConfig(auth=ApiKeyAuth("api_key", API_KEY), prefix="petstore"),
            filter=OperationFilter(tags=["pet"]),
        )
        await agent.prompt("Add Fido, then write down which pets are available.")

    offered = provider.requests[0].tools
    assert [t.name for t in offered[:6]] == [t.name for t in default_tools([tmp_path])]
    assert {t.name for t in offered[6:]} == {t.name for t in adapter.tools}
    results = {m.tool_call_id: m for m in agent.messages if isinstance(m, ToolResultMessage)}
    assert not results["c1"].is_error, results["c1"].text
    assert server.pets[3]["name"] == "Fido"
    available = json.loads(results["c2"].text.split("\n\n", 1)[1])
    assert [pet["name"] for pet in available] == ["Rex", "Fido"]
    assert results["c3"].is_error
    assert "[redacted] may not see pet 401" in results["c3"].text
    assert (tmp_path / "available.txt").read_text() == "Rex, Fido\n"
    everything_the_model_saw = json.dumps(
        [[t.name, t.description, t.parameters] for t in offered]
        + [m.text for m in agent.messages if isinstance(m, ToolResultMessage)]
    )
    assert API_KEY not in everything_the_model_saw
    assert all(request.headers.get("api_key") == API_KEY for request in server.requests[1:])
