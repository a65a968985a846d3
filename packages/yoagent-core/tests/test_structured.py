"""prompt_structured: a schema per call, a validated value, and each way it can fail."""

from __future__ import annotations

import pytest
from core_helpers import text_reply
from pydantic import BaseModel

from yoagent.core import (
    Agent,
    AssistantMessage,
    ErrorKind,
    MockProvider,
    ModelConfig,
    NoStructuredOutputError,
    ProviderError,
    RetryConfig,
    RunFailedError,
    StopReason,
    StructuredParseError,
    StructuredProviderError,
    TextContent,
)


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    celsius: float


def agent_with(*replies: object) -> tuple[Agent, MockProvider]:
    provider = MockProvider(replies)  # type: ignore[arg-type]
    return Agent.from_provider(provider, ModelConfig.mock(), retry=RetryConfig.none()), provider


async def test_a_pydantic_schema_gives_a_validated_instance_and_travels_with_the_call_only() -> (
    None
):
    agent, provider = agent_with(
        text_reply('{"city": "Oslo", "celsius": -3.5}'), text_reply("plain")
    )
    value = await agent.prompt_structured("weather in Oslo?", Weather)
    assert value == Weather(city="Oslo", celsius=-3.5)
    schema = provider.requests[0].output_schema
    assert schema is not None and schema.name == "Weather"
    assert schema.schema == Weather.model_json_schema()
    assert schema.description == "The weather in one city."
    await agent.prompt("and now plain text")
    assert provider.requests[1].output_schema is None


async def test_a_json_schema_dict_gives_parsed_json() -> None:
    agent, provider = agent_with(text_reply('{"ok": true}'))
    schema = {"title": "Flag", "type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert await agent.prompt_structured("flag?", schema) == {"ok": True}
    assert provider.requests[0].output_schema is not None
    assert provider.requests[0].output_schema.name == "Flag"


async def test_invalid_output_is_a_parse_error_carrying_the_raw_text() -> None:
    agent, _ = agent_with(text_reply('{"city": "Oslo"}'))
    with pytest.raises(StructuredParseError) as caught:
        await agent.prompt_structured("weather?", Weather)
    assert caught.value.raw == '{"city": "Oslo"}'
    assert "celsius" in str(caught.value)

    agent, _ = agent_with(text_reply("not json"))
    with pytest.raises(StructuredParseError, match="not valid JSON"):
        await agent.prompt_structured("x", {"type": "object"})


async def test_a_failed_call_raises_run_failed_and_a_refusal_is_a_provider_error() -> None:
    agent, _ = agent_with(ProviderError(ErrorKind.API, "model overloaded badly"))
    with pytest.raises(RunFailedError, match="model overloaded badly") as raised:
        await agent.prompt_structured("x", Weather)
    assert raised.value.kind is ErrorKind.API

    refusal = AssistantMessage(
        content=[TextContent(text="I can't help with that")], stop_reason=StopReason.REFUSAL
    )
    agent, _ = agent_with(refusal)
    with pytest.raises(StructuredProviderError, match="the model refused: I can't help with that"):
        await agent.prompt_structured("x", Weather)


async def test_an_empty_reply_is_no_output_and_earlier_runs_do_not_count() -> None:
    agent, _ = agent_with(
        text_reply('{"city": "Oslo", "celsius": 1}'), AssistantMessage(content=[])
    )
    await agent.prompt("an earlier run with JSON-looking text")
    with pytest.raises(NoStructuredOutputError):
        await agent.prompt_structured("x", Weather)
