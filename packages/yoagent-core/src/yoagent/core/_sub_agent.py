"""SubAgentTool: a tool that delegates a task to a child agent loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Unpack

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from ._hooks.extension import Extension, check_extension
from ._loop.driver import LoopRun
from ._loop.settings import (
    AgentContext,
    AgentLoopConfig,
    ContextSetting,
    RunOptions,
    RunSettings,
    settings_with,
)
from ._provider.keys import require_api_key, with_env_key
from ._provider.protocol import StreamProvider
from ._provider.registry import ProviderRegistry, default_registry
from ._shared_state.store import SharedState, SharedStateSink
from ._shared_state.tool import with_shared_state_tool
from ._tools.arguments import ToolArguments
from ._tools.contract import AgentTool, ToolContext, ToolError, ToolResult
from ._tools.function_tool import as_tools
from ._tools.model_tool import ModelTool
from ._types.config import ModelConfig
from ._types.events import AgentEvent, MessageEnd, ToolExecutionStart
from ._types.limits import ExecutionLimits
from ._types.markers import stopped_marker
from ._types.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    UserMessage,
    last_assistant,
)
from ._types.outcome import RunEnd, RunOutcome, StopCause
from ._types.stats import SessionStats

SUB_AGENT_LIMITS = ExecutionLimits(max_turns=10, max_total_tokens=1_000_000, max_duration=300.0)
"""A child's default limits: 10 turns, 1M tokens, 5 minutes."""

SUB_AGENT_SETTINGS = RunSettings(limits=SUB_AGENT_LIMITS)
"""A child's default settings: the defaults of every run, with :data:`SUB_AGENT_LIMITS`."""

DEFAULT_MAX_DEPTH = 2
"""How deep sub-agents nest by default: a child (depth 1) may delegate once more (depth 2),
no further."""


def _answer(messages: Sequence[AgentMessage], outcome: RunOutcome) -> ToolResult:
    """The child's answer, or a ToolError when it failed, refused or was cancelled."""
    reply = last_assistant(messages)
    stopped = outcome.end is RunEnd.STOPPED
    marker = stopped_marker(outcome.reason or "") if stopped else None
    if marker is not None and reply is None:
        raise ToolError(f"the sub-agent stopped before answering: {marker}")
    if reply is None or reply.stop_reason is StopReason.ABORTED or outcome.end is RunEnd.CANCELLED:
        raise ToolError("the sub-agent was cancelled before it finished")
    if reply.stop_reason is StopReason.ERROR:
        raise ToolError(f"the sub-agent failed: {reply.error_message or 'unknown error'}")
    if reply.stop_reason is StopReason.REFUSAL:
        raise ToolError(f"the sub-agent refused: {reply.text or reply.error_message or ''}".strip())
    if marker is not None and outcome.cause is StopCause.LOOP:
        raise ToolError(f"the sub-agent stopped: {marker}")
    text = reply.text
    if marker is not None:  # a limit: what it did so far is still worth returning
        text = f"{text}\n\n{marker}" if text else marker
    return ToolResult.from_text(text)


class SubAgentTask(ToolArguments):
    """The sub-agent tool's one argument."""

    task: str = Field(
        description="The task, complete and self-contained: the sub-agent sees nothing else."
    )

    @field_validator("task")
    @classmethod
    def _not_blank(cls, task: str) -> str:
        if not task.strip():
            raise PydanticCustomError("blank", "must say what to do (it is blank)")
        return task


class SubAgentTool(ModelTool[SubAgentTask]):
    """A tool that runs a child agent loop on a task, with its own model, tools and settings.

    The child starts from an empty history and the given system prompt; its final text is
    the tool's result. Its settings are a :class:`RunSettings` (default
    :data:`SUB_AGENT_SETTINGS`: its own limits, compaction on). The parent's cancel
    reaches the child; the child's events reach the parent's stream as
    :class:`SubAgentEvent`; what it spent goes into the parent's
    ``SessionStats.sub_agents`` and the call's result details. A child that fails, refuses
    or is cancelled is an error result, never an empty success. Sub-agents nest up to
    ``max_depth`` levels below the top-level run.
    """

    def __init__(
        self,
        name: str,
        description: str,
        *,
        provider: StreamProvider,
        model: ModelConfig,
        system_prompt: str = "",
        tools: Sequence[AgentTool | Callable[..., Any]] = (),
        settings: RunSettings | None = None,
        shared_state: SharedState | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        **options: Unpack[RunOptions],
    ) -> None:
        if max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth}")
        super().__init__(name=name, description=description, arguments=SubAgentTask)
        self.provider = provider
        self.model = model
        self.system_prompt = system_prompt
        self.tools = as_tools(tools, where="SubAgentTool tools")
        self.settings = settings_with(SUB_AGENT_SETTINGS, settings, options)
        self.shared_state = shared_state
        self.max_depth = max_depth

    @classmethod
    def from_config(
        cls,
        name: str,
        description: str,
        config: ModelConfig,
        *,
        registry: ProviderRegistry | None = None,
        system_prompt: str = "",
        tools: Sequence[AgentTool | Callable[..., Any]] = (),
        settings: RunSettings | None = None,
        shared_state: SharedState | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        **options: Unpack[RunOptions],
    ) -> SubAgentTool:
        """A sub-agent on the registry's provider for ``config.api``, key from the environment
        (:class:`MissingApiKeyError` when one is needed and none is set)."""
        config = with_env_key(config)
        factory = (registry or default_registry()).factory(config.api)
        require_api_key(config)
        provider = factory(config)
        return cls(
            name,
            description,
            provider=provider,
            model=config,
            system_prompt=system_prompt,
            tools=tools,
            settings=settings,
            shared_state=shared_state,
            max_depth=max_depth,
            **options,
        )

    # --- settings, builder style -----------------------------------------------------------

    def with_max_turns(self, max_turns: int) -> SubAgentTool:
        """Change only the turn limit."""
        limits = replace(self.settings.limits, max_turns=max_turns)
        self.settings = self.settings.replace(limits=limits)
        return self

    def with_execution_limits(self, limits: ExecutionLimits) -> SubAgentTool:
        """Replace the child's limits."""
        self.settings = self.settings.replace(limits=limits)
        return self

    def with_turn_delay(self, seconds: float | None) -> SubAgentTool:
        """Wait ``seconds`` between the child's turns (rate-limit-sensitive providers)."""
        self.settings = self.settings.replace(turn_delay=seconds)
        return self

    def with_context(self, context: ContextSetting) -> SubAgentTool:
        """The child's compaction (``"auto"`` by default, ``"off"``, or a ContextConfig)."""
        self.settings = self.settings.replace(context=context)
        return self

    def with_shared_state(self, state: SharedState) -> SubAgentTool:
        """Give the child the ``shared_state`` tool over ``state``, a summary of what it
        holds in its system prompt, and a place to stash outputs cut short."""
        self.shared_state = state
        return self

    def with_extension(self, extension: Extension) -> SubAgentTool:
        """Install ``extension`` on the child's runs."""
        check_extension(extension)
        self.settings = self.settings.replace(extensions=(*self.settings.extensions, extension))
        return self

    def with_tree_extension(self, extension: Extension) -> SubAgentTool:
        """Install ``extension`` on the child's runs and every run they delegate."""
        check_extension(extension)
        self.settings = self.settings.replace(
            tree_extensions=(*self.settings.tree_extensions, extension)
        )
        return self

    def with_max_depth(self, max_depth: int) -> SubAgentTool:
        """How many levels below the top-level run this tool may delegate to."""
        if max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth}")
        self.max_depth = max_depth
        return self

    # --- the call ----------------------------------------------------------------------------

    async def _context(self) -> AgentContext:
        tools: list[AgentTool] = list(self.tools)
        prompt = self.system_prompt
        state = self.shared_state
        if state is not None:
            tools = with_shared_state_tool(tools, state)
            summary = await state.summary()
            prompt = f"{prompt}\n\n{summary}" if prompt else summary
        return AgentContext(system_prompt=prompt, tools=tuple(tools))

    async def run(self, arguments: SubAgentTask, ctx: ToolContext) -> ToolResult:
        """Run the child on the task; its answer is the result."""
        task = arguments.task
        if ctx.depth + 1 > self.max_depth:
            raise ToolError(
                f"{self.name}: delegation is limited to {self.max_depth} level(s) below the "
                "top-level run and this one is at the limit; do the task yourself"
            )
        config = AgentLoopConfig(
            provider=self.provider,
            model=self.model,
            settings=self.settings,
            tool_output_sink=SharedStateSink(self.shared_state) if self.shared_state else None,
        ).delegated_from(ctx)
        stats = SessionStats()

        def relay(event: AgentEvent) -> None:
            if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
                if event.message.text:
                    ctx.update(ToolResult.from_text(event.message.text))
            elif isinstance(event, ToolExecutionStart):
                ctx.progress(f"{self.name} → {event.tool_name}")
            ctx.report_event(event)

        prompt = [UserMessage.from_text(task)]
        context = await self._context()
        run = LoopRun.prepare(prompt, context, config, relay, ctx.cancel.child(), stats)
        try:
            messages = await run.run()
        finally:
            ctx.report_delegated_run(stats)
        assert run.outcome is not None
        if run.outcome.end is RunEnd.REJECTED:
            raise ToolError(f"the sub-agent refused the task: {run.outcome.reason}")
        return _answer(messages, run.outcome)
