"""The provider contract: stream one assistant reply, reporting deltas, return it whole."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from yoagent.core._types.config import CacheConfig, ModelConfig, ThinkingLevel
from yoagent.core._types.events import StreamDelta
from yoagent.core._types.messages import AssistantMessage, Message


@dataclass(slots=True, kw_only=True, frozen=True)
class ToolDefinition:
    """What a model is told about one tool."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True, kw_only=True, frozen=True)
class OutputSchema:
    """A JSON schema the reply must match (structured output), for one call only."""

    name: str
    schema: dict[str, Any]
    description: str = ""
    strict: bool = True


@dataclass(slots=True, kw_only=True)
class StreamConfig:
    """Everything one model request needs.

    ``messages`` are already what the model may see (see
    :func:`~yoagent.core.context.context_messages`). ``turn_notes`` are appended to the
    latest user turn of this request only; they are never stored.
    """

    model: ModelConfig
    system_prompt: str
    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    thinking_level: ThinkingLevel = ThinkingLevel.OFF
    max_tokens: int | None = None
    temperature: float | None = None
    output_schema: OutputSchema | None = None
    cache: CacheConfig = field(default_factory=CacheConfig)
    turn_notes: Sequence[str] = ()

    def cache_session_key(self) -> str | None:
        """The prompt-cache key: the explicit one, else derived from the system prompt."""
        if not self.cache.enabled:
            return None
        if self.cache.session_key:
            return self.cache.session_key
        digest = hashlib.sha256(self.system_prompt.encode()).hexdigest()
        return f"yoagent-{digest[:32]}"


DeltaSink = Callable[[StreamDelta], None]
"""Where a provider reports deltas as they arrive. It never blocks and never raises."""


@runtime_checkable
class StreamProvider(Protocol):
    """Streams one assistant reply.

    ``stream`` reports each delta to ``sink`` as it arrives and returns the complete
    :class:`~yoagent.core.AssistantMessage`. Failures are raised as
    :class:`~yoagent.core.ProviderError`; a provider never sleeps or retries on its own
    (the loop owns retries). Cancellation arrives as anyio cancellation of the call.
    """

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage: ...
