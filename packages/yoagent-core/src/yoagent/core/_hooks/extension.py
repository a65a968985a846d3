"""The extension contract: a factory started once per run, and the hooks it runs.

An :class:`Extension` is installed on an agent (``Agent.with_extension``) or on a whole
delegation tree (``with_tree_extension``). Each run calls its ``start_run`` for a fresh
:class:`RunHooks`, whose methods the loop calls at fixed points; every method has a no-op
default, so an extension overrides only what it needs. Decision gates, guards, budgets
and run recorders plug in here without changing the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from yoagent.core._cancel import CancelToken
from yoagent.core._tools.contract import AgentTool, ToolResult
from yoagent.core._types.config import ModelConfig
from yoagent.core._types.events import AgentEvent
from yoagent.core._types.messages import AssistantMessage
from yoagent.core._types.outcome import RunOutcome, StopCause
from yoagent.core._types.stats import RunSpend, SpendHandle

from .basic import Allow, FilterResult, Pass, ToolCallRequest, ToolDecision, TurnContext

FINISH_TIMEOUT = 5.0
"""Seconds a ``finish`` hook may take before the run ends without it."""


class ExtensionMode(StrEnum):
    """What a failure of an extension's own (a hook that raises, a start that fails) does."""

    REQUIRED = "required"
    """The run fails, once, with an error naming the extension."""
    ADVISORY = "advisory"
    """The failure is logged and the hook counts as a no-op; the run goes on."""


@dataclass(slots=True, kw_only=True, frozen=True)
class RunContext:
    """What an extension knows about the run it was started for.

    ``depth`` is 0 for a top-level run and one more per delegation; ``parent_run_id`` and
    ``delegated_by`` (the delegating tool call's id) are set in a delegated run;
    ``inherited`` is True when the extension runs here because an ancestor installed it
    with ``with_tree_extension``. ``spend`` is the run's ledger: record decision or
    compaction requests made for the run there (they reach ``AgentEnd.stats`` and budgets);
    an extension's own model calls go through :meth:`spend_handle`.
    """

    run_id: str
    model: ModelConfig
    cancel: CancelToken
    spend: RunSpend
    prompts: tuple[str, ...] = ()
    label: str = ""
    depth: int = 0
    parent_run_id: str | None = None
    delegated_by: str | None = None
    inherited: bool = False

    def spend_handle(self) -> SpendHandle:
        """A handle recording this extension's own model calls into the run's extension
        spend (``SessionStats.extensions``), usable from any task until the run ends."""
        return SpendHandle(self.spend)


# --- verdicts -------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Proceed:
    """``before_model``: call the model; ``notes`` go on this request's latest user turn."""

    notes: Sequence[str] = ()


@dataclass(slots=True, frozen=True)
class StopRun:
    """``before_model``: end the run now, with ``[Agent stopped: <reason>]``.

    ``cause`` is what ``RunOutcome.cause`` says stopped it: ``EXTENSION``, or ``BUDGET``
    for an extension that enforces a spending limit.
    """

    reason: str
    cause: StopCause = StopCause.EXTENSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "cause", StopCause(self.cause))


@dataclass(slots=True, frozen=True)
class FailRun:
    """``before_model``: end the run as failed (``prompt`` raises), with ``reason``."""

    reason: str


ModelVerdict = Proceed | StopRun | FailRun


@dataclass(slots=True, frozen=True)
class ContinueRun:
    """``on_stop``: do not stop yet; ``message`` goes to the model as the extension's note."""

    message: str


@dataclass(slots=True, kw_only=True)
class ToolOutput:
    """A tool call's outcome as ``after_tool`` may rewrite it (before the model sees it)."""

    result: ToolResult
    is_error: bool = False


# --- the hooks ------------------------------------------------------------------------------


class RunHooks:
    """One run's hooks. Subclass and override what you need; the defaults do nothing.

    Each hook point walks one chain. The older knobs are links of it: each input filter
    and tool middleware comes before every extension, each turn hook after them all (a
    ``before_model`` that only adds notes). Every hook is raced against the run's cancel: a
    cancelled hook counts as its no-op answer (``before_tool`` then denies, ``after_tool``
    withholds the output). A hook left as its no-op default is not called at all.
    """

    async def tools(self) -> Sequence[AgentTool]:
        """Tools offered for this run only (after the agent's own and its sources')."""
        return ()

    async def on_input(self, text: str) -> FilterResult:
        """Judge the run's prompt text (after the input filters; prompt runs only)."""
        return Pass()

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        """Before each turn's model request: add notes, stop the run, or fail it."""
        return Proceed()

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        """Approve, deny, rewrite or defer a tool call (after the tool middleware)."""
        return Allow()

    async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
        """Inspect or rewrite a tool's output before the model and the events see it."""
        return

    async def on_stop(self, reply: AssistantMessage, turn: TurnContext) -> ContinueRun | None:
        """The run is about to end on ``reply``: return :class:`ContinueRun` to go on."""
        return None

    def on_event(self, event: AgentEvent) -> None:
        """Every event of the run, after the caller got it. Must not block."""
        return

    async def finish(self, outcome: RunOutcome) -> None:
        """The run ended (bounded by :data:`FINISH_TIMEOUT`)."""
        return


class Extension(Protocol):
    """A factory of per-run hooks, installed on an agent or a delegation tree.

    ``name`` and ``start_run`` are required. The rest have defaults (subclass this protocol
    to inherit them, or set the attributes): ``mode`` is :attr:`ExtensionMode.ADVISORY`;
    ``filters_tool_output`` (the extension rewrites outputs in ``after_tool``, so partial
    outputs — tool updates, progress, a sub-agent's events — are not streamed meanwhile),
    ``rechecks_modified_calls`` (when a later extension rewrites a call this one
    approved, this one judges the rewritten call again) and ``runs_last`` (its hooks run
    after those of every extension without it, whenever either was installed — for a
    gate that must see the call the others settled on) are False.
    """

    name: str
    mode: ExtensionMode = ExtensionMode.ADVISORY
    filters_tool_output: bool = False
    rechecks_modified_calls: bool = False
    runs_last: bool = False

    def start_run(self, run: RunContext) -> RunHooks:
        """Fresh hooks for one run (called before the run's ``AgentStart``)."""
        ...


def check_extension(value: object) -> None:
    """Raise ``TypeError`` unless ``value`` has the two things an extension needs."""
    name = getattr(value, "name", None)
    if not isinstance(name, str) or not name or not callable(getattr(value, "start_run", None)):
        raise TypeError(
            f"{value!r} is not an Extension: it needs a non-empty str `name` and a "
            "`start_run(run)` method"
        )
