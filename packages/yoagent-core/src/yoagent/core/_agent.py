"""Agent: a stateful wrapper around the loop (history, tools, queues, model, spend)."""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import suppress
from typing import Any, TypeVar, overload

import anyio
from pydantic import BaseModel

from ._cancel import CancelToken
from ._context.compaction import ContextConfig, ContextTracker
from ._context.llm_compaction import LlmCompaction
from ._hooks.basic import InputFilter, MiddlewareLike, TurnHook
from ._loop.driver import EventSink, agent_loop, agent_loop_continue
from ._loop.settings import AgentContext, AgentLoopConfig, ToolExecution
from ._loop.task_groups import ungrouped
from ._provider.keys import with_env_key
from ._provider.protocol import OutputSchema, StreamProvider
from ._provider.registry import ProviderRegistry, default_registry
from ._shared_state.store import SharedState, SharedStateSink
from ._shared_state.tool import SharedStateTool
from ._structured import output_schema_for, parse_structured
from ._tools.contract import AgentTool
from ._tools.tool_source import ToolSource
from ._types.config import CacheConfig, ModelConfig, ThinkingLevel
from ._types.events import AgentEvent
from ._types.limits import ExecutionLimits
from ._types.messages import AgentMessage, UserMessage
from ._types.retry import RetryConfig
from ._types.stats import SessionStats

ModelT = TypeVar("ModelT", bound=BaseModel)
PromptInput = str | AgentMessage | Sequence[AgentMessage]


class AgentBusyError(RuntimeError):
    """A run is already in progress on this agent."""


def _as_messages(value: PromptInput) -> list[AgentMessage]:
    if isinstance(value, str):
        return [UserMessage.from_text(value)]
    if isinstance(value, Sequence):
        return list(value)
    return [value]


class Agent:
    """An agent: a model, a system prompt, tools, and the history of one conversation.

    Build it with :meth:`from_config` (the provider comes from the registry, the key from
    the provider's environment variable) or :meth:`from_provider`. One run at a time:
    :meth:`prompt` runs to completion, :meth:`stream` yields the same run's events.
    While a run goes on, :meth:`steer` and :meth:`follow_up` queue messages and
    :meth:`abort` cancels it.
    """

    def __init__(
        self,
        provider: StreamProvider,
        config: ModelConfig,
        *,
        system_prompt: str = "",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[AgentMessage] = (),
        thinking_level: ThinkingLevel = ThinkingLevel.OFF,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cache: CacheConfig | None = None,
        tool_execution: ToolExecution = ToolExecution.PARALLEL,
        batch_size: int = 4,
        limits: ExecutionLimits | None = None,
        retry: RetryConfig | None = None,
        tool_middleware: Sequence[MiddlewareLike] = (),
        input_filters: Sequence[InputFilter] = (),
        turn_hooks: Sequence[TurnHook] = (),
        max_tool_output_chars: int | None = 50_000,
        max_repeated_tool_calls: int | None = 3,
        turn_delay: float | None = None,
        tool_sources: Sequence[ToolSource] = (),
        compaction: bool = True,
        context: ContextConfig | None = None,
        shared_state: SharedState | None = None,
        llm_compaction: LlmCompaction | None = None,
    ) -> None:
        self.provider = provider
        self.model = config
        self.system_prompt = system_prompt
        self.tools: list[AgentTool] = list(tools)
        self.thinking_level = thinking_level
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.cache = cache or CacheConfig()
        self.tool_execution = tool_execution
        self.batch_size = batch_size
        self.limits = limits if limits is not None else ExecutionLimits()
        self.retry = retry or RetryConfig()
        self.tool_middleware: list[MiddlewareLike] = list(tool_middleware)
        self.input_filters: list[InputFilter] = list(input_filters)
        self.turn_hooks: list[TurnHook] = list(turn_hooks)
        self.max_tool_output_chars = max_tool_output_chars
        self.max_repeated_tool_calls = max_repeated_tool_calls
        self.turn_delay = turn_delay
        self.tool_sources: list[ToolSource] = list(tool_sources)
        self.compaction = compaction
        """Compact the history automatically when it would not fit the model's context."""
        self.context = context
        """Compaction settings; ``None`` derives them from the model's context window."""
        self._context_tracker = ContextTracker()
        self.shared_state = shared_state
        self.llm_compaction = llm_compaction
        """Model-written summaries for compaction (requested in the background)."""
        """When set, every run offers the ``shared_state`` tool, and a truncated tool
        output is stashed there in full, under a key its truncation marker names."""
        self._messages: list[AgentMessage] = list(messages)
        self._steering: list[AgentMessage] = []
        self._follow_ups: list[AgentMessage] = []
        self._cancel: CancelToken | None = None
        self._registry: ProviderRegistry | None = None
        self.last_run_stats = SessionStats()
        self.stats = SessionStats()
        """Spend of every run since construction or :meth:`reset`."""

    # --- construction --------------------------------------------------------------------

    @classmethod
    def from_config(
        cls, config: ModelConfig, *, registry: ProviderRegistry | None = None, **options: Any
    ) -> Agent:
        """An agent on the provider registered for ``config.api``.

        An empty ``config.api_key`` is filled from the provider's environment variable
        (e.g. ``ANTHROPIC_API_KEY``), else ``YOAGENT_API_KEY`` / ``API_KEY``.
        """
        chosen = registry or default_registry()
        resolved = with_env_key(config)
        agent = cls(chosen.create(resolved), resolved, **options)
        agent._registry = chosen
        return agent

    @classmethod
    def from_provider(cls, provider: StreamProvider, config: ModelConfig, **options: Any) -> Agent:
        """An agent on a provider you built (a custom one, or a test double)."""
        return cls(provider, config, **options)

    def set_model(self, config: ModelConfig) -> None:
        """Switch model for later runs.

        The key is re-read from the environment unless ``config`` carries one. The
        provider is re-selected only when it came from the registry; an explicit provider
        is kept.
        """
        resolved = with_env_key(config)
        if self._registry is not None:
            self.provider = self._registry.create(resolved)
        self.model = resolved
        self._context_tracker = ContextTracker()  # another model counts tokens differently

    # --- history and queues --------------------------------------------------------------

    @property
    def messages(self) -> list[AgentMessage]:
        """The whole history (a copy)."""
        return list(self._messages)

    def replace_messages(self, messages: Sequence[AgentMessage]) -> None:
        """Replace the history."""
        self._require_idle()
        self._messages = list(messages)
        self._context_tracker.reset()

    def append_message(self, message: AgentMessage) -> None:
        """Add one message to the history (e.g. a :class:`CustomMessage`)."""
        self._require_idle()
        self._messages.append(message)

    def reset(self) -> None:
        """Forget the history, the queues and the spend totals."""
        self._require_idle()
        self._messages.clear()
        self._steering.clear()
        self._follow_ups.clear()
        self.last_run_stats = SessionStats()
        self.stats = SessionStats()

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message for the running agent: it goes in after the current tool calls
        (later calls of the same reply are skipped)."""
        self._steering.extend(_as_messages(message))

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message to send when the agent would otherwise stop."""
        self._follow_ups.extend(_as_messages(message))

    def abort(self) -> None:
        """Cancel the running run (no-op when idle).

        A streaming reply ends as ABORTED, running tools are cancelled, and the history
        ends with ``[Agent stopped: cancelled]``. Steering the loop already took goes into
        the history first; messages still queued stay queued for the next run.
        """
        if self._cancel is not None:
            self._cancel.cancel()

    @property
    def is_running(self) -> bool:
        """True while a run is in progress."""
        return self._cancel is not None

    def _take_steering(self) -> list[AgentMessage]:
        taken, self._steering = self._steering, []
        return taken

    def _take_follow_ups(self) -> list[AgentMessage]:
        taken, self._follow_ups = self._follow_ups, []
        return taken

    def _require_idle(self) -> None:
        if self._cancel is not None:
            raise AgentBusyError("a run is in progress; use steer() or follow_up(), or abort() it")

    # --- runs ----------------------------------------------------------------------------

    def _run_tools(self) -> tuple[AgentTool, ...]:
        tools = tuple(self.tools)
        if self.shared_state is not None and all(t.name != SharedStateTool.name for t in tools):
            tools = (*tools, SharedStateTool(self.shared_state))
        return tools

    def _loop_config(self, output_schema: OutputSchema | None) -> AgentLoopConfig:
        return AgentLoopConfig(
            provider=self.provider,
            model=self.model,
            thinking_level=self.thinking_level,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            cache=self.cache,
            tool_execution=self.tool_execution,
            batch_size=self.batch_size,
            limits=self.limits,
            retry=self.retry,
            tool_middleware=tuple(self.tool_middleware),
            input_filters=tuple(self.input_filters),
            turn_hooks=tuple(self.turn_hooks),
            get_steering_messages=self._take_steering,
            get_follow_up_messages=self._take_follow_ups,
            output_schema=output_schema,
            max_tool_output_chars=self.max_tool_output_chars,
            max_repeated_tool_calls=self.max_repeated_tool_calls,
            turn_delay=self.turn_delay,
            tool_sources=tuple(self.tool_sources),
            context=(self.context or ContextConfig.for_model(self.model))
            if self.compaction
            else None,
            context_tracker=self._context_tracker,
            llm_compaction=self.llm_compaction,
            tool_output_sink=SharedStateSink(self.shared_state) if self.shared_state else None,
        )

    async def _run(
        self,
        prompts: list[AgentMessage] | None,
        emit: EventSink | None,
        output_schema: OutputSchema | None = None,
    ) -> list[AgentMessage]:
        self._require_idle()
        cancel = CancelToken()
        self._cancel = cancel
        stats = SessionStats()
        context = AgentContext(
            system_prompt=self.system_prompt, messages=self._messages, tools=self._run_tools()
        )
        config = self._loop_config(output_schema)
        try:
            if prompts is None:
                return await agent_loop_continue(context, config, emit, cancel=cancel, stats=stats)
            return await agent_loop(prompts, context, config, emit, cancel=cancel, stats=stats)
        finally:
            self._cancel = None
            self.last_run_stats = stats
            self.stats.merge(stats)

    async def prompt(
        self, prompt: PromptInput, *, on_event: EventSink | None = None
    ) -> list[AgentMessage]:
        """Run to completion on a new prompt; returns the messages the run added."""
        return await self._run(_as_messages(prompt), on_event)

    async def continue_(self, *, on_event: EventSink | None = None) -> list[AgentMessage]:
        """Run again from the history as it is (it must end on a user message or tool results)."""
        return await self._run(None, on_event)

    def stream(self, prompt: PromptInput) -> AsyncGenerator[AgentEvent]:
        """The run on ``prompt`` as a stream of events.

        Breaking out early cancels the run; close the generator deterministically with
        ``contextlib.aclosing`` when you may break out.
        """
        return self._stream(_as_messages(prompt))

    def stream_continue(self) -> AsyncGenerator[AgentEvent]:
        """:meth:`continue_` as a stream of events."""
        return self._stream(None)

    async def _stream(self, prompts: list[AgentMessage] | None) -> AsyncGenerator[AgentEvent]:
        self._require_idle()
        send, receive = anyio.create_memory_object_stream[AgentEvent](math.inf)

        def emit(event: AgentEvent) -> None:
            # The consumer may have gone away: the run is being cancelled then.
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                send.send_nowait(event)

        async def produce() -> None:
            async with send:
                await self._run(prompts, emit)

        with ungrouped():  # the run's own exception, not a group of one
            async with anyio.create_task_group() as group:
                group.start_soon(produce)
                try:
                    async with receive:
                        async for event in receive:
                            yield event
                except GeneratorExit:
                    # The consumer stopped listening: end the run the way abort() does, so
                    # the history closes cleanly, and finish without yielding again.
                    self.abort()

    @overload
    async def prompt_structured(self, prompt: PromptInput, schema: type[ModelT]) -> ModelT: ...
    @overload
    async def prompt_structured(self, prompt: PromptInput, schema: dict[str, Any]) -> Any: ...
    async def prompt_structured(
        self,
        prompt: PromptInput,
        schema: type[BaseModel] | dict[str, Any],
        *,
        on_event: EventSink | None = None,
    ) -> Any:
        """Run on ``prompt`` and return the final reply parsed against ``schema``.

        ``schema`` is a pydantic model class (the value is validated into it) or a JSON
        schema dict (the value is parsed JSON). The schema travels with this call only.
        Raises :class:`StructuredProviderError`, :class:`StructuredParseError` or
        :class:`NoStructuredOutputError`.
        """
        new = await self._run(_as_messages(prompt), on_event, output_schema_for(schema))
        return parse_structured(new, schema)

    async def aclose(self) -> None:
        """Release the provider's resources (its HTTP client), if it has any."""
        close: Callable[[], Any] | None = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
