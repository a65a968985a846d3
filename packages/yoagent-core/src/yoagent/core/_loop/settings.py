"""How a run behaves (RunSettings, declared once), what it works on (AgentContext), and
the wiring of one loop call (AgentLoopConfig)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypedDict, Unpack, cast

from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.llm_compaction import LlmCompaction
from yoagent.core._context.tracker import ContextTracker
from yoagent.core._hooks.basic import InputFilter, MiddlewareLike, TurnHook
from yoagent.core._hooks.extension import Extension, check_extension
from yoagent.core._provider.protocol import OutputSchema, StreamProvider
from yoagent.core._shared_state.store import ToolOutputSink
from yoagent.core._tools.contract import AgentTool, Delegation, ToolContext
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


ContextSetting = ContextConfig | Literal["auto", "off"]
"""Compaction: ``"auto"`` derives a :class:`ContextConfig` from the model's window and
output size, ``"off"`` never compacts, a :class:`ContextConfig` is used as it is."""

_SEQUENCES = (
    "tool_middleware",
    "input_filters",
    "turn_hooks",
    "tool_sources",
    "extensions",
    "tree_extensions",
)


@dataclass(slots=True, kw_only=True, frozen=True)
class RunSettings:
    """Everything about how a run behaves, shared by ``Agent``, ``SubAgentTool`` and the
    loop functions. Frozen: derive a changed copy with :meth:`replace`.

    ``None`` is never a policy here: no limits is ``ExecutionLimits.unlimited()``, no
    compaction is ``context="off"``.
    """

    thinking_level: ThinkingLevel = ThinkingLevel.OFF
    max_tokens: int | None = None
    """The reply's token cap (``None``: the provider's default for the model)."""
    temperature: float | None = None
    """Sampling temperature (``None``: the provider's default)."""
    cache: CacheConfig = field(default_factory=CacheConfig)
    tool_execution: ToolExecution = ToolExecution.PARALLEL
    batch_size: int = 4
    """Calls per batch with ``ToolExecution.BATCHED`` (0 runs as 1, as in the spec)."""
    limits: ExecutionLimits = field(default_factory=ExecutionLimits)
    retry: RetryConfig = field(default_factory=RetryConfig)
    tool_middleware: Sequence[MiddlewareLike] = ()
    input_filters: Sequence[InputFilter] = ()
    turn_hooks: Sequence[TurnHook] = ()
    extensions: Sequence[Extension] = ()
    """Extensions of this agent's runs (see ``Extension``)."""
    tree_extensions: Sequence[Extension] = ()
    """Extensions of this agent's runs and of every run delegated from them, at any depth
    (in a delegated run they come first; their ``tools`` are not offered there)."""
    max_stop_continues: int = 3
    """How many times extensions' ``on_stop`` may keep one run going."""
    max_tool_output_chars: int | None = 50_000
    """Longer tool output is cut in the middle, with a visible marker; ``None`` keeps it all."""
    max_repeated_tool_calls: int | None = 3
    """The same calls this many turns in a row are not run: the model is told so once, and
    the run stops if it repeats them again. ``None`` turns the check off."""
    turn_delay: float | None = None
    """Seconds to wait between turns (throttling for rate-limit-sensitive providers)."""
    tool_sources: Sequence[ToolSource] = ()
    """Asked at the start of every run, and again before a later turn when their set moved."""
    context: ContextSetting = "auto"
    """Automatic compaction: before a request that would not fit, and once after the model
    reports a context overflow."""
    llm_compaction: LlmCompaction | None = None
    """Model-written summaries for compaction, requested in the background ahead of need."""
    run_label: str = ""
    """A name for this agent's runs, given to extensions (``RunContext.label``)."""

    def __post_init__(self) -> None:
        for name in _SEQUENCES:
            value: object = getattr(self, name)
            if isinstance(value, str | bytes) or not isinstance(value, Sequence):
                raise TypeError(
                    f"RunSettings.{name} must be a list or tuple, got {type(value).__name__}"
                )
            object.__setattr__(self, name, tuple(value))  # pyright: ignore[reportUnknownArgumentType]
        for extension in (*self.extensions, *self.tree_extensions):
            check_extension(extension)
        _check_type("limits", self.limits, ExecutionLimits, "ExecutionLimits.unlimited()")
        _check_type("retry", self.retry, RetryConfig, "RetryConfig.none()")
        _check_type("cache", self.cache, CacheConfig, "CacheConfig(enabled=False)")
        if not isinstance(self.context, ContextConfig) and self.context not in ("auto", "off"):
            raise TypeError(
                f'RunSettings.context must be "auto", "off" or a ContextConfig, '
                f"got {self.context!r}"
            )
        object.__setattr__(self, "thinking_level", ThinkingLevel(self.thinking_level))
        object.__setattr__(self, "tool_execution", ToolExecution(self.tool_execution))
        if self.batch_size < 0:
            raise ValueError(f"RunSettings.batch_size must be >= 0, got {self.batch_size}")
        if self.max_stop_continues < 0:
            raise ValueError(
                f"RunSettings.max_stop_continues must be >= 0, got {self.max_stop_continues}"
            )
        if self.turn_delay is not None and not (
            math.isfinite(self.turn_delay) and self.turn_delay >= 0
        ):
            raise ValueError(f"RunSettings.turn_delay must be >= 0, got {self.turn_delay}")

    def replace(self, **changes: Unpack[RunOptions]) -> RunSettings:
        """A copy with ``changes`` applied (checked the same way)."""
        _check_names(changes)
        return dataclasses.replace(self, **changes)

    def context_for(self, model: ModelConfig) -> ContextConfig | None:
        """The compaction settings for ``model`` (``None``: compaction is off)."""
        if self.context == "off":
            return None
        if self.context == "auto":
            return _auto_context(model.context_window, model.max_tokens)
        return self.context


@functools.lru_cache(maxsize=64)
def _auto_context(context_window: int, max_tokens: int) -> ContextConfig:
    """``ContextConfig.for_model`` for a window and output size (frozen: shared freely)."""
    return ContextConfig(context_window=context_window, reserve_output_tokens=max_tokens)


class RunOptions(TypedDict, total=False):
    """The fields of :class:`RunSettings` as keyword options (``Agent(..., limits=...)``)."""

    thinking_level: ThinkingLevel
    max_tokens: int | None
    temperature: float | None
    cache: CacheConfig
    tool_execution: ToolExecution
    batch_size: int
    limits: ExecutionLimits
    retry: RetryConfig
    tool_middleware: Sequence[MiddlewareLike]
    input_filters: Sequence[InputFilter]
    turn_hooks: Sequence[TurnHook]
    extensions: Sequence[Extension]
    tree_extensions: Sequence[Extension]
    max_stop_continues: int
    max_tool_output_chars: int | None
    max_repeated_tool_calls: int | None
    turn_delay: float | None
    tool_sources: Sequence[ToolSource]
    context: ContextSetting
    llm_compaction: LlmCompaction | None
    run_label: str


def _check_names(options: Any) -> None:
    unknown = set(options) - set(RunOptions.__annotations__)
    if unknown:
        raise TypeError(f"unknown run setting(s): {', '.join(sorted(unknown))}")


def _check_type(name: str, value: object, expected: type, instead_of_none: str) -> None:
    if not isinstance(value, expected):
        hint = f" (for none, use {instead_of_none})" if value is None else ""
        raise TypeError(
            f"RunSettings.{name} must be a {expected.__name__}, got {type(value).__name__}{hint}"
        )


_DEFAULTS = RunSettings()


def settings_with(base: RunSettings, settings: RunSettings | None, options: Any) -> RunSettings:
    """``settings`` (else ``base``) with keyword ``options`` applied on top."""
    if settings is None and base == _DEFAULTS and options:
        _check_names(options)
        return RunSettings(**options)  # one check instead of two (an Agent per run is common)
    chosen = base if settings is None else settings
    if not isinstance(cast(object, chosen), RunSettings):
        raise TypeError(f"settings must be a RunSettings, got {type(chosen).__name__}")
    return chosen.replace(**options) if options else chosen


@dataclass(slots=True, kw_only=True)
class AgentContext:
    """The system prompt, the history (appended to in place by the loop) and the tools."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list[AgentMessage])
    tools: Sequence[AgentTool] = ()


@dataclass(slots=True, kw_only=True)
class AgentLoopConfig:
    """One call of the loop: the provider and model, the run's settings, and its wiring."""

    provider: StreamProvider
    model: ModelConfig
    settings: RunSettings = field(default_factory=RunSettings)
    get_steering_messages: Callable[[], list[AgentMessage]] | None = None
    get_follow_up_messages: Callable[[], list[AgentMessage]] | None = None
    output_schema: OutputSchema | None = None
    tool_output_sink: ToolOutputSink | None = None
    """Where the full text of a truncated tool output is stashed; the truncation marker
    then names the key to read it back (e.g. with the ``shared_state`` tool)."""
    context_tracker: ContextTracker | None = None
    """Carries the real-usage calibration across runs (the Agent keeps one); made per run
    when ``None``."""
    delegation: Delegation | None = None
    """Set for a run delegated by a tool call (see :meth:`delegated_from`)."""

    def delegated_from(self, ctx: ToolContext) -> AgentLoopConfig:
        """A copy whose run is a child of the tool call ``ctx`` (a ``ToolContext``): one
        level deeper, with the tree extensions of the delegating run."""
        return dataclasses.replace(self, delegation=ctx.child_delegation())
