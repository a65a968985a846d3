"""The agent loop: stream a reply, run its tool calls, append the results, repeat until done.

``agent_loop`` and ``agent_loop_continue`` are free functions; :class:`~yoagent.core.Agent`
is an optional stateful wrapper around them. The driver owns the order of a run; the
model call, the tool runner and compaction are its collaborators, sharing one
:class:`RunState`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

import anyio
import anyio.lowlevel

from yoagent.core._cancel import CancelToken
from yoagent.core._hooks.active import ActiveExtensions
from yoagent.core._hooks.basic import ApprovalDecision, TurnContext
from yoagent.core._hooks.extension import Extension, ExtensionMode, RunContext
from yoagent.core._hooks.knobs import knob_extensions
from yoagent.core._logging import logger
from yoagent.core._provider.pricing import cost_of, resolve_cost
from yoagent.core._tools.contract import AgentTool
from yoagent.core._tools.tool_source import SourcedTools
from yoagent.core._types.approval import PendingApproval
from yoagent.core._types.errors import ErrorKind
from yoagent.core._types.events import (
    AgentEnd,
    AgentStart,
    InputRejected,
    MessageStart,
    RunPaused,
)
from yoagent.core._types.markers import (
    CANCELLED_MARKER,
    EXTENSION_FAILED_PREFIX,
    EXTENSION_MESSAGE_PREFIX,
)
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
    context_messages,
    last_assistant,
)
from yoagent.core._types.outcome import RunEnd, RunOutcome, StopCause
from yoagent.core._types.stats import SessionStats

from .compactor import Compactor
from .ending import Ending
from .input import judge_input
from .model_call import call_model
from .repeats import RepeatGuard
from .resume import Decisions, check_decisions
from .settings import AgentContext, AgentLoopConfig
from .state import EventSink, RunState, ignore_event
from .task_groups import ungrouped
from .telemetry import SPAN_AGENT_LOOP, describe_run, describe_spend, mark_error, start_span
from .tool_call import ToolCalls
from .tool_runner import ToolRunner

NOT_RUN_REPEATED = "Not run: the same tool calls were repeated {count} times in a row."

A = TypeVar("A")
R = TypeVar("R")
_ENDS_RUN = (StopReason.ERROR, StopReason.ABORTED, StopReason.REFUSAL)


async def agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: EventSink | None = None,
    *,
    cancel: CancelToken | None = None,
    stats: SessionStats | None = None,
) -> list[AgentMessage]:
    """Run the agent on new ``prompts``: append them to ``context.messages``, then loop.

    Returns the messages this run added (the history is appended to in place, so a
    cancelled or failed run keeps what it did). ``emit`` receives every event (the last,
    ``AgentEnd``, says how the run ended); ``cancel`` stops the run; ``stats`` accumulates
    what it spent.
    """
    return await LoopRun.prepare(prompts, context, config, emit, cancel, stats).run()


async def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: EventSink | None = None,
    *,
    cancel: CancelToken | None = None,
    stats: SessionStats | None = None,
) -> list[AgentMessage]:
    """Resume from the history as it is; it must end on a user message or tool results."""
    return await LoopRun.prepare(None, context, config, emit, cancel, stats).run()


async def agent_loop_resume(
    decisions: Decisions,
    context: AgentContext,
    config: AgentLoopConfig,
    emit: EventSink | None = None,
    *,
    cancel: CancelToken | None = None,
    stats: SessionStats | None = None,
) -> list[AgentMessage]:
    """Resume a paused run from its history (``context.messages``, as the pause left it).

    ``decisions`` answer the held calls by id (``Allow()``, ``Deny(reason)``,
    ``Modify(arguments)``), or one ``Allow`` / ``Deny`` answers them all. The allowed calls
    run through the tool middleware and extensions as usual, the caller's decision
    answering any deferral; their results replace the placeholders, then the loop goes on.
    Returns the messages this run added (the results first). Raises ``ResumeError``,
    before anything runs, when nothing is held or the decisions do not fit.
    """
    run = LoopRun.prepare(None, context, config, emit, cancel, stats, decisions=decisions)
    return await run.run()


class LoopRun:
    """One run, from ``AgentStart`` to ``AgentEnd``: new prompts, a continue, or a resume.

    Build it with :meth:`prepare`, await :meth:`run` once; :attr:`outcome` then says how
    it ended (also when ``run`` raised).
    """

    @classmethod
    def prepare(
        cls,
        prompts: Sequence[AgentMessage] | None,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: EventSink | None = None,
        cancel: CancelToken | None = None,
        stats: SessionStats | None = None,
        *,
        decisions: Decisions | None = None,
    ) -> LoopRun:
        """A run on new ``prompts``; with ``None``, one that continues the history (which
        must end on a user message or tool results), or resumes it with ``decisions``
        (checked now: ``ResumeError``)."""
        answers: Mapping[str, ApprovalDecision] | None = None
        if decisions is not None:
            answers = check_decisions(context.messages, decisions)
        elif prompts is None:
            sendable = context_messages(context.messages)
            if not sendable or isinstance(sendable[-1], AssistantMessage):
                raise ValueError(
                    "nothing to continue from: the history must end with a user message "
                    "or tool results"
                )
        run = cls(context, config, emit, cancel, stats)
        run._prompts = list(prompts) if prompts is not None else None
        run._answers = answers
        return run

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: EventSink | None,
        cancel: CancelToken | None,
        stats: SessionStats | None,
    ) -> None:
        self.state = state = RunState(
            context, config, emit or ignore_event, cancel or CancelToken(), stats or SessionStats()
        )
        self.calls = ToolCalls(state)
        self.tools = ToolRunner(state, self.calls)
        self.compactor = Compactor(state)
        self.sourced = SourcedTools(state.settings.tool_sources)
        self.extension_tools: list[AgentTool] = []
        self.repeats = RepeatGuard(state.settings.max_repeated_tool_calls)
        self._stop_continues = 0
        self._failed: str | None = None
        """The extension that failed the run, once one did."""
        self.ending = Ending(state)
        self.outcome: RunOutcome | None = None
        """How the run ended, once it has (as ``AgentEnd`` carries it)."""
        self._ended = False
        self._prompts: list[AgentMessage] | None = None
        """The new prompts (``None``: the run continues or resumes the history)."""
        self._answers: Mapping[str, ApprovalDecision] | None = None
        """The caller's decisions, when this run resumes a paused one: first the held
        calls, per these, then the turns."""

    # --- the run ---------------------------------------------------------------------------

    async def run(self) -> list[AgentMessage]:
        """Run it; returns the messages it added."""
        try:
            with ungrouped():
                return await self._run(self._prompts)
        except BaseException as error:
            # An outer cancellation, a KeyboardInterrupt, a bug: whatever ends the run early
            # still leaves a history a model accepts, and every opened event closed.
            self._close_abnormally()
            if isinstance(error, Exception):
                reason = f"{type(error).__name__}: {error}"
                self.ending.record(RunOutcome(end=RunEnd.FAILED, reason=reason))
            else:
                self.ending.record(RunOutcome(end=RunEnd.CANCELLED))
            if isinstance(error, Exception | anyio.get_cancelled_exc_class()):
                await self._end()
            else:
                self._end_now()
            raise

    def _start_extensions(self, prompts: list[AgentMessage] | None) -> None:
        state = self.state
        settings = state.settings
        delegation = state.config.delegation
        inherited = delegation.inherited if delegation is not None else ()
        own = (*settings.tree_extensions, *settings.extensions)
        leading: tuple[Extension, ...] = ()
        trailing: tuple[Extension, ...] = ()
        if settings.tool_middleware or settings.input_filters or settings.turn_hooks:
            leading, trailing = knob_extensions(
                settings.tool_middleware, settings.input_filters, settings.turn_hooks
            )
        if not (inherited or own or leading or trailing):
            return
        texts = tuple(m.text for m in prompts or () if isinstance(m, UserMessage) and m.text)
        context = RunContext(
            run_id=state.run_id,
            model=state.config.model,
            cancel=state.cancel,
            spend=state.spend,
            prompts=texts,
            label=settings.run_label,
            depth=state.delegation_depth,
            parent_run_id=delegation.parent_run_id if delegation is not None else None,
            delegated_by=delegation.call_id if delegation is not None else None,
        )
        state.observe(
            ActiveExtensions.start(
                state.cancel,
                context,
                inherited=inherited,
                own=own,
                leading=leading,
                trailing=trailing,
            )
        )

    async def _run(self, prompts: list[AgentMessage] | None) -> list[AgentMessage]:
        state = self.state
        with start_span(SPAN_AGENT_LOOP, state.tracing) as span:
            describe_run(span, state.config.model, state.settings.run_label)
            self._start_extensions(prompts)
            state.emit(AgentStart())
            await self._offer_tools(first=True)
            if prompts is not None:
                state.remember_prompts(prompts)
                accepted = await self._filter_input(prompts)
                if accepted is None:
                    await self._end()
                    return []
                for message in accepted:
                    state.append(message)
            async with anyio.create_task_group() as background:
                self.compactor.run_in(background)
                self.tools.run_in(background)
                limit = state.tracker.limits.max_duration
                if limit is not None:
                    background.start_soon(self._deadline, limit)
                if self._answers is None or await self._resume_held(self._answers):
                    await self._turns()
                if state.extensions.failure is not None:
                    self._fail_run(
                        state.extensions.failure.extension, state.extensions.failure.reason
                    )
                if not state.cancel.cancelled:
                    await self.compactor.settle()
                background.cancel_scope.cancel()
            self.compactor.run_in(None)
            self.tools.run_in(None)
            span.set_attribute("yoagent.turns", state.turn)
            describe_spend(span, state.stats)
            last = state.new_messages[-1] if state.new_messages else None
            if isinstance(last, AssistantMessage) and last.stop_reason is StopReason.ERROR:
                mark_error(span, last.error_message or "error")
        await self._end()
        return state.new_messages

    async def _end(self) -> None:
        """``finish`` every extension, close the spend ledger, send ``AgentEnd`` (once)."""
        state = self.state
        if state.extensions.takes("finish") and not self._ended:
            finished = replace(self.ending.final(), messages=tuple(state.new_messages))
            await state.extensions.finish(finished)
        self._end_now()

    def _end_now(self) -> None:
        if self._ended:
            return
        self._ended = True
        state = self.state
        state.spend.close()
        self.outcome = self.ending.final()
        state.emit(
            AgentEnd(messages=list(state.new_messages), stats=state.stats, outcome=self.outcome)
        )

    async def _deadline(self, seconds: float) -> None:
        """The wall-time limit also ends a turn in progress (a long stream or tool)."""
        await anyio.sleep(max(seconds - self.state.tracker.elapsed(), 0.0))
        self.state.timed_out = True
        self.state.cancel.cancel()

    def _close_abnormally(self) -> None:
        """Close a run that an exception is ending: answer open tool calls, close the turn,
        mark the stop. Synchronous, so it is safe inside a cancellation."""
        state = self.state
        state.cancel.cancel()
        state.quiet()  # the consumer may be what failed
        messages = state.context.messages
        last = last_assistant(messages)
        if last is not None and last.stop_reason not in _ENDS_RUN:
            answered = {
                m.tool_call_id
                for m in messages[messages.index(last) + 1 :]
                if isinstance(m, ToolResultMessage)
            }
            unanswered = [call for call in last.tool_calls if call.id not in answered]
            for result in self.calls.abandon(unanswered):
                state.append(result)
        if state.turn_open:
            state.end_turn(state.turn_reply)
        replied = any(isinstance(m, AssistantMessage) for m in state.new_messages)
        if state.produced_reply or replied:
            state.append_marker(CANCELLED_MARKER)

    def _fail_run(self, extension: str, reason: str) -> None:
        """End the run as failed by a required extension (once), inside a turn of its own."""
        if self._failed is not None:
            return
        self._failed = extension
        state = self.state
        error = f"{EXTENSION_FAILED_PREFIX}{extension}] {reason}"
        message = AssistantMessage(
            stop_reason=StopReason.ERROR,
            model=state.config.model.id,
            provider=state.config.model.provider,
            error_message=error,
            error_kind=ErrorKind.OTHER,
        )
        self.ending.record(
            RunOutcome(
                end=RunEnd.FAILED,
                reason=error,
                extension=extension,
                error_kind=ErrorKind.OTHER,
                stop_reason=StopReason.ERROR,
            )
        )
        if not state.turn_open:
            state.open_turn()
        state.emit(MessageStart(message=message))
        state.append(message)
        state.end_turn(message)

    # --- tools -----------------------------------------------------------------------------

    async def _offer_tools(self, *, first: bool) -> None:
        """The run's tools: the agent's own, then its sources', then its extensions'."""
        state = self.state
        if first and state.extensions.takes("tools"):
            self.extension_tools = await state.extensions.tools()
        elif not first and not (
            state.settings.tool_sources and await self.sourced.refresh(state.cancel)
        ):
            return
        tools: list[AgentTool] = list(state.context.tools)
        if state.settings.tool_sources:
            if first:
                with state.cancel.scope():
                    await self.sourced.collect()
            tools = self.sourced.merge(tools)
        if self.extension_tools:
            taken = {tool.name for tool in tools}
            for tool in self.extension_tools:
                if tool.name in taken:
                    logger.warning("extension tool %r is dropped: a tool has that name", tool.name)
                    continue
                taken.add(tool.name)
                tools.append(tool)
        self.calls.set_tools(tools)
        self.compactor.tools_changed(self.calls.definitions)

    # --- input -----------------------------------------------------------------------------

    async def _filter_input(self, prompts: list[AgentMessage]) -> list[AgentMessage] | None:
        """The prompts the run may take (with warnings added), or ``None`` when refused."""
        verdict = await judge_input(self.state, prompts)
        if isinstance(verdict, str):
            self.ending.record(RunOutcome(end=RunEnd.REJECTED, reason=verdict))
            self.state.emit(InputRejected(reason=verdict))
            return None
        return verdict

    # --- turns -----------------------------------------------------------------------------

    async def _turns(self) -> None:
        state = self.state
        tracker = state.tracker
        settings = state.settings
        while True:
            # Every turn yields to the event loop at least once, so background work and
            # other tasks run even when the provider and tools never wait (a mock, cached
            # answers); a turn that ran parallel tools has yielded already.
            if self.tools.yielded:
                await anyio.lowlevel.checkpoint_if_cancelled()
            else:
                await anyio.lowlevel.checkpoint()
            self.tools.yielded = False
            failure = state.extensions.failure
            if failure is not None:
                self._fail_run(failure.extension, failure.reason)
                return
            if state.cancel.cancelled:
                self.ending.by_token(mark=state.produced_reply)
                return
            limit = tracker.exceeded()
            if limit is not None:
                self.ending.stop(*limit)
                return
            if settings.turn_delay and state.turn > 0:
                with state.cancel.scope():
                    await anyio.sleep(settings.turn_delay)
                if state.cancel.cancelled:
                    continue  # the check at the top ends the run
            if state.turn > 0:
                await self._offer_tools(first=False)
            self.compactor.compact()
            # The turn opens before its before_model chain, so a stop there (a budget) ends
            # a turn of its own; a cancel meanwhile still lets the model call end it
            # ABORTED, sending nothing.
            state.open_turn()
            tracker.turns += 1
            notes: list[str] = []
            extensions = state.extensions
            if extensions.takes("before_model"):
                notes, halt = await extensions.before_model(self._turn_context())
                if halt is not None:
                    if halt.failed:
                        self._fail_run(halt.extension, halt.reason)
                    else:
                        self.ending.stop(halt.cause, halt.reason, extension=halt.extension)
                        state.end_turn(None)
                    return
                if extensions.failure is not None:
                    self._fail_run(extensions.failure.extension, extensions.failure.reason)
                    return
            reply, sent_count = await call_model(
                state, notes, self.calls.definitions, self.compactor
            )
            state.append(reply)
            # The figure belongs to the history the answered attempt was built from.
            self.compactor.record_usage(reply.usage, sent_count)
            state.produced_reply = True
            state.stats.record_turn(
                reply.usage, cost_of(reply.usage, resolve_cost(state.config.model))
            )
            tracker.record(reply.usage)
            if reply.stop_reason in _ENDS_RUN:
                state.end_turn(reply)
                if reply.stop_reason is StopReason.ABORTED:
                    self.ending.by_token(mark=True)
                elif reply.stop_reason is StopReason.ERROR:
                    self.ending.record(
                        RunOutcome(
                            end=RunEnd.FAILED,
                            reason=reply.error_message,
                            error_kind=reply.error_kind or ErrorKind.OTHER,
                        )
                    )
                return
            calls = reply.tool_calls
            if calls:
                repeated = self.repeats.seen(calls)
                if repeated is not None:
                    results = self.calls.refuse(calls, NOT_RUN_REPEATED.format(count=repeated))
                    state.end_turn(reply, results)
                    stop, text = self.repeats.verdict(calls, repeated)
                    if stop:
                        self.ending.stop(StopCause.LOOP, text)
                        return
                    state.append_marker(text)
                    continue
                results, steering = await self.tools.run_calls(calls)
                state.end_turn(reply, results)
                for message in steering:
                    state.append(message)
                if self.calls.deferred and self._pause():
                    return
                continue
            self.repeats.reset()  # a turn without calls breaks any repetition
            state.end_turn(reply)
            queued = state.take_steering() or state.take_follow_ups()
            if queued:
                for message in queued:
                    state.append(message)
                continue
            if reply.stop_reason is not StopReason.STOP or not state.extensions.takes("on_stop"):
                return
            if not await self._continue_on_stop(reply):
                return

    # --- pause and resume ------------------------------------------------------------------

    def _pause(self) -> bool:
        """End the run waiting for approval of the calls just held; False when it cannot
        (a cancel or a failed extension ends it otherwise; the calls stay held)."""
        state = self.state
        if state.cancel.cancelled or state.extensions.failure is not None:
            return False
        pending = PendingApproval.from_messages(state.context.messages)
        if pending is None:  # pragma: no cover - the calls were just held
            return False
        self.ending.record(RunOutcome(end=RunEnd.PAUSED, pending=pending))
        state.emit(RunPaused(pending=pending))
        return True

    async def _resume_held(self, answers: Mapping[str, ApprovalDecision]) -> bool:
        """Run the held calls of the paused reply per ``answers``, as a turn of their own
        (no model call); True when the run goes on to its turns."""
        state = self.state
        reply = last_assistant(state.context.messages)
        pending = PendingApproval.from_messages(state.context.messages)
        assert reply is not None, "checked before the run began"
        assert pending is not None, "checked before the run began"
        held = set(pending.call_ids)
        calls = [call for call in reply.tool_calls if call.id in held]
        if self.compactor.tracker is not None:
            self.compactor.tracker.reset()  # results replace placeholders: re-estimate
        state.open_turn()
        state.turn_reply = reply
        state.produced_reply = True  # a cancel from here on marks the history, as mid-turn
        results, steering = await self.tools.run_calls(calls, answers=answers)
        state.end_turn(reply, results)
        for message in steering:
            state.append(message)
        return not (self.calls.deferred and self._pause())

    def _turn_context(self, ahead: int = 0) -> TurnContext:
        state = self.state
        return TurnContext(
            turn=state.turn + ahead,
            messages=tuple(state.context.messages),
            run_prompts=tuple(state.run_prompts),
            tools=tuple(self.calls.definitions),
        )

    async def _continue_on_stop(self, reply: AssistantMessage) -> bool:
        """Ask the extensions' ``on_stop``; True when the run goes on (their messages sent)."""
        state = self.state
        extensions = state.extensions
        if extensions.failure is not None:
            return False  # the caller's end of run acts on it
        wanted = await extensions.on_stop(reply, self._turn_context())
        if not wanted or state.cancel.cancelled:
            return False
        cap = state.settings.max_stop_continues
        if self._stop_continues >= cap:
            for started, _ in wanted:
                if started.mode is ExtensionMode.REQUIRED:
                    self._fail_run(
                        started.name, f"kept the run going past max_stop_continues ({cap})"
                    )
                    return False
            logger.warning(
                "extensions asked to continue past max_stop_continues (%d); the run stops", cap
            )
            return False
        self._stop_continues += 1
        lines = [
            f"{EXTENSION_MESSAGE_PREFIX}{started.name}] {ask.message}" for started, ask in wanted
        ]
        state.append_marker("\n".join(lines))
        return True
