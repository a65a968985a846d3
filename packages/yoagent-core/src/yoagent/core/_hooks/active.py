"""One run's started extensions, and the one place each of their hooks is called.

Each hook point walks one chain: the knobs' extensions (see ``knobs``), then the
extensions proper. Every call is raced against the run's cancel (a cancelled hook gives
its no-op answer) and contained: what an extension raises is its failure, which fails
the run once when the extension is required and is logged when it is advisory. The loop
asks :attr:`ActiveExtensions.failure` at fixed points and ends the run on it. A hook an
extension does not override is never called (it would answer its no-op anyway).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, TypeVar, cast

import anyio

from yoagent.core._cancel import CancelToken, unless_cancelled
from yoagent.core._logging import logger
from yoagent.core._tools.contract import AgentTool, ToolResult
from yoagent.core._tools.function_tool import as_tools
from yoagent.core._types.events import AgentEvent
from yoagent.core._types.messages import AssistantMessage
from yoagent.core._types.outcome import RunOutcome, StopCause

from .basic import (
    Allow,
    Defer,
    Deny,
    FilterResult,
    Modify,
    Pass,
    Reject,
    ToolCallRequest,
    ToolDecision,
    TurnContext,
    Warn,
)
from .extension import (
    FINISH_TIMEOUT,
    ContinueRun,
    Extension,
    ExtensionMode,
    FailRun,
    ModelVerdict,
    Proceed,
    RunContext,
    RunHooks,
    StopRun,
    ToolOutput,
)

T = TypeVar("T")

WITHHELD = "Tool output withheld: the run was cancelled before it could be checked."


HOOKS = (
    "tools",
    "on_input",
    "before_model",
    "before_tool",
    "after_tool",
    "on_stop",
    "on_event",
    "finish",
)
"""The hook points of :class:`RunHooks`."""


@dataclass(slots=True)
class _Started:
    name: str
    mode: ExtensionMode
    filters: bool
    rechecks: bool
    hooks: RunHooks
    inherited: bool
    rank: int
    """0: a knob that goes first; 1: an extension; 2: one that ``runs_last``; 3: a knob
    that goes after them all."""
    prefix: str
    """What its verdicts' reasons start with (its name; nothing for a knob)."""
    observing: bool = True


_NO_CHAINS: Mapping[str, list[_Started]] = MappingProxyType({hook: [] for hook in HOOKS})


def _overrides(hooks: RunHooks, hook: str) -> bool:
    """Whether ``hooks`` has its own ``hook`` (a subclass's method, or one set on it)."""
    return getattr(type(hooks), hook) is not getattr(RunHooks, hook) or hook in getattr(
        hooks, "__dict__", ()
    )


@dataclass(slots=True, frozen=True)
class Failure:
    """A required extension failed the run."""

    extension: str
    reason: str


@dataclass(slots=True, frozen=True)
class Held:
    """``before_tool`` of an extension deferred the call, as it saw ``arguments``."""

    reason: str
    arguments: dict[str, Any]


@dataclass(slots=True, frozen=True)
class Halt:
    """``before_model`` of ``extension`` stopped (``failed`` False) or failed the run."""

    extension: str
    reason: str
    failed: bool
    cause: StopCause = StopCause.EXTENSION


def _mode(extension: Extension) -> ExtensionMode:
    return ExtensionMode(getattr(extension, "mode", ExtensionMode.ADVISORY))


class ActiveExtensions:
    """The started extensions of one run, in dispatch order: the leading knobs (input
    filters, tool middleware), inherited, tree, own — then, in that same order, those that
    set ``runs_last`` — then the trailing knobs (turn hooks)."""

    __slots__ = ("_cancel", "_chains", "failure", "filters_tool_output", "started")

    def __init__(self, cancel: CancelToken) -> None:
        self._cancel = cancel
        self.started: list[_Started] = []
        self._chains: Mapping[str, list[_Started]] = _NO_CHAINS
        """Each hook point's chain (built by :meth:`start`; a run without extensions
        shares the empty one)."""
        self.failure: Failure | None = None
        """The first failure of a required extension (the run fails on it, once)."""
        self.filters_tool_output = False

    @classmethod
    def start(
        cls,
        cancel: CancelToken,
        run: RunContext,
        *,
        inherited: Sequence[Extension] = (),
        own: Sequence[Extension] = (),
        leading: Sequence[Extension] = (),
        trailing: Sequence[Extension] = (),
    ) -> ActiveExtensions:
        """Call every extension's ``start_run`` (inherited ones first), then order them:
        ``leading`` knobs, the extensions, those that set ``runs_last``, ``trailing``
        knobs (a stable sort: each group keeps its order)."""
        active = cls(cancel)
        for extension, is_inherited, rank in [
            *((e, False, 0) for e in leading),
            *((e, True, 1) for e in inherited),
            *((e, False, 1) for e in own),
            *((e, False, 3) for e in trailing),
        ]:
            name = str(getattr(extension, "name", "") or type(extension).__name__)
            try:
                mode = _mode(extension)
                filters = bool(getattr(extension, "filters_tool_output", False))
                rechecks = bool(getattr(extension, "rechecks_modified_calls", False))
                if rank == 1 and getattr(extension, "runs_last", False):
                    rank = 2
                hooks = cast(object, extension.start_run(replace(run, inherited=is_inherited)))
                if not isinstance(hooks, RunHooks):
                    raise TypeError(f"start_run returned {type(hooks).__name__}, not RunHooks")
            except Exception as error:
                filtering = bool(getattr(extension, "filters_tool_output", False))
                # A filter that cannot start would let unfiltered output through: fatal.
                active._fail(
                    name,
                    ExtensionMode.REQUIRED if filtering else _safe_mode(extension),
                    "start_run",
                    error,
                )
                continue
            prefix = f"{name}: " if rank in (1, 2) else ""
            active.started.append(
                _Started(name, mode, filters, rechecks, hooks, is_inherited, rank, prefix)
            )
            active.filters_tool_output = active.filters_tool_output or filters
        active.started.sort(key=lambda started: started.rank)
        active._chains = {
            hook: [started for started in active.started if _overrides(started.hooks, hook)]
            for hook in HOOKS
        }
        return active

    def takes(self, hook: str) -> bool:
        """Whether any started extension has its own ``hook`` (one of :data:`HOOKS`)."""
        return bool(self._chains[hook])

    # --- failures --------------------------------------------------------------------------

    def _fail(self, name: str, mode: ExtensionMode, hook: str, error: BaseException) -> None:
        reason = f"{hook} raised {type(error).__name__}: {error}"
        if mode is ExtensionMode.REQUIRED:
            logger.error("required extension %s failed: %s", name, reason, exc_info=error)
            if self.failure is None:
                self.failure = Failure(name, reason)
        else:
            logger.warning("advisory extension %s failed: %s", name, reason, exc_info=error)

    async def _call(
        self, started: _Started, hook: str, work: Callable[[], Awaitable[T]], fallback: T
    ) -> T:
        """``await work()`` raced against the run's cancel; ``fallback`` when cancelled or
        when it raised (the failure recorded per the extension's mode)."""
        try:
            answer = await unless_cancelled(self._cancel, work)
        except Exception as error:
            self._fail(started.name, started.mode, hook, error)
            return fallback
        return fallback if answer is None else answer

    # --- the hooks, in the order a run meets them -----------------------------------------

    async def tools(self) -> list[AgentTool]:
        """The run's own extensions' tools (an inherited extension offers none here)."""
        offered: list[AgentTool] = []
        for started in self._chains["tools"]:
            if started.inherited:
                continue

            async def ask(hooks: RunHooks = started.hooks) -> Sequence[AgentTool]:
                return as_tools(await hooks.tools(), where="tools()")

            offered.extend(await self._call(started, "tools", ask, ()))
        return offered

    async def on_input(self, text: str) -> Reject | list[str]:
        """The first rejection, else every warning, in order."""
        warnings: list[str] = []
        for started in self._chains["on_input"]:

            async def ask(hooks: RunHooks = started.hooks) -> FilterResult:
                return _checked(await hooks.on_input(text), "on_input", Pass | Warn | Reject)

            verdict = await self._call(started, "on_input", ask, Pass())
            if isinstance(verdict, Reject):
                return verdict
            if isinstance(verdict, Warn):
                warnings.append(verdict.message)
        return warnings

    async def before_model(self, turn: TurnContext) -> tuple[list[str], Halt | None]:
        """Every extension's notes, in order, and the first stop or failure."""
        notes: list[str] = []
        for started in self._chains["before_model"]:

            async def ask(hooks: RunHooks = started.hooks) -> ModelVerdict:
                verdict = await hooks.before_model(turn)
                return _checked(verdict, "before_model", Proceed | StopRun | FailRun)

            verdict = await self._call(started, "before_model", ask, Proceed())
            if isinstance(verdict, StopRun):
                return notes, Halt(started.name, verdict.reason, False, verdict.cause)
            if isinstance(verdict, FailRun):
                return notes, Halt(started.name, verdict.reason, failed=True)
            notes.extend(verdict.notes)
        return notes, None

    async def before_tool(
        self, request: ToolCallRequest, *, answered: bool = False
    ) -> Allow | Deny | Modify | Held:
        """The chain's decision. A denial or a deferral ends it (``answered``: the caller
        already decided the call on a resume, so a deferral counts as approval). When an
        extension rewrote the call, the extensions before the last rewriter that ask for
        it judge the final call again (a rewrite then is a denial: the chain must settle)."""
        chain = self._chains["before_tool"]
        current = request
        last_modifier: int | None = None
        for index, started in enumerate(chain):
            decision = await self._judge(started, current, "before_tool")
            if isinstance(decision, Deny):
                return Deny(f"{started.prefix}{decision.reason}")
            if isinstance(decision, Modify):
                current = replace(current, arguments=decision.arguments)
                last_modifier = index
            elif isinstance(decision, Defer) and not answered:
                return Held(f"{started.prefix}{decision.reason}", current.arguments)
        if last_modifier is None:
            return Allow()
        for started in chain[:last_modifier]:
            if not started.rechecks:
                continue
            decision = await self._judge(started, current, "before_tool (recheck)")
            if isinstance(decision, Deny):
                return Deny(f"{started.prefix}{decision.reason}")
            if isinstance(decision, Modify):
                return Deny(f"{started.prefix}rewrote the call again on its recheck")
            if isinstance(decision, Defer) and not answered:
                return Held(f"{started.prefix}{decision.reason}", current.arguments)
        return Modify(current.arguments)

    async def _judge(self, started: _Started, request: ToolCallRequest, hook: str) -> ToolDecision:
        async def ask() -> ToolDecision:
            decision = await started.hooks.before_tool(request)
            return _checked(decision, "before_tool", Allow | Deny | Modify | Defer)

        denied = Deny("the run was cancelled")
        try:
            answer = await unless_cancelled(self._cancel, ask)
        except Exception as error:
            self._fail(started.name, started.mode, hook, error)
            if started.mode is ExtensionMode.REQUIRED:
                return Deny(f"it failed: {type(error).__name__}: {error}")
            return Allow()
        return denied if answer is None else answer

    async def after_tool(self, request: ToolCallRequest, output: ToolOutput) -> None:
        """Let each extension inspect or rewrite ``output``, in order."""
        for started in self._chains["after_tool"]:

            async def ask(hooks: RunHooks = started.hooks) -> bool:
                await hooks.after_tool(request, output)
                return True

            try:
                done = await unless_cancelled(self._cancel, ask)
            except Exception as error:
                self._fail(started.name, started.mode, "after_tool", error)
                if started.filters or started.mode is ExtensionMode.REQUIRED:
                    output.result = _withheld(f"{started.name} failed to check it")
                    output.is_error = True
                continue
            if done is None:  # cancelled before it could look: nothing unchecked goes out
                output.result = _withheld()
                output.is_error = True
                return

    async def on_stop(
        self, reply: AssistantMessage, turn: TurnContext
    ) -> list[tuple[_Started, ContinueRun]]:
        """The extensions that want the run to go on, with their messages."""
        wanted: list[tuple[_Started, ContinueRun]] = []
        for started in self._chains["on_stop"]:

            async def ask(hooks: RunHooks = started.hooks) -> ContinueRun | None:
                verdict = await hooks.on_stop(reply, turn)
                return None if verdict is None else _checked(verdict, "on_stop", ContinueRun)

            verdict: ContinueRun | None = await self._call(started, "on_stop", ask, None)
            if isinstance(verdict, ContinueRun):
                wanted.append((started, verdict))
        return wanted

    def on_event(self, event: AgentEvent) -> None:
        """Tell every observing extension; one that raises observes no more this run."""
        for started in self._chains["on_event"]:
            if not started.observing:
                continue
            try:
                started.hooks.on_event(event)
            except Exception as error:
                started.observing = False
                self._fail(started.name, started.mode, "on_event", error)

    async def finish(self, outcome: RunOutcome) -> None:
        """Every extension's ``finish``, each bounded by :data:`FINISH_TIMEOUT`; runs even
        when the run was cancelled (shielded)."""
        for started in self._chains["finish"]:
            with anyio.CancelScope(shield=True), anyio.move_on_after(FINISH_TIMEOUT) as bound:
                try:
                    await started.hooks.finish(outcome)
                except Exception as error:
                    self._fail(started.name, started.mode, "finish", error)
            if bound.cancelled_caught:
                logger.warning(
                    "extension %s: finish took over %.0fs and was cut short",
                    started.name,
                    FINISH_TIMEOUT,
                )


def _checked(answer: T, hook: str, expected: Any) -> T:
    """``answer`` if it is one of the hook's verdicts; a wrong one is the extension's
    failure (raised here, inside the contained call)."""
    if not isinstance(answer, expected):
        raise TypeError(f"{hook} returned {type(answer).__name__}, not a verdict it may give")
    return answer


def _safe_mode(extension: Extension) -> ExtensionMode:
    try:
        return _mode(extension)
    except Exception:  # an unreadable mode: fail safe
        return ExtensionMode.REQUIRED


def _withheld(why: str = "") -> ToolResult:
    text = f"Tool output withheld: {why}." if why else WITHHELD
    return ToolResult.from_text(text)
