"""Messages: the conversation as the loop keeps it, and what of it reaches a model."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Annotated, Any, Literal

from .adapters import LazyTypeAdapter
from .content import AssistantContent, TextContent, ThinkingContent, ToolCall, UserContent
from .errors import ErrorKind
from .tagged import Tagged


def now_ms() -> int:
    """The wall clock in milliseconds since the epoch, as messages record it."""
    return time.time_ns() // 1_000_000


class StopReason(StrEnum):
    """Why an assistant message ended."""

    STOP = "stop"
    LENGTH = "length"
    TOOL_USE = "tool_use"
    ERROR = "error"
    ABORTED = "aborted"
    REFUSAL = "refusal"


@dataclass(slots=True, kw_only=True)
class Usage:
    """Token counts of one response (or a sum of several)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        """Every token counted, cached ones included."""
        return self.input + self.output + self.cache_read + self.cache_write

    def is_zero(self) -> bool:
        """True when nothing was counted."""
        return self.total == 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
        )


@dataclass(slots=True, kw_only=True)
class UserMessage:
    """A message from the user (or injected by the loop on the user's side)."""

    content: list[UserContent]
    timestamp: int = field(default_factory=now_ms)
    role: Literal["user"] = "user"

    @classmethod
    def from_text(cls, text: str) -> UserMessage:
        """A user message holding one text block."""
        return cls(content=[TextContent(text=text)])

    @property
    def text(self) -> str:
        """The message's text blocks joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


@dataclass(slots=True, kw_only=True)
class AssistantMessage:
    """One complete reply from a model."""

    content: list[AssistantContent] = field(default_factory=list[AssistantContent])
    stop_reason: StopReason = StopReason.STOP
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    provider: str = ""
    error_message: str | None = None
    error_kind: ErrorKind | None = None
    """How the model call failed, for a reply with ``StopReason.ERROR`` the loop made."""
    timestamp: int = field(default_factory=now_ms)
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        """The reply's text blocks joined together."""
        return "".join(block.text for block in self.content if isinstance(block, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls the reply asks for, in order."""
        return [block for block in self.content if isinstance(block, ToolCall)]

    @property
    def thinking(self) -> list[ThinkingContent]:
        """The reply's reasoning blocks."""
        return [block for block in self.content if isinstance(block, ThinkingContent)]


@dataclass(slots=True, kw_only=True)
class ToolResultMessage:
    """The outcome of one tool call, sent back to the model."""

    tool_call_id: str
    tool_name: str
    content: list[UserContent]
    is_error: bool = False
    details: Any = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        """The result's text blocks joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


@dataclass(slots=True, kw_only=True)
class CustomMessage:
    """An application's (or an extension's) own entry in the history. It never reaches a
    model. Its ``role`` is ``"extension"``; sessions saved with the older ``"custom"``
    still load (and are written back as ``"extension"``)."""

    kind: str
    data: Any = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["extension", "custom"] = "extension"

    def __post_init__(self) -> None:
        self.role = "extension"


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Tagged("role")]
"""A message a model can see."""

AgentMessage = Annotated[
    UserMessage | AssistantMessage | ToolResultMessage | CustomMessage,
    Tagged("role"),
]
"""Anything the agent's history holds."""

message_adapter: LazyTypeAdapter[AgentMessage] = LazyTypeAdapter(AgentMessage)
"""JSON (de)serialization of one :data:`AgentMessage`."""

messages_adapter: LazyTypeAdapter[list[AgentMessage]] = LazyTypeAdapter(list[AgentMessage])
"""JSON (de)serialization of a list of :data:`AgentMessage`."""


def context_messages(messages: Iterable[AgentMessage]) -> list[Message]:
    """The part of a history a model is shown.

    Custom messages are left out; so are failed replies (``StopReason.ERROR``: their tool
    calls never ran, and ``continue_`` asks again). A cancelled reply (``ABORTED``) keeps
    the text it streamed, so the next prompt follows what the model said — without its
    reasoning (unsigned, cut off) or its calls (never run); with no text it is left out. A
    refusal keeps its text but loses its tool calls, which were never run.
    """
    out: list[Message] = []
    for message in messages:
        if isinstance(message, CustomMessage):
            continue
        if isinstance(message, AssistantMessage):
            stop = message.stop_reason
            if stop is StopReason.ERROR:
                continue
            if stop is StopReason.ABORTED:
                kept: list[AssistantContent] = [
                    block
                    for block in message.content
                    if isinstance(block, TextContent) and block.text
                ]
            elif stop is StopReason.REFUSAL and message.tool_calls:
                kept = [block for block in message.content if not isinstance(block, ToolCall)]
            else:
                out.append(message)
                continue
            if not kept:
                continue  # nothing left to show: an empty message is refused by APIs
            message = replace(message, content=kept)
        out.append(message)
    return out


def last_assistant(messages: Sequence[AgentMessage]) -> AssistantMessage | None:
    """The newest assistant message, if any."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
