"""Agent: a stateful wrapper around the loop (history, tools, queues, model, spend); and
the factory a server builds one with per request (``AgentFactory``, ``agent_from``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast, overload

from ._cancel import CancelToken
from ._context.tracker import ContextTracker
from ._hooks.extension import Extension, check_extension
from ._loop.driver import LoopRun
from ._loop.resume import Decisions, check_decisions
from ._loop.settings import AgentContext, AgentLoopConfig, RunOptions, RunSettings, settings_with
from ._loop.state import EventSink
from ._provider.keys import require_api_key, with_env_key
from ._provider.protocol import OutputSchema, StreamProvider
from ._provider.registry import ProviderRegistry, default_registry
from ._run_stream import RunFailedError, RunStream
from ._shared_state.store import SharedState, SharedStateSink
from ._structured import output_schema_for, parse_structured
from ._tools.contract import AgentTool, Delegation, ToolContext
from ._tools.function_tool import as_tools
from ._types.approval import PendingApproval
from ._types.config import ModelConfig, ThinkingLevel
from ._types.errors import ErrorKind, YoagentError
from ._types.events import AgentEvent
from ._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
)
from ._types.outcome import RunOutcome
from ._types.stats import SessionStats, replies_cost

if TYPE_CHECKING:  # pydantic is imported where a model is used, not with yoagent.core
    from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound="BaseModel")
PromptInput = str | AgentMessage | Sequence[AgentMessage]
"""A prompt: text, a message, or several messages."""


class AgentOptions(RunOptions, total=False):
    """The keyword options of :class:`Agent` (and of its ``from_*`` constructors): what
    it starts with, and the fields of :class:`RunSettings`."""

    system_prompt: str
    tools: Sequence[AgentTool | Callable[..., Any]]
    messages: Sequence[AgentMessage]
    settings: RunSettings | None
    shared_state: SharedState | None


class AgentBusyError(YoagentError, RuntimeError):
    """A run is already in progress on this agent."""


def _as_messages(value: object, *, where: str = "prompt") -> list[AgentMessage]:
    """``value`` (text, a message, or a list of messages) as a list of messages; a
    ``TypeError`` naming what is wrong otherwise."""
    if isinstance(value, str):
        return [UserMessage.from_text(value)]
    if _is_message(value):
        return [cast(AgentMessage, value)]
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        items = list(cast("Sequence[object]", value))
        for index, item in enumerate(items):
            if not _is_message(item):
                raise TypeError(
                    f"{where}[{index}] must be a message (UserMessage, ...), "
                    f"got {type(item).__name__}"
                )
        return cast("list[AgentMessage]", items)
    raise TypeError(
        f"{where} must be text, a message or a list of messages, got {type(value).__name__}"
    )


def _is_message(value: object) -> bool:
    return isinstance(value, UserMessage | AssistantMessage | ToolResultMessage | CustomMessage)


def run_failure(new_messages: list[AgentMessage]) -> RunFailedError | None:
    """The error of a run that ended in ``StopReason.ERROR``, else ``None``."""
    for message in reversed(new_messages):
        if isinstance(message, AssistantMessage):
            if message.stop_reason is not StopReason.ERROR:
                return None
            return RunFailedError(
                message.error_kind or ErrorKind.OTHER,
                message.error_message or "the run failed",
                new_messages,
            )
    return None


class Agent:
    """An agent: a model, a system prompt, tools, and the history of one conversation.

    Build it on a provider you have (``Agent(provider, config)``, or :meth:`from_provider`,
    the same) or with :meth:`from_config` (the provider comes from the registry, the key
    from the provider's environment variable); both build it through ``__init__``, with
    the same keyword options (:class:`AgentOptions`). How runs behave is one
    :class:`RunSettings` (``settings=``, or its fields as keywords). One run at a time:
    :meth:`prompt` runs to completion (raising :class:`RunFailedError` when the run
    fails), :meth:`stream` gives the same run's events. While a run goes on,
    :meth:`steer` and :meth:`follow_up` queue messages and :meth:`abort` cancels it.
    """

    def __init__(
        self,
        provider: StreamProvider,
        config: ModelConfig,
        *,
        system_prompt: str = "",
        tools: Sequence[AgentTool | Callable[..., Any]] = (),
        messages: Sequence[AgentMessage] = (),
        settings: RunSettings | None = None,
        shared_state: SharedState | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        if not isinstance(cast(object, config), ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
        self.provider = provider
        self.model = config
        self.system_prompt = system_prompt
        self.tools: list[AgentTool] = as_tools(tools)
        """The agent's tools (a plain function added later is made a tool at run start)."""
        self.settings: RunSettings = settings_with(RunSettings(), settings, options)
        """How runs behave (replace it, or use the ``with_*`` methods, between runs)."""
        self.shared_state = shared_state
        """When set, every run offers the ``shared_state`` tool, and a truncated tool
        output is stashed there in full, under a key its truncation marker names."""
        self._messages: list[AgentMessage] = _as_messages(list(messages), where="messages")
        self._steering: list[AgentMessage] = []
        self._follow_ups: list[AgentMessage] = []
        self._cancel: CancelToken | None = None
        self._registry: ProviderRegistry | None = None
        self._context_tracker = ContextTracker()
        self._delegated_from: ToolContext | None = None
        self.last_run_stats = SessionStats()
        """Spend of the latest run."""
        self._last_outcome: RunOutcome | None = None
        self.stats = SessionStats()
        """Spend of every run since construction or :meth:`reset`."""

    # --- construction --------------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        config: ModelConfig,
        *,
        registry: ProviderRegistry | None = None,
        **options: Unpack[AgentOptions],
    ) -> Agent:
        """An agent on the provider registered for ``config.api`` (``options``: those of
        :class:`Agent` itself).

        An empty ``config.api_key`` is filled from the provider's environment variable
        (e.g. ``ANTHROPIC_API_KEY``), else ``YOAGENT_API_KEY`` / ``API_KEY``. When none is
        set and the model needs one, :class:`MissingApiKeyError` names the variable to set
        (a server on this machine or a private network needs none, nor does Bedrock).
        """
        resolved = with_env_key(config)
        chosen = registry or default_registry()
        factory = chosen.factory(resolved.api)  # a missing provider is the first thing to say
        require_api_key(resolved)
        agent = cls(factory(resolved), resolved, **options)
        agent._registry = chosen
        return agent

    @classmethod
    def from_provider(
        cls, provider: StreamProvider, config: ModelConfig, **options: Unpack[AgentOptions]
    ) -> Agent:
        """An agent on a provider you built (a custom one, or a test double): the same as
        ``Agent(provider, config, **options)``."""
        return cls(provider, config, **options)

    def set_model(self, config: ModelConfig) -> None:
        """Switch model for later runs.

        The key is re-read from the environment unless ``config`` carries one. The
        provider is re-selected only when it came from the registry; an explicit provider
        is kept.
        """
        resolved = with_env_key(config)
        if self._registry is not None:
            factory = self._registry.factory(resolved.api)
            require_api_key(resolved)
            self.provider = factory(resolved)
        self.model = resolved
        self._context_tracker = ContextTracker()  # another model counts tokens differently

    @property
    def thinking_level(self) -> ThinkingLevel:
        """How hard the model thinks (a shortcut to ``settings.thinking_level``)."""
        return self.settings.thinking_level

    @thinking_level.setter
    def thinking_level(self, level: ThinkingLevel) -> None:
        self.settings = self.settings.replace(thinking_level=level)

    def with_extension(self, extension: Extension) -> Agent:
        """Install ``extension`` on this agent's runs (after those installed before)."""
        check_extension(extension)
        self.settings = self.settings.replace(extensions=(*self.settings.extensions, extension))
        return self

    def with_tree_extension(self, extension: Extension) -> Agent:
        """Install ``extension`` on this agent's runs and on every run they delegate, at any
        depth (there it runs first; its tools are offered only here)."""
        check_extension(extension)
        self.settings = self.settings.replace(
            tree_extensions=(*self.settings.tree_extensions, extension)
        )
        return self

    def delegated_from(self, ctx: ToolContext) -> Agent:
        """Make this agent's later runs children of the tool call ``ctx`` (for a tool that
        delegates to an agent of its own): one level deeper, inheriting the caller's tree
        extensions, with their events forwarded to the call and their spend reported."""
        self._delegated_from = ctx
        return self

    # --- history and queues --------------------------------------------------------------

    @property
    def messages(self) -> list[AgentMessage]:
        """The whole history (a copy)."""
        return list(self._messages)

    @property
    def last_outcome(self) -> RunOutcome | None:
        """How the latest run ended (what its ``AgentEnd`` said), also when it raised;
        ``None`` before the first run and after :meth:`reset`. A call refused before any
        run began (a busy agent, nothing to continue from, a resume that does not fit)
        leaves it as it was."""
        return self._last_outcome

    def session_cost_usd(self) -> float | None:
        """What the replies in the history cost (``None`` when one that used tokens is
        unpriced): each at its own model's rates — this agent's model's (its ``cost``, else
        the price resolver's), or the resolver's for the model that wrote it.

        Derived from the history, as the original's is: a history loaded from a session
        counts at once, one replaced or compacted counts what it holds now. Delegated runs,
        compaction summaries and decision requests are not in the history and never count;
        :attr:`stats` (``total_cost_usd()``) is what this agent's runs spent.
        """
        return replies_cost(self._messages, self.model)

    @property
    def pending(self) -> PendingApproval | None:
        """The tool calls the history waits on: set when a run paused (a hook deferred
        calls), until :meth:`resume` answers them or a new run goes on past them."""
        return PendingApproval.from_messages(self._messages)

    def replace_messages(self, messages: Sequence[AgentMessage]) -> None:
        """Replace the history."""
        self._require_idle()
        self._messages = _as_messages(list(messages), where="messages")
        self._context_tracker.reset()

    def append_message(self, message: AgentMessage) -> None:
        """Add one message to the history (e.g. a :class:`CustomMessage`)."""
        self._require_idle()
        self._messages.extend(_as_messages(message, where="message"))

    def reset(self) -> None:
        """Forget the history, the queues and the spend totals."""
        self._require_idle()
        self._messages.clear()
        self._steering.clear()
        self._follow_ups.clear()
        self.last_run_stats = SessionStats()
        self._last_outcome = None
        self.stats = SessionStats()

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message for the running agent: it goes in after the current tool calls
        (later calls of the same reply are skipped)."""
        self._steering.extend(_as_messages(message, where="message"))

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message to send when the agent would otherwise stop."""
        self._follow_ups.extend(_as_messages(message, where="message"))

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
        tools = as_tools(self.tools, where="Agent.tools")
        if self.shared_state is not None:
            from ._shared_state.tool import with_shared_state_tool  # pydantic model: on use

            tools = with_shared_state_tool(tools, self.shared_state)
        return tuple(tools)

    def _loop_config(self, output_schema: OutputSchema | None) -> AgentLoopConfig:
        parent = self._delegated_from
        delegation: Delegation | None = parent.child_delegation() if parent is not None else None
        return AgentLoopConfig(
            provider=self.provider,
            model=self.model,
            settings=self.settings,
            get_steering_messages=self._take_steering,
            get_follow_up_messages=self._take_follow_ups,
            output_schema=output_schema,
            context_tracker=self._context_tracker,
            tool_output_sink=SharedStateSink(self.shared_state) if self.shared_state else None,
            delegation=delegation,
        )

    async def _run(
        self,
        prompts: list[AgentMessage] | None,
        emit: EventSink | None,
        output_schema: OutputSchema | None = None,
        *,
        decisions: Decisions | None = None,
    ) -> list[AgentMessage]:
        self._require_idle()
        context = AgentContext(
            system_prompt=self.system_prompt, messages=self._messages, tools=self._run_tools()
        )
        config = self._loop_config(output_schema)
        parent = self._delegated_from
        if parent is not None:
            emit = _forwarding(emit, parent)
        cancel = CancelToken()
        self._cancel = cancel
        stats = SessionStats()
        run: LoopRun | None = None
        try:
            run = LoopRun.prepare(
                prompts, context, config, emit, cancel, stats, decisions=decisions
            )
            new = await run.run()
        finally:
            self._cancel = None
            if run is not None:  # else no run began (nothing to continue from)
                self._last_outcome = run.outcome
            self.last_run_stats = stats
            self.stats.merge(stats)
            if parent is not None:
                parent.report_delegated_run(stats)
        failure = run_failure(new)
        if failure is not None:
            raise failure
        return new

    async def prompt(
        self, prompt: PromptInput, *, on_event: EventSink | None = None
    ) -> list[AgentMessage]:
        """Run to completion on a new prompt; returns the messages the run added.

        Raises :class:`RunFailedError` when the run ends in ``StopReason.ERROR`` (the
        history keeps what happened). A cancelled or limited run returns normally.
        """
        return await self._run(_as_messages(prompt), on_event)

    async def continue_(self, *, on_event: EventSink | None = None) -> list[AgentMessage]:
        """Run again from the history as it is (it must end on a user message or tool
        results). Raises :class:`RunFailedError` like :meth:`prompt`."""
        return await self._run(None, on_event)

    def stream(self, prompt: PromptInput) -> RunStream:
        """The run on ``prompt`` as a stream of events.

        Use it as ``async with agent.stream(prompt) as events: async for event in events``
        — leaving that block early (``break``, an exception) aborts the run and closes it
        cleanly. Every event is delivered; when the run fails, the iteration then raises
        :class:`RunFailedError`.
        """
        self._require_idle()
        messages = _as_messages(prompt)

        async def produce(emit: EventSink) -> list[AgentMessage]:
            return await self._run(messages, emit)

        return RunStream(produce, self.abort)

    def stream_continue(self) -> RunStream:
        """:meth:`continue_` as a stream of events (see :meth:`stream`)."""
        self._require_idle()

        async def produce(emit: EventSink) -> list[AgentMessage]:
            return await self._run(None, emit)

        return RunStream(produce, self.abort)

    async def resume(
        self, decisions: Decisions, *, on_event: EventSink | None = None
    ) -> list[AgentMessage]:
        """Answer the calls a paused run holds (see :attr:`pending`) and go on with it.

        ``decisions`` maps each held call's id to ``Allow()``, ``Deny(reason)`` (the model
        reads the reason as the call's error result) or ``Modify(arguments)``; one
        ``Allow()`` or ``Deny(reason)`` answers every held call. The allowed calls run (the
        tool middleware and extensions judge them as usual, the decision answering a
        deferral), their results take the placeholders' places, and the loop goes on —
        possibly to another pause. Nothing that already ran runs again. Raises
        :class:`ResumeError` before anything runs when nothing is held (never paused, or
        resumed already) or the decisions do not fit; :class:`RunFailedError` like
        :meth:`prompt`.
        """
        self._require_idle()
        check_decisions(self._messages, decisions)
        return await self._run(None, on_event, decisions=decisions)

    def stream_resume(self, decisions: Decisions) -> RunStream:
        """:meth:`resume` as a stream of events (see :meth:`stream`); the decisions are
        checked now (:class:`ResumeError`)."""
        self._require_idle()
        check_decisions(self._messages, decisions)

        async def produce(emit: EventSink) -> list[AgentMessage]:
            return await self._run(None, emit, decisions=decisions)

        return RunStream(produce, self.abort)

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
        Raises :class:`RunFailedError` when the run fails, else
        :class:`StructuredProviderError` (refused or cancelled),
        :class:`StructuredParseError` or :class:`NoStructuredOutputError`.
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


def _forwarding(emit: EventSink | None, parent: ToolContext) -> EventSink:
    """``emit`` (if any), and every event forwarded to the delegating call ``parent``."""

    def forward(event: AgentEvent) -> None:
        if emit is not None:
            emit(event)
        parent.report_event(event)

    return forward


AgentFactory = Callable[[], Agent | Awaitable[Agent]]
"""Builds a fresh agent (model, system prompt, tools, settings) for one request or task;
a plain function or a coroutine function."""


async def agent_from(factory: AgentFactory) -> Agent:
    """The agent ``factory`` builds (awaited when it returns an awaitable); ``TypeError``
    naming what it built instead of an :class:`~yoagent.core.Agent`."""
    made = factory()
    agent = await made if inspect.isawaitable(made) else made
    if not isinstance(cast(object, agent), Agent):
        raise TypeError(f"the agent factory returned {type(agent).__name__}, not an Agent")
    return agent
