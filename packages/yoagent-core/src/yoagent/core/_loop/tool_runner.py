"""Running a reply's tool calls. Every call goes through one choke point, ``_execute``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import anyio
from anyio.abc import TaskGroup

from yoagent.core._hooks.basic import Allow, ApprovalDecision, Deny, Modify
from yoagent.core._hooks.extension import ToolOutput
from yoagent.core._logging import logger
from yoagent.core._provider.protocol import ToolDefinition
from yoagent.core._shared_state.store import ToolOutputSink
from yoagent.core._tools.contract import AgentTool, ToolContext, ToolError, ToolResult
from yoagent.core._types.approval import PendingCall, held_result
from yoagent.core._types.content import ImageContent, TextContent, ToolCall, UserContent
from yoagent.core._types.events import (
    ProgressMessage,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from yoagent.core._types.messages import AgentMessage, ToolResultMessage
from yoagent.core._types.stats import SessionStats

from .approval import ApprovalChain
from .eager import Suspended, first_step, resume
from .settings import ToolExecution
from .state import RunState
from .telemetry import SPAN_TOOL, start_span

CANCELLED_RESULT = "Tool execution cancelled."
SKIPPED_FOR_STEERING = "Skipped: the user sent a new message before this tool ran."
NOT_RUN_EXTENSION_FAILED = "Not run: a required extension failed the run."
QUEUED_BEHIND = "queued behind {ids}, held for approval: the calls of this reply run in order"
SUB_AGENT_STATS_KEY = "sub_agent_stats"
"""Where a call that delegated runs gets their spend in its result's ``details``."""


def denied(answer: Deny) -> str:
    """What the model reads for a call a hook or the caller denied."""
    return f"Tool call denied: {answer.reason}"


def _decided_arguments(call: ToolCall, answer: ApprovalDecision | None) -> dict[str, Any] | None:
    """The arguments a caller's ``Allow`` / ``Modify`` runs ``call`` with, to carry to the
    next resume when the call has to wait again."""
    if isinstance(answer, Modify):
        return answer.arguments
    if isinstance(answer, Allow):
        return call.arguments
    return None


def truncate_text(text: str, limit: int | None, *, kept_at: str | None = None) -> str:
    """Cut ``text`` to about ``limit`` characters, keeping its head and tail.

    The cut is marked in the text itself so the model knows output is missing; when the
    whole text was stashed, the marker names the key it is ``kept_at``.
    """
    if limit is None or len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    where = f"; the full output is in shared state under {kept_at!r}" if kept_at else ""
    marker = f"\n\n[... {cut} characters truncated{where} ...]\n\n"
    return f"{text[:head]}{marker}{text[len(text) - tail :]}"


def _text_length(content: list[UserContent]) -> int:
    return sum(len(block.text) for block in content if isinstance(block, TextContent))


async def _truncate_content(
    content: list[UserContent], limit: int, call: ToolCall, sink: ToolOutputSink | None
) -> list[UserContent]:
    """``content`` (over ``limit``) with its text cut to fit, the whole stashed in ``sink``."""
    texts = [block for block in content if isinstance(block, TextContent)]
    images: list[UserContent] = [block for block in content if isinstance(block, ImageContent)]
    joined = "\n".join(block.text for block in texts)
    key: str | None = None
    if sink is not None:
        try:
            key = await sink(call.id, call.name, joined)
        except Exception:  # a full or failing store: truncate without naming a key
            logger.warning(
                "could not stash the full output of %s (%s)", call.name, call.id, exc_info=True
            )
    return [TextContent(text=truncate_text(joined, limit, kept_at=key)), *images]


class ToolRunner:
    """Runs tool calls for one run, under its middleware, extensions, cancellation and
    output limits."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.by_name: dict[str, AgentTool] = {}
        self.definitions: list[ToolDefinition] = []
        self.yielded = False
        """Set when a batch ran in a task group (which always yields to the event loop)."""
        self.started: dict[str, ToolCall] = {}
        """Calls whose start event was sent and whose end event was not yet."""
        self.deferred: list[str] = []
        """The calls the last ``run_calls`` held for approval (a hook deferred them)."""
        self._answers: Mapping[str, ApprovalDecision] = {}
        self.approval = ApprovalChain(state)
        self._background: TaskGroup | None = None
        delegation = state.config.delegation
        inherited = delegation.inherited if delegation is not None else ()
        self._tree_extensions = (*inherited, *state.settings.tree_extensions)
        """What a run delegated by one of this run's calls inherits."""

    def set_tools(self, tools: Sequence[AgentTool]) -> None:
        """Offer ``tools`` from the next request on (the first of a name wins).

        A tool whose name, description or schema cannot be read is left out, logged.
        """
        by_name: dict[str, AgentTool] = {}
        definitions: list[ToolDefinition] = []
        for agent_tool in tools:
            try:
                definition = ToolDefinition(
                    name=agent_tool.name,
                    description=agent_tool.description,
                    parameters=agent_tool.parameters,
                )
            except Exception:  # a broken tool must not take the run down with it
                logger.exception("tool %r left out: its definition could not be read", agent_tool)
                continue
            if definition.name not in by_name:
                by_name[definition.name] = agent_tool
                definitions.append(definition)
        self.by_name = by_name
        self.definitions = definitions

    async def run_calls(
        self, calls: list[ToolCall], *, answers: Mapping[str, ApprovalDecision] | None = None
    ) -> tuple[list[ToolResultMessage], list[AgentMessage]]:
        """Run ``calls`` per the run's strategy; returns their results (in call order,
        appended to the history) and any steering messages that arrived, which skip calls
        not yet begun. A cancel answers every unfinished call "cancelled".

        A call a hook defers is held: a placeholder answers it, and batches after it wait
        (held, unjudged). With ``answers`` (a resume) ``calls`` are held ones: their results
        replace the placeholders, the caller's decision answers a deferral, a caller's
        denial answers a call at once (it never runs, begun or not), and a call not begun
        (a cancel, or queued behind a call deferred again) stays held, carrying the caller's
        ``Allow`` / ``Modify`` to the next resume."""
        state = self.state
        resuming = answers is not None
        place = state.settle if resuming else state.append
        results: list[ToolResultMessage | None] = [None] * len(calls)
        steering: list[AgentMessage] = []
        if self.deferred:
            self.deferred = []
        if resuming:
            self._answers = answers
        size = len(calls)
        strategy = state.settings.tool_execution
        if strategy is ToolExecution.SEQUENTIAL:
            size = 1
        elif strategy is ToolExecution.BATCHED:
            size = state.settings.batch_size
        try:
            for start in range(0, len(calls), size):
                if state.cancel.cancelled:
                    break
                await self._run_batch(calls, range(start, min(start + size, len(calls))), results)
                steering = state.take_steering()
                if steering or self.deferred:
                    break
        except BaseException:
            # The run is dying: keep what finished; the run answers the rest "cancelled" (a
            # resume does here: a held call that began must not stay held, to run again).
            if answers is not None:
                state.quiet()
            for index, result in enumerate(results):
                call = calls[index]
                if result is None and answers is not None:
                    if call.id in self.started:
                        result = self._resolve_unrun(call, CANCELLED_RESULT)
                    else:
                        result = self._not_begun_on_resume(call, answers.get(call.id))
                if result is not None:
                    place(result)
            raise
        finally:
            if resuming:
                self._answers = {}
        self._answer_unrun(calls, results, answers=answers, steered=bool(steering))
        final = [result for result in results if result is not None]
        for result in final:
            place(result)
        return final, steering

    def _answer_unrun(
        self,
        calls: list[ToolCall],
        results: list[ToolResultMessage | None],
        *,
        answers: Mapping[str, ApprovalDecision] | None,
        steered: bool,
    ) -> None:
        """Answer the calls a batch never began: the caller's denial on a resume, else
        "cancelled" (a resume keeps them held), "skipped" for steering, or queued behind a
        deferred call."""
        cancelled = self.state.cancel.cancelled
        for index, call in enumerate(calls):
            if results[index] is not None:
                continue
            answer = answers.get(call.id) if answers is not None else None
            if isinstance(answer, Deny):
                results[index] = self._resolve_unrun(call, denied(answer))
            elif cancelled:
                if answers is None:
                    results[index] = self._resolve_unrun(call, CANCELLED_RESULT)
                else:
                    results[index] = self._not_begun_on_resume(call, answer)
            elif steered:
                results[index] = self._resolve_unrun(call, SKIPPED_FOR_STEERING)
            else:
                queued = PendingCall(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    arguments=call.arguments,
                    reason=QUEUED_BEHIND.format(ids=", ".join(self.deferred)),
                    queued=True,
                    decided_arguments=_decided_arguments(call, answer),
                )
                results[index] = self._hold(call, queued)

    def _not_begun_on_resume(
        self, call: ToolCall, answer: ApprovalDecision | None
    ) -> ToolResultMessage | None:
        """A held call a dying or cancelled resume never began: the caller's denial, or
        held still (``None`` keeps its placeholder; an ``Allow`` / ``Modify`` is carried)."""
        if isinstance(answer, Deny):
            return self._resolve_unrun(call, denied(answer))
        decided = _decided_arguments(call, answer)
        if decided is None:
            return None
        held = self.state.held_call(call.id)
        return self._hold(call, replace(held, decided_arguments=decided))

    def _hold(self, call: ToolCall, pending: PendingCall) -> ToolResultMessage:
        """Answer ``call`` with a placeholder holding ``pending`` (its events sent)."""
        if call.id not in self.started:
            self._start(call)
        result = held_result(pending)
        self._end(result)
        return result

    def refuse(self, calls: list[ToolCall], reason: str) -> list[ToolResultMessage]:
        """Answer every call with an error without running it; append the answers."""
        results = [self._resolve_unrun(call, reason) for call in calls]
        for result in results:
            self.state.append(result)
        return results

    def abandon(self, calls: Sequence[ToolCall]) -> list[ToolResultMessage]:
        """Answer calls a dying run never finished with "cancelled" (not appended)."""
        return [self._resolve_unrun(call, CANCELLED_RESULT) for call in calls]

    def _start(self, call: ToolCall) -> None:
        self.started[call.id] = call
        self.state.emit(
            ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, arguments=call.arguments)
        )

    def _end(self, result: ToolResultMessage) -> None:
        self.started.pop(result.tool_call_id, None)
        self.state.emit(ToolExecutionEnd(result=result))

    def _resolve_unrun(self, call: ToolCall, reason: str) -> ToolResultMessage:
        if call.id not in self.started:
            self._start(call)
        result = _error_result(call, reason)
        self._end(result)
        return result

    def run_in(self, background: TaskGroup | None) -> None:
        """Where calls run that must wait alongside another (the run's background group)."""
        self._background = background

    async def _run_batch(
        self, calls: Sequence[ToolCall], batch: range, results: list[ToolResultMessage | None]
    ) -> None:
        """Run one batch. Each call starts at once, in call order, in this task (see
        ``eager``): a batch whose calls never wait needs no task at all. The first call
        that waits is driven on here, and the calls after it start in the run's background
        group, so they run while it waits; the batch ends when all have."""
        started: set[int] = set()
        # One cancel scope for the batch: a cancel stops every call in it at once.
        with self.state.cancel.scope():
            waiting: Suspended | None = None
            position = 0
            while waiting is None and position < len(batch):
                index = batch[position]
                started.add(index)
                results[index], waiting = first_step(self._execute(calls[index]))
                position += 1
            if waiting is not None:
                await self._finish_batch(
                    waiting, batch[position - 1], batch[position:], calls, results, started
                )
        for index in batch:
            if results[index] is None and index in started:
                # Cancelled while running: it has its start event; it gets its end.
                result = _error_result(calls[index], CANCELLED_RESULT)
                self._end(result)
                results[index] = result

    async def _finish_batch(
        self,
        waiting: Suspended,
        index: int,
        rest: range,
        calls: Sequence[ToolCall],
        results: list[ToolResultMessage | None],
        started: set[int],
    ) -> None:
        """Drive the waiting call here while the ``rest`` run in the background group.

        No cancel scope may be opened in this task while the waiting call may hold one
        (they would not nest), hence the run's group rather than one of the batch's own.
        """
        others = len(rest)
        all_done = anyio.Event()

        async def one(position: int) -> None:
            nonlocal others
            try:
                with self.state.cancel.scope():
                    started.add(position)
                    results[position] = await self._execute(calls[position])
            finally:
                others -= 1
                if others == 0:
                    all_done.set()

        background = self._background
        assert background is not None or not rest, "tool calls run inside a run"
        failed = True
        try:
            if rest and background is not None:
                self.yielded = True
                for position in rest:
                    # A fixed name spares anyio deriving one from the callable.
                    background.start_soon(one, position, name="yoagent tool call")
            results[index] = await resume(waiting)
            failed = False
        finally:
            if results[index] is None:
                waiting.close()
            if rest:
                if failed:
                    self.state.cancel.cancel()  # the run is dying: its calls end with it
                with anyio.CancelScope(shield=True):
                    await all_done.wait()

    async def _execute(self, call: ToolCall) -> ToolResultMessage:
        """The one place a tool call runs: events, middleware, extensions, containment,
        truncation."""
        self._start(call)
        with start_span(SPAN_TOOL, self.state.tracing) as span:
            span.set_attribute("yoagent.tool.name", call.name)
            span.set_attribute("yoagent.tool.call_id", call.id)
            result = await self._guarded(call)
            span.set_attribute("yoagent.tool.is_error", result.is_error)
        self._end(result)
        return result

    async def _guarded(self, call: ToolCall) -> ToolResultMessage:
        state = self.state
        answer = self._answers.get(call.id) if self._answers else None
        if answer is not None and isinstance(answer, Deny):  # the caller's word on a resume
            return _error_result(call, denied(answer))
        agent_tool = self.by_name.get(call.name)
        if agent_tool is None:
            available = ", ".join(sorted(self.by_name)) or "none"
            return _error_result(
                call, f"Tool {call.name!r} not found. Available tools: {available}."
            )
        extensions = state.extensions
        if extensions.failure is not None:
            return _error_result(call, NOT_RUN_EXTENSION_FAILED)
        approved = await self.approval.approve(call, answer)
        if isinstance(approved, str):
            return _error_result(call, approved)
        if isinstance(approved, PendingCall):
            self.deferred.append(call.id)
            return held_result(approved)
        arguments = approved
        delegated: list[SessionStats] = []
        ctx = self._context(call, delegated)
        is_error = False
        try:
            outcome = await _execute_checked(agent_tool, arguments, ctx)
        except ToolError as error:
            is_error = True
            outcome = ToolResult.from_text(str(error) or type(error).__name__, error.details)
        except Exception as error:  # contained: the model reads what went wrong, the run goes on
            logger.exception("tool %s raised on call %s", call.name, call.id)
            is_error = True
            outcome = ToolResult.from_text(f"{type(error).__name__}: {error}")
        if extensions.takes("after_tool"):
            output = ToolOutput(result=outcome, is_error=is_error)
            await extensions.after_tool(self.approval.request(call, arguments), output)
            outcome, is_error = output.result, output.is_error
        details = outcome.details
        if delegated:
            details = _with_delegated(details, delegated)
        # Failures go through the same cut as successes: a failing command prints plenty.
        content = list(outcome.content)
        limit = state.settings.max_tool_output_chars
        if limit is not None and _text_length(content) > limit:
            content = await _truncate_content(content, limit, call, state.config.tool_output_sink)
        return ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=content,
            details=details,
            is_error=is_error,
        )

    def _context(self, call: ToolCall, delegated: list[SessionStats]) -> ToolContext:
        state = self.state
        streaming = not state.extensions.filters_tool_output
        emit = state.emit

        def on_update(partial: ToolResult) -> None:
            emit(
                ToolExecutionUpdate(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=list(partial.content),
                    details=partial.details,
                )
            )

        def on_progress(text: str) -> None:
            emit(ProgressMessage(tool_call_id=call.id, tool_name=call.name, text=text))

        def on_delegated_run(stats: SessionStats) -> None:
            delegated.append(stats)
            state.spend.record_delegated(call.id, stats)

        return ToolContext(
            tool_call_id=call.id,
            tool_name=call.name,
            cancel=state.cancel,
            on_update=on_update if streaming else None,
            on_progress=on_progress if streaming else None,
            on_delegated_run=on_delegated_run,
            on_event=emit if streaming else None,
            run_id=state.run_id,
            depth=state.delegation_depth,
            spend=state.spend,
            tree_extensions=self._tree_extensions,
        )


def _with_delegated(details: Any, delegated: list[SessionStats]) -> Any:
    """``details`` with what the call's delegated runs spent under ``SUB_AGENT_STATS_KEY``
    (a dict or nothing gets the key; other details are left as they are)."""
    combined = SessionStats()
    for stats in delegated:
        combined.merge(stats)
    summary = stats_details(combined, runs=len(delegated))
    if details is None:
        return {SUB_AGENT_STATS_KEY: summary}
    if isinstance(details, dict):
        return {**cast("dict[str, Any]", details), SUB_AGENT_STATS_KEY: summary}
    return details


def stats_details(stats: SessionStats, *, runs: int = 1) -> dict[str, Any]:
    """What delegated runs spent, as JSON values (for a result's ``details``)."""
    usage = stats.total_usage()
    return {
        "runs": runs + stats.sub_agents.runs,
        "turns": stats.turns,
        "usage": {
            "input": usage.input,
            "output": usage.output,
            "cache_read": usage.cache_read,
            "cache_write": usage.cache_write,
        },
        "cost_usd": stats.total_cost_usd(),
    }


async def _execute_checked(
    agent_tool: AgentTool, arguments: dict[str, Any], ctx: ToolContext
) -> ToolResult:
    outcome = cast(object, await agent_tool.execute(arguments, ctx))
    if not isinstance(outcome, ToolResult):
        raise ToolError(
            f"tool {agent_tool.name} returned {type(outcome).__name__}, not a ToolResult"
        )
    return outcome


def _error_result(call: ToolCall, text: str, details: Any = None) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=text)],
        is_error=True,
        details=details,
    )
