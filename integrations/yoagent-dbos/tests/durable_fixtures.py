"""In-process durable agents for the fast tests: scripted replies (MockProvider), a
runtime on a SQLite file of the test's own, and a fresh agent name per test."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    Defer,
    MockProvider,
    ModelConfig,
    RunSettings,
    StopReason,
    TextContent,
    ToolCall,
    ToolCallRequest,
    ToolDecision,
    ToolResultMessage,
    Usage,
)
from yoagent.core.provider import StreamConfig
from yoagent.dbos import DurableAgent

MODEL = ModelConfig(
    api=ApiProtocol.OPENAI_COMPLETIONS, provider="mock", id="mock", base_url="http://127.0.0.1:9"
)


def calls_then_text(*calls: tuple[str, dict[str, Any]], text: str = "done") -> Any:
    """A reply script: each request before any tool result calls ``calls`` (in one reply),
    the next one answers ``text``."""

    def reply(config: StreamConfig) -> AssistantMessage:
        answered = any(isinstance(m, ToolResultMessage) for m in config.messages)
        usage = Usage(input=10, output=5)
        if answered or not calls:
            return AssistantMessage(content=[TextContent(text=text)], usage=usage)
        return AssistantMessage(
            content=[
                ToolCall(id=f"call_{i}", name=name, arguments=arguments)
                for i, (name, arguments) in enumerate(calls)
            ],
            stop_reason=StopReason.TOOL_USE,
            usage=usage,
        )

    return reply


def durable(
    tools: Sequence[Any] = (),
    *,
    script: Any = None,
    settings: RunSettings | None = None,
    model: ModelConfig = MODEL,
    **options: Any,
) -> DurableAgent:
    """A durable agent named for this test alone."""
    provider = MockProvider([script] * 50 if script is not None else [], validate=False)
    agent = Agent(provider, model, tools=list(tools), settings=settings)
    return DurableAgent(agent, name=f"t{uuid.uuid4().hex[:10]}", **options)


def defer(tool_name: str) -> RunSettings:
    """Settings whose middleware holds every call of ``tool_name`` for approval."""

    def judge(request: ToolCallRequest) -> ToolDecision | None:
        return Defer("a person decides") if request.tool_name == tool_name else None

    return RunSettings(tool_middleware=[judge])
