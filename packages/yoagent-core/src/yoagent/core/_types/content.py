"""Content blocks: what a message is made of."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from .config import ApiProtocol
from .tagged import Tagged


@dataclass(slots=True, kw_only=True)
class TextContent:
    """Plain text."""

    text: str
    type: Literal["text"] = "text"


@dataclass(slots=True, kw_only=True)
class ImageContent:
    """An image, base64-encoded, with its MIME type."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"


@dataclass(slots=True, kw_only=True)
class ThinkingContent:
    """Model reasoning.

    ``signature`` proves the text to the API that produced it. ``redacted`` holds
    provider-encrypted reasoning and ``redacted_protocol`` names the API that produced
    it: such data is replayed only to that protocol, and never when the protocol is
    unknown.
    """

    thinking: str = ""
    signature: str | None = None
    redacted: str | None = None
    redacted_protocol: ApiProtocol | None = None
    type: Literal["thinking"] = "thinking"

    def redacted_for(self, protocol: ApiProtocol) -> str | None:
        """The encrypted data, if and only if it came from ``protocol``."""
        if self.redacted is not None and self.redacted_protocol == protocol:
            return self.redacted
        return None


@dataclass(slots=True, kw_only=True)
class ToolCall:
    """A request from the model to run one tool."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    type: Literal["tool_call"] = "tool_call"


AssistantContent = Annotated[
    TextContent | ThinkingContent | ToolCall | ImageContent, Tagged("type")
]
"""What an assistant message may hold."""

UserContent = Annotated[TextContent | ImageContent, Tagged("type")]
"""What a user message or a tool result may hold."""
