"""What one run of the agent loop works on (AgentContext) and how it behaves (AgentLoopConfig)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from yoagent.core._context.compaction import ContextConfig, ContextTracker
from yoagent.core._context.llm_compaction import LlmCompaction
from yoagent.core._hooks.basic import InputFilter, MiddlewareLike, TurnHook
from yoagent.core._provider.protocol import OutputSchema, StreamProvider
from yoagent.core._shared_state.store import ToolOutputSink
from yoagent.core._tools.contract import AgentTool
from yoagent.core._tools.tool_source import ToolSource
from yoagent.core._types.config import CacheConfig, ModelConfig, ThinkingLevel
from yoagent.core._types.limits import ExecutionLimits
from yoagent.core._types.messages import AgentMessage
from yoagent.core._types.retry import RetryConfig


class ToolExecution(StrEnum):
    """How the tool calls of one reply run."""

    PARALLEL = "parallel"
    """All at once (the default); steering is checked when they are all done."""
    SEQUENTIAL = "sequential"
    """One at a time; steering is checked after each, and skips the rest."""
    BATCHED = "batched"
    """``batch_size`` at a time; steering is checked between batches."""


@dataclass(slots=True, kw_only=True)
class AgentContext:
    """The system prompt, the history (appended to in place by the loop) and the tools."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list[AgentMessage])
    tools: Sequence[AgentTool] = ()


@dataclass(slots=True, kw_only=True)
class AgentLoopConfig:
    """How a run behaves: the model and provider, and every policy the loop applies."""

    provider: StreamProvider
    model: ModelConfig
    thinking_level: ThinkingLevel = ThinkingLevel.OFF
    max_tokens: int | None = None
    temperature: float | None = None
    cache: CacheConfig = field(default_factory=CacheConfig)
    tool_execution: ToolExecution = ToolExecution.PARALLEL
    batch_size: int = 4
    limits: ExecutionLimits | None = field(default_factory=ExecutionLimits)
    retry: RetryConfig = field(default_factory=RetryConfig)
    tool_middleware: Sequence[MiddlewareLike] = ()
    input_filters: Sequence[InputFilter] = ()
    turn_hooks: Sequence[TurnHook] = ()
    get_steering_messages: Callable[[], list[AgentMessage]] | None = None
    get_follow_up_messages: Callable[[], list[AgentMessage]] | None = None
    output_schema: OutputSchema | None = None
    max_tool_output_chars: int | None = 50_000
    """Longer tool output is cut in the middle, with a visible marker; ``None`` keeps it all."""
    max_repeated_tool_calls: int | None = 3
    """The same calls this many turns in a row abort the run; ``None`` turns the check off."""
    turn_delay: float | None = None
    """Seconds to wait between turns (throttling for rate-limit-sensitive providers)."""
    tool_sources: Sequence[ToolSource] = ()
    """Asked at the start of the run, and again before a later turn when their set moved."""
    context: ContextConfig | None = None
    """Automatic compaction: before a request that would not fit, and once after the model
    reports a context overflow. ``None`` turns it off."""
    tool_output_sink: ToolOutputSink | None = None
    """Where the full text of a truncated tool output is stashed; the truncation marker
    then names the key to read it back (e.g. with the ``shared_state`` tool)."""
    llm_compaction: LlmCompaction | None = None
    """Model-written summaries for compaction, requested in the background ahead of need."""
    context_tracker: ContextTracker | None = None
    """Carries the real-usage calibration across runs (the Agent keeps one); made per run
    when ``None``."""
