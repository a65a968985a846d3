"""SubAgentTool: a tool that delegates a task to a child agent loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._hooks.basic import InputFilter, MiddlewareLike, TurnHook
from ._loop.driver import agent_loop
from ._loop.settings import AgentContext, AgentLoopConfig, ToolExecution
from ._provider.keys import with_env_key
from ._provider.protocol import StreamProvider
from ._provider.registry import ProviderRegistry, default_registry
from ._tools.contract import AgentTool, ToolContext, ToolError, ToolResult
from ._tools.tool_source import ToolSource
from ._types.config import ModelConfig, ThinkingLevel
from ._types.events import AgentEvent, InputRejected, MessageEnd, ToolExecutionStart
from ._types.limits import ExecutionLimits
from ._types.markers import AGENT_STOPPED_PREFIX, CANCELLED_MARKER, LOOP_ABORT_PREFIX
from ._types.messages import AgentMessage, AssistantMessage, StopReason, UserMessage, last_assistant
from ._types.retry import RetryConfig
from ._types.stats import SessionStats

SUB_AGENT_LIMITS = ExecutionLimits(max_turns=10, max_total_tokens=1_000_000, max_duration=300.0)
"""A child's default limits: 10 turns, 1M tokens, 5 minutes."""


def _stats_details(stats: SessionStats) -> dict[str, Any]:
    return {
        "turns": stats.turns,
        "usage": {
            "input": stats.usage.input,
            "output": stats.usage.output,
            "cache_read": stats.usage.cache_read,
            "cache_write": stats.usage.cache_write,
        },
        "cost_usd": stats.cost_usd,
        "sub_agent_runs": stats.sub_agents.runs,
    }


def _outcome(messages: Sequence[AgentMessage], stats: SessionStats) -> ToolResult:
    """The child's answer, or a ToolError when it failed, refused or was cancelled."""
    reply = last_assistant(messages)
    last = messages[-1] if messages else None
    marker = (
        last.text
        if isinstance(last, UserMessage) and last.text.startswith(AGENT_STOPPED_PREFIX)
        else None
    )
    if marker is not None and marker != CANCELLED_MARKER and reply is None:
        raise ToolError(f"the sub-agent stopped before answering: {marker}")
    if reply is None or reply.stop_reason is StopReason.ABORTED or marker == CANCELLED_MARKER:
        raise ToolError("the sub-agent was cancelled before it finished")
    if reply.stop_reason is StopReason.ERROR:
        raise ToolError(f"the sub-agent failed: {reply.error_message or 'unknown error'}")
    if reply.stop_reason is StopReason.REFUSAL:
        raise ToolError(f"the sub-agent refused: {reply.text or reply.error_message or ''}".strip())
    if marker is not None and marker.startswith(LOOP_ABORT_PREFIX):
        raise ToolError(f"the sub-agent stopped: {marker}")
    text = reply.text
    if marker is not None:  # a limit: what it did so far is still worth returning
        text = f"{text}\n\n{marker}" if text else marker
    return ToolResult.from_text(text, details=_stats_details(stats))


class SubAgentTool:
    """A tool that runs a child agent loop on a task, with its own model, tools and limits.

    The child starts from an empty history and the given system prompt; its final text is
    the tool's result. The parent's cancel reaches the child. What the child spent is
    reported into the parent's ``SessionStats.sub_agents``. A child that fails, refuses or
    is cancelled is an error result, never an empty success. Sub-agents nest.
    """

    def __init__(
        self,
        name: str,
        description: str,
        *,
        provider: StreamProvider,
        model: ModelConfig,
        system_prompt: str = "",
        tools: Sequence[AgentTool] = (),
        limits: ExecutionLimits = SUB_AGENT_LIMITS,
        thinking_level: ThinkingLevel = ThinkingLevel.OFF,
        max_tokens: int | None = None,
        retry: RetryConfig | None = None,
        tool_execution: ToolExecution = ToolExecution.PARALLEL,
        tool_middleware: Sequence[MiddlewareLike] = (),
        input_filters: Sequence[InputFilter] = (),
        turn_hooks: Sequence[TurnHook] = (),
        tool_sources: Sequence[ToolSource] = (),
    ) -> None:
        self._name = name
        self._description = description
        self.provider = provider
        self.model = model
        self.system_prompt = system_prompt
        self.tools = list(tools)
        self.limits = limits
        self.thinking_level = thinking_level
        self.max_tokens = max_tokens
        self.retry = retry or RetryConfig()
        self.tool_execution = tool_execution
        self.tool_middleware = list(tool_middleware)
        self.input_filters = list(input_filters)
        self.turn_hooks = list(turn_hooks)
        self.tool_sources = list(tool_sources)

    @classmethod
    def from_config(
        cls,
        name: str,
        description: str,
        config: ModelConfig,
        *,
        registry: ProviderRegistry | None = None,
        **options: Any,
    ) -> SubAgentTool:
        """A sub-agent on the registry's provider for ``config.api``, key from the environment."""
        config = with_env_key(config)
        provider = (registry or default_registry()).create(config)
        return cls(name, description, provider=provider, model=config, **options)

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": (
                        "The task, complete and self-contained: the sub-agent sees nothing else."
                    ),
                }
            },
            "required": ["task"],
            "additionalProperties": False,
        }

    def with_max_turns(self, max_turns: int) -> SubAgentTool:
        """Change only the turn limit."""
        self.limits = ExecutionLimits(
            max_turns=max_turns,
            max_total_tokens=self.limits.max_total_tokens,
            max_duration=self.limits.max_duration,
        )
        return self

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = arguments.get("task")
        if not isinstance(task, str) or not task.strip():
            raise ToolError(f"{self._name}: 'task' must be a non-empty string")
        config = AgentLoopConfig(
            provider=self.provider,
            model=self.model,
            thinking_level=self.thinking_level,
            max_tokens=self.max_tokens,
            limits=self.limits,
            retry=self.retry,
            tool_execution=self.tool_execution,
            tool_middleware=tuple(self.tool_middleware),
            input_filters=tuple(self.input_filters),
            turn_hooks=tuple(self.turn_hooks),
            tool_sources=tuple(self.tool_sources),
        )
        context = AgentContext(system_prompt=self.system_prompt, tools=tuple(self.tools))
        stats = SessionStats()
        rejected: list[str] = []

        def relay(event: AgentEvent) -> None:
            if isinstance(event, InputRejected):
                rejected.append(event.reason)
            elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
                if event.message.text:
                    ctx.update(ToolResult.from_text(event.message.text))
            elif isinstance(event, ToolExecutionStart):
                ctx.progress(f"{self._name} → {event.tool_name}")

        try:
            messages = await agent_loop(
                [UserMessage.from_text(task)],
                context,
                config,
                relay,
                cancel=ctx.cancel.child(),
                stats=stats,
            )
        finally:
            ctx.report_delegated_run(stats)
        if rejected:
            raise ToolError(f"the sub-agent refused the task: {rejected[0]}")
        return _outcome(messages, stats)
