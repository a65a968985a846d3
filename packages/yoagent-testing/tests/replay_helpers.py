"""Helpers for yoagent-testing's tests: scripted runs, a counting tool, comparable events."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio

from yoagent.core import (
    Agent,
    AgentEvent,
    AgentTool,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    RetryConfig,
    RunFailedError,
    StopReason,
    TextContent,
    ToolCall,
    ToolContext,
    ToolError,
    ToolResult,
    Usage,
    event_adapter,
    message_adapter,
)
from yoagent.core.provider import StreamProvider

FAST_RETRY = RetryConfig(max_retries=3, initial_delay=0.001, max_delay=0.001, jitter=0.0)


def text_reply(text: str, **usage: int) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], usage=Usage(**usage))


def tool_reply(*calls: ToolCall, text: str = "") -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    return AssistantMessage(content=[*content, *calls], stop_reason=StopReason.TOOL_USE)


def add_call(call_id: str = "call_1", a: int = 2, b: int = 3) -> ToolCall:
    return ToolCall(id=call_id, name="add", arguments={"a": a, "b": b})


class CountingAdd:
    """An ``add`` tool that counts its runs and reports progress and a partial result."""

    name = "add"
    description = "Add two integers."
    parameters: dict[str, Any] = {  # noqa: RUF012 - the AgentTool protocol reads it
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }

    def __init__(self) -> None:
        self.runs = 0

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.runs += 1
        ctx.progress("adding")
        ctx.update(ToolResult.from_text("partial"))
        a, b = arguments["a"], arguments["b"]
        if a < 0:
            raise ToolError(f"negative: {a}", details={"a": a})
        return ToolResult.from_text(str(a + b), details={"sum": a + b})


def two_turn_script() -> list[AssistantMessage]:
    """The model asks for ``add(2, 3)``, then answers with the result."""
    return [tool_reply(add_call(), text="Adding."), text_reply("It is 5.", input=12, output=9)]


async def run_agent(
    provider: StreamProvider,
    prompt: str = "what is 2 + 3?",
    *,
    tools: Iterable[AgentTool] = (),
    config: ModelConfig | None = None,
    **options: Any,
) -> tuple[Agent, list[AgentEvent]]:
    """Run an agent to completion; the agent and its events in order."""
    options.setdefault("retry", FAST_RETRY)
    agent = Agent.from_provider(
        provider, config or ModelConfig.mock(), tools=list(tools), **options
    )
    events: list[AgentEvent] = []
    with anyio.fail_after(20):
        await prompt_through_errors(agent, prompt, events)
    return agent, events


async def prompt_through_errors(agent: Agent, prompt: str, events: list[AgentEvent]) -> None:
    """``agent.prompt``, for a run that may end in an error reply: ``prompt`` raises
    ``RunFailedError`` for it, and the history keeps the error reply it names."""
    failure: RunFailedError | None = None
    try:
        await agent.prompt(prompt, on_event=events.append)
    except RunFailedError as failed:
        failure = failed
    if failure is not None:
        last = agent.messages[-1]
        assert isinstance(last, AssistantMessage) and last.stop_reason is StopReason.ERROR
        assert failure.message == last.error_message


def without_timestamps(value: Any) -> Any:
    """A JSON value with every ``timestamp`` field removed (they differ between runs)."""
    if isinstance(value, dict):
        return {k: without_timestamps(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [without_timestamps(item) for item in value]
    return value


def events_json(events: Iterable[AgentEvent]) -> list[Any]:
    """Events as JSON, timestamps left out, for comparing two runs."""
    return [without_timestamps(event_adapter.dump_python(e, mode="json")) for e in events]


def messages_json(agent: Agent) -> list[Any]:
    """An agent's history as JSON, timestamps left out."""
    return [without_timestamps(message_adapter.dump_python(m, mode="json")) for m in agent.messages]


def mock_provider(*replies: Any) -> MockProvider:
    return MockProvider(list(replies))


def cassette_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")
