"""The agent loop: stream a reply, run its tool calls, append the results, repeat until done.

``agent_loop`` and ``agent_loop_continue`` are free functions; :class:`~yoagent.core.Agent`
is an optional stateful wrapper around them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
from opentelemetry.trace import Status, StatusCode

from yoagent.core._cancel import CancelToken, unless_cancelled
from yoagent.core._context.compaction import (
    ContextTracker,
    compact_after_overflow,
    compact_messages,
    estimate_text,
)
from yoagent.core._hooks.basic import Pass, Reject, TurnContext, Warn, resolve
from yoagent.core._logging import logger
from yoagent.core._provider.pricing import cost_of, resolve_cost
from yoagent.core._tools.tool_source import SourcedTools
from yoagent.core._types.content import TextContent, ToolCall
from yoagent.core._types.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    InputRejected,
    MessageEnd,
    MessageStart,
    TurnEnd,
    TurnStart,
)
from yoagent.core._types.limits import ExecutionLimits, ExecutionTracker
from yoagent.core._types.markers import (
    AGENT_STOPPED_PREFIX,
    CANCELLED_MARKER,
    LOOP_ABORT_PREFIX,
    is_loop_injected,
)
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    Message,
    StopReason,
    ToolResultMessage,
    UserMessage,
    context_messages,
    last_assistant,
)
from yoagent.core._types.stats import SessionStats

from .model_call import Attempt, stream_reply
from .settings import AgentContext, AgentLoopConfig
from .task_groups import ungrouped
from .telemetry import SPAN_AGENT_LOOP, start_span, tracing_enabled
from .tool_runner import ToolRunner

NOT_RUN_REPEATED = "Not run: the same tool calls were repeated {count} times in a row."

EventSink = Callable[[AgentEvent], None]
A = TypeVar("A")
R = TypeVar("R")
_ENDS_RUN = (StopReason.ERROR, StopReason.ABORTED, StopReason.REFUSAL)


def _ignore(_: AgentEvent) -> None:
    return None


def _guarded(emit: EventSink) -> EventSink:
    """``emit``, switched off for the rest of the run the first time it raises.

    A consumer's bug must not end the run, nor be blamed on the provider whose delta it
    was reading; it is logged once.
    """
    if emit is _ignore:
        return emit
    broken = False

    def guarded(event: AgentEvent) -> None:
        nonlocal broken
        if broken:
            return
        try:
            emit(event)
        except Exception:
            broken = True
            logger.exception("the event consumer raised; it gets no more events this run")

    return guarded


def _quiet(emit: EventSink) -> EventSink:
    """``emit`` that never raises (used while closing a run an exception is ending)."""

    def quiet(event: AgentEvent) -> None:
        try:
            emit(event)
        except BaseException:  # the run is already ending with an exception of its own
            logger.debug("an event could not be delivered while closing the run", exc_info=True)

    return quiet


async def _unless_cancelled_or(
    cancel: CancelToken, hook: Callable[[A], R | Awaitable[R]], argument: A, fallback: R
) -> R:
    """A sync or async hook's answer, or ``fallback`` when the run is cancelled meanwhile
    (a cancel is not a verdict: the run then ends at its next check)."""

    async def ask() -> R:
        return await resolve(hook(argument))

    answer = await unless_cancelled(cancel, ask)
    return fallback if answer is None else answer


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
    cancelled or failed run keeps what it did). ``emit`` receives every event; ``cancel``
    stops the run; ``stats`` accumulates what it spent.
    """
    run = RunState(
        context, config, emit or _ignore, cancel or CancelToken(), stats or SessionStats()
    )
    return await run.run(list(prompts))


async def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: EventSink | None = None,
    *,
    cancel: CancelToken | None = None,
    stats: SessionStats | None = None,
) -> list[AgentMessage]:
    """Resume from the history as it is; it must end on a user message or tool results."""
    sendable = context_messages(context.messages)
    if not sendable or isinstance(sendable[-1], AssistantMessage):
        raise ValueError(
            "nothing to continue from: the history must end with a user message or tool results"
        )
    run = RunState(
        context, config, emit or _ignore, cancel or CancelToken(), stats or SessionStats()
    )
    return await run.run(None)


class RunState:
    """The state of one run. Everything the loop does to the history goes through here."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: EventSink,
        cancel: CancelToken,
        stats: SessionStats,
    ) -> None:
        self.context = context
        self.config = config
        self.emit = _guarded(emit)
        self.cancel = cancel
        self.stats = stats
        self.new_messages: list[AgentMessage] = []
        self.sendable: list[Message] = context_messages(context.messages)
        self.tracker = ExecutionTracker(
            config.limits
            or ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None)
        )
        self.turn = 0
        self.turn_open = False
        self.produced_reply = False
        self.timed_out = False
        self.open_attempt: Attempt | None = None
        """The model call in flight, if any (closed as ABORTED if the run dies under it)."""
        self._repeat_signature: tuple[tuple[str, str], ...] | None = None
        self._repeat_count = 0
        self.tracing = tracing_enabled()
        self.sent_count = 0
        self.background: anyio.abc.TaskGroup | None = None
        """Where background work of this run (compaction summaries) runs; cancelled at its end."""
        """How many history messages the latest model request was built from."""
        self.tools = ToolRunner(self)
        self.sourced = SourcedTools(config.tool_sources)
        self.context_tracker = self._tracker()

    def _tracker(self) -> ContextTracker | None:
        settings = self.config.context
        if settings is None:
            return None
        tracker = self.config.context_tracker or ContextTracker(settings)
        tracker.config = settings
        return tracker

    def _count_fixed_tokens(self, tracker: ContextTracker) -> None:
        """What every request sends besides the history (system prompt, tool schemas)
        counts against the budget; re-counted when the offered tools change."""
        if not self.tools.fixed_tokens_changed:
            return
        self.tools.fixed_tokens_changed = False
        fixed = self.context.system_prompt + "".join(
            json.dumps(d.parameters) + d.name + d.description for d in self.tools.definitions
        )
        tracker.config = replace(tracker.config, system_prompt_tokens=estimate_text(fixed))

    # --- history -------------------------------------------------------------------------

    def append(self, message: AgentMessage) -> None:
        """Add a message to the history and tell the caller."""
        self.context.messages.append(message)
        self.new_messages.append(message)
        self.sendable.extend(context_messages((message,)))
        if not isinstance(message, AssistantMessage):
            self.emit(MessageStart(message=message))
        self.emit(MessageEnd(message=message))

    def append_marker(self, text: str) -> None:
        self.append(UserMessage.from_text(text))

    def _stop_marker(self) -> str:
        """The marker for a run the token ended: a cancel, or the wall-time limit."""
        limit = self.tracker.limits.max_duration
        if self.timed_out and limit is not None:
            return f"{AGENT_STOPPED_PREFIX}time limit reached ({limit:.0f}s)]"
        return CANCELLED_MARKER

    def compact(self, *, overflowed: bool = False) -> bool:
        """Compact the history in place when the next request would not fit; True if it did.

        After the model reported an overflow (``overflowed``) the estimate was too low:
        compact to half of it, whatever the budget says.
        """
        tracker = self.context_tracker
        if tracker is None:
            return False
        self._count_fixed_tokens(tracker)
        messages = self.context.messages
        strategy = self.config.llm_compaction
        settings = tracker.calibrated_config()
        if not overflowed:
            estimate = tracker.estimate(messages)
            if strategy is not None and self.background is not None:
                span = strategy.wanted(messages, settings, estimate)
                if span is not None:
                    strategy.start(self.background, span, self.stats)
            if estimate <= settings.budget():
                return False
            counted = settings.tokens(messages)
            if estimate > counted > 0:
                # The provider's real figure says more than compaction's own estimate (a
                # dense script, images): cut to the same share of the budget it counts in.
                budget = int(settings.budget() * counted / estimate)
                settings = replace(settings, budget_tokens=budget)
        compact = compact_after_overflow if overflowed else compact_messages
        summarizer = strategy.summarizer if strategy is not None else None
        result = compact(messages, settings, injected=is_loop_injected, summarizer=summarizer)
        if not result.compacted:
            return False
        messages[:] = result.messages
        self.sendable = context_messages(messages)
        tracker.reset()
        self.stats.compactions += 1
        logger.info(
            "compacted the history (level %d): %d → %d estimated tokens, budget %d",
            result.level,
            result.tokens_before,
            result.tokens_after,
            result.budget,
        )
        return True

    # --- the run -------------------------------------------------------------------------

    async def run(self, prompts: list[AgentMessage] | None) -> list[AgentMessage]:
        try:
            with ungrouped():
                return await self._run(prompts)
        except BaseException:
            # An outer cancellation, a KeyboardInterrupt, a bug: whatever ends the run early
            # still leaves a history a model accepts, and every opened event closed.
            self._close_abnormally()
            raise

    async def _run(self, prompts: list[AgentMessage] | None) -> list[AgentMessage]:
        with start_span(SPAN_AGENT_LOOP, self.tracing) as span:
            span.set_attribute("gen_ai.request.model", self.config.model.id)
            span.set_attribute("yoagent.provider", self.config.model.provider)
            self.emit(AgentStart())
            if self.config.tool_sources:
                with self.cancel.scope():
                    await self.sourced.collect()
                self.tools.set_tools(self.sourced.merge(self.context.tools))
            if prompts is not None:
                accepted = await self._filter_input(prompts)
                if accepted is None:
                    self.emit(AgentEnd(messages=[], stats=self.stats))
                    return []
                for message in accepted:
                    self.append(message)
            async with anyio.create_task_group() as background:
                self.background = background
                limit = self.tracker.limits.max_duration
                if limit is not None:
                    background.start_soon(self._deadline, limit)
                await self._turns()
                background.cancel_scope.cancel()
            self.background = None
            span.set_attribute("yoagent.turns", self.turn)
            span.set_attribute("gen_ai.usage.input_tokens", self.stats.usage.input)
            span.set_attribute("gen_ai.usage.output_tokens", self.stats.usage.output)
            if self.stats.cost_usd is not None:
                span.set_attribute("yoagent.cost_usd", self.stats.cost_usd)
            last = self.new_messages[-1] if self.new_messages else None
            if isinstance(last, AssistantMessage) and last.stop_reason is StopReason.ERROR:
                span.set_status(Status(StatusCode.ERROR, last.error_message or "error"))
        self.emit(AgentEnd(messages=list(self.new_messages), stats=self.stats))
        return self.new_messages

    async def _deadline(self, seconds: float) -> None:
        """The wall-time limit also ends a turn in progress (a long stream or tool)."""
        await anyio.sleep(max(seconds - self.tracker.elapsed(), 0.0))
        self.timed_out = True
        self.cancel.cancel()

    def _close_abnormally(self) -> None:
        """Close a run that an exception is ending: answer open tool calls, close the turn,
        mark the stop, end the run. Synchronous, so it is safe inside a cancellation."""
        self.cancel.cancel()
        self.emit = _quiet(self.emit)  # the consumer may be what failed
        attempt = self.open_attempt
        if attempt is not None and attempt.started:
            self.append(attempt.partial(StopReason.ABORTED, "cancelled"))
        self.open_attempt = None
        last = last_assistant(self.context.messages)
        if last is not None and last.stop_reason not in _ENDS_RUN:
            answered = {
                m.tool_call_id
                for m in self.context.messages[self.context.messages.index(last) + 1 :]
                if isinstance(m, ToolResultMessage)
            }
            unanswered = [call for call in last.tool_calls if call.id not in answered]
            for result in self.tools.abandon(unanswered):
                self.append(result)
        if self.turn_open and last is not None:
            self.end_turn(last)
        if self.produced_reply:
            self.append_marker(CANCELLED_MARKER)
        self.emit(AgentEnd(messages=list(self.new_messages), stats=self.stats))

    def end_turn(
        self, message: AssistantMessage, results: list[ToolResultMessage] | None = None
    ) -> None:
        self.turn_open = False
        self.emit(TurnEnd(turn=self.turn, message=message, tool_results=results or []))

    async def _filter_input(self, prompts: list[AgentMessage]) -> list[AgentMessage] | None:
        filters = self.config.input_filters
        if not filters:
            return prompts
        text = "\n".join(m.text for m in prompts if isinstance(m, UserMessage))
        warnings: list[str] = []
        for check in filters:
            try:
                verdict = await _unless_cancelled_or(self.cancel, check, text, Pass())
            except Exception as error:  # a failing filter refuses: it could not vouch for the input
                logger.exception("input filter failed")
                verdict = Reject(f"input filter failed: {type(error).__name__}: {error}")
            if isinstance(verdict, Reject):
                self.emit(InputRejected(reason=verdict.reason))
                return None
            if isinstance(verdict, Warn):
                warnings.append(verdict.message)
        if not warnings:
            return prompts
        for index in range(len(prompts) - 1, -1, -1):
            message = prompts[index]
            if isinstance(message, UserMessage):
                notes = [TextContent(text=w) for w in warnings]
                prompts[index] = UserMessage(
                    content=[*message.content, *notes], timestamp=message.timestamp
                )
                break
        return prompts

    async def _turns(self) -> None:
        while True:
            # Every turn yields to the event loop at least once, so background work and
            # other tasks run even when the provider and tools never wait (a mock, cached
            # answers); a turn that ran parallel tools has yielded already.
            if self.tools.yielded:
                await anyio.lowlevel.checkpoint_if_cancelled()
            else:
                await anyio.lowlevel.checkpoint()
            self.tools.yielded = False
            if self.cancel.cancelled:
                if self.produced_reply or self.timed_out:
                    self.append_marker(self._stop_marker())
                return
            stop = self.tracker.exceeded()
            if stop is not None:
                self.append_marker(f"{AGENT_STOPPED_PREFIX}{stop}]")
                return
            if self.config.turn_delay and self.turn > 0:
                with self.cancel.scope():
                    await anyio.sleep(self.config.turn_delay)
                if self.cancel.cancelled:
                    continue  # the check at the top ends the run
            if (
                self.turn > 0
                and self.config.tool_sources
                and await self.sourced.refresh(self.cancel)
            ):
                self.tools.set_tools(self.sourced.merge(self.context.tools))
            self.turn += 1
            self.tracker.turns += 1
            self.emit(TurnStart(turn=self.turn))
            self.turn_open = True
            self.compact()
            notes = await self._turn_notes()
            reply = await stream_reply(self, notes)
            if self.context_tracker is not None:
                # The figure belongs to the history the answered attempt was built from.
                self.context_tracker.record_usage(reply.usage, self.sent_count)
            self.produced_reply = True
            self.stats.record_turn(
                reply.usage, cost_of(reply.usage, resolve_cost(self.config.model))
            )
            self.tracker.record(reply.usage)
            if reply.stop_reason in _ENDS_RUN:
                self.end_turn(reply)
                if reply.stop_reason is StopReason.ABORTED:
                    self.append_marker(self._stop_marker())
                return
            calls = reply.tool_calls
            if calls:
                if self._repeated(calls):
                    results = self.tools.refuse(
                        calls, NOT_RUN_REPEATED.format(count=self._repeat_count)
                    )
                    self.end_turn(reply, results)
                    names = ", ".join(sorted({call.name for call in calls}))
                    self.append_marker(
                        f"{LOOP_ABORT_PREFIX}: {names} called with the same arguments "
                        f"{self._repeat_count} turns in a row]"
                    )
                    return
                results, steering = await self.tools.run_calls(calls, self.config.tool_execution)
                self.end_turn(reply, results)
                for message in steering:
                    self.append(message)
                continue
            self._repeat_signature = None  # a turn without calls breaks any repetition
            self.end_turn(reply)
            queued = self.take_steering() or self._take_follow_ups()
            if not queued:
                return
            for message in queued:
                self.append(message)

    async def _turn_notes(self) -> list[str]:
        notes: list[str] = []
        if not self.config.turn_hooks:
            return notes
        context = TurnContext(turn=self.turn, messages=tuple(self.context.messages))
        for hook in self.config.turn_hooks:
            try:
                notes.extend(await _unless_cancelled_or(self.cancel, hook, context, ()))
            except Exception:  # a broken hook must not end the run; it adds nothing
                logger.exception("turn hook failed")
        return notes

    def take_steering(self) -> list[AgentMessage]:
        getter = self.config.get_steering_messages
        return list(getter()) if getter is not None else []

    def _take_follow_ups(self) -> list[AgentMessage]:
        getter = self.config.get_follow_up_messages
        return list(getter()) if getter is not None else []

    def _repeated(self, calls: list[ToolCall]) -> bool:
        limit = self.config.max_repeated_tool_calls
        if limit is None:
            return False
        signature = tuple(
            sorted(
                (call.name, json.dumps(call.arguments, sort_keys=True, default=str))
                for call in calls
            )
        )
        if signature == self._repeat_signature:
            self._repeat_count += 1
        else:
            self._repeat_signature = signature
            self._repeat_count = 1
        return self._repeat_count >= limit
