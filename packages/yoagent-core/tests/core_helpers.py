"""Helpers for yoagent-core's tests: scripted replies and event recording."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from yoagent.core import (
    AgentEvent,
    AssistantMessage,
    MockProvider,
    RetryConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    tool,
)
from yoagent.core.extension import HELD_RESULT

FAST_RETRY = RetryConfig(max_retries=3, initial_delay=0.001, max_delay=0.01, jitter=0.2)


def text_reply(text: str, *, usage: Usage | None = None) -> AssistantMessage:
    """A final text answer."""
    return AssistantMessage(content=[TextContent(text=text)], usage=usage or Usage())


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCall:
    """One tool call; the id defaults to the name."""
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=arguments)


def tool_reply(*calls: ToolCall, text: str = "", usage: Usage | None = None) -> AssistantMessage:
    """A reply asking for tool calls."""
    content: list[Any] = [TextContent(text=text)] if text else []
    return AssistantMessage(
        content=[*content, *calls], stop_reason=StopReason.TOOL_USE, usage=usage or Usage()
    )


def held_placeholder(
    call_id: str, tool_name: str, reason: str, **arguments: Any
) -> ToolResultMessage:
    """A held call's placeholder result as a stored history holds it (written by hand: a
    history from before a change to how the loop writes them)."""
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name=tool_name,
        content=[TextContent(text=HELD_RESULT)],
        is_error=True,
        details={
            "pending_approval": {
                "tool_call_id": call_id,
                "tool_name": tool_name,
                "arguments": arguments,
                "reason": reason,
            }
        },
    )


class Recorder:
    """Collects emitted events; ``types`` lists their type names in order."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]

    def of(self, cls: type[Any]) -> list[Any]:
        return [event for event in self.events if isinstance(event, cls)]


def route_reads(monkeypatch: pytest.MonkeyPatch, read: Callable[[Any, int], bytes]) -> None:
    """Every file ``os.fdopen`` opens from now on reads through ``read(handle, size)``
    (``handle`` the real file), to record or fail the reads a module makes."""
    real_fdopen = os.fdopen

    class Routed:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def __enter__(self) -> Routed:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def read(self, size: int = -1) -> bytes:
            return read(self.handle, size)

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Routed:
        return Routed(real_fdopen(fd, *args, **kwargs))

    monkeypatch.setattr(os, "fdopen", fdopen)


@tool
async def work(n: int) -> str:
    """Do a unit of work."""
    return f"did {n}"


def steps(count: int, usage: Usage) -> MockProvider:
    """``count`` replies of ``usage`` each calling :func:`work`, then a final answer."""
    replies = [tool_reply(call("work", f"c{i}", n=i), usage=usage) for i in range(count)]
    return MockProvider([*replies, text_reply("finished", usage=usage)])
