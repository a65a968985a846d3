"""One tool call, from its start event to its end event: the one place a call runs.

Each step hands a value to the next: the verdict (the caller's word on a resume, the
tool's existence, the ``before_tool`` chain) → the run (the tool itself, its failures
contained as output the model reads, then the ``after_tool`` chain) → the recorded result
(delegated spend in its details) → the cut (output over the run's limit, see
``truncation``). The calls a reply asks
for but that never run (refused, abandoned, held) get their events and answers here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from yoagent.core._hooks.basic import ApprovalDecision, Deny
from yoagent.core._hooks.extension import ToolOutput
from yoagent.core._logging import logger
from yoagent.core._provider.protocol import ToolDefinition
from yoagent.core._tools.contract import AgentTool, ToolContext, ToolError, ToolResult
from yoagent.core._types.approval import PendingCall, held_result
from yoagent.core._types.content import TextContent, ToolCall
from yoagent.core._types.events import (
    ProgressMessage,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from yoagent.core._types.messages import ToolResultMessage
from yoagent.core._types.stats import SessionStats

from .approval import ApprovalChain
from .state import RunState
from .telemetry import SPAN_TOOL, describe_tool_call, describe_tool_result, start_span
from .truncation import cut_output, text_length

CANCELLED_RESULT = "Tool execution cancelled."
SKIPPED_FOR_STEERING = "Skipped: the user sent a new message before this tool ran."
NOT_RUN_EXTENSION_FAILED = "Not run: a required extension failed the run."
SUB_AGENT_STATS_KEY = "sub_agent_stats"
"""Where a call that delegated runs gets their spend in its result's ``details``."""


def denied(answer: Deny) -> str:
    """What the model reads for a call a hook or the caller denied."""
    return f"Tool call denied: {answer.reason}"


class ToolCalls:
    """One run's tool calls: the tools offered, each call's way through, and its events."""

    __slots__ = (
        "answers",
        "approval",
        "by_name",
        "deferred",
        "definitions",
        "started",
        "state",
        "tree_extensions",
    )

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.by_name: dict[str, AgentTool] = {}
        self.definitions: list[ToolDefinition] = []
        self.started: dict[str, ToolCall] = {}
        """Calls whose start event was sent and whose end event was not yet."""
        self.deferred: list[str] = []
        """The calls held for approval (a hook deferred them) since the batch began."""
        self.answers: Mapping[str, ApprovalDecision] = {}
        """The caller's decisions on held calls, while a resume runs them."""
        self.approval = ApprovalChain(state)
        delegation = state.config.delegation
        inherited = delegation.inherited if delegation is not None else ()
        self.tree_extensions = (*inherited, *state.settings.tree_extensions)
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

    # --- events, and the calls that never run -----------------------------------------------

    def start(self, call: ToolCall) -> None:
        """Send ``call``'s start event."""
        self.started[call.id] = call
        self.state.emit(
            ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, arguments=call.arguments)
        )

    def end(self, result: ToolResultMessage) -> None:
        """Send the end event of the call ``result`` answers."""
        self.started.pop(result.tool_call_id, None)
        self.state.emit(ToolExecutionEnd(result=result))

    def answer(self, call: ToolCall, reason: str) -> ToolResultMessage:
        """Answer ``call`` with an error without running it (its events sent)."""
        if call.id not in self.started:
            self.start(call)
        result = error_result(call, reason)
        self.end(result)
        return result

    def hold(self, call: ToolCall, pending: PendingCall) -> ToolResultMessage:
        """Answer ``call`` with a placeholder holding ``pending`` (its events sent)."""
        if call.id not in self.started:
            self.start(call)
        result = held_result(pending)
        self.end(result)
        return result

    def refuse(self, calls: list[ToolCall], reason: str) -> list[ToolResultMessage]:
        """Answer every call with an error without running it; append the answers."""
        results = [self.answer(call, reason) for call in calls]
        for result in results:
            self.state.append(result)
        return results

    def abandon(self, calls: Sequence[ToolCall]) -> list[ToolResultMessage]:
        """Answer calls a dying run never finished with "cancelled" (not appended)."""
        return [self.answer(call, CANCELLED_RESULT) for call in calls]

    # --- the call ------------------------------------------------------------------------

    async def execute(self, call: ToolCall) -> ToolResultMessage:
        """Run ``call`` its one way: verdict → run → record → cut, between its events."""
        self.start(call)
        with start_span(SPAN_TOOL, self.state.tracing) as span:
            describe_tool_call(span, call)
            verdict = await self._verdict(call)
            if isinstance(verdict, str):
                result = error_result(call, verdict)
            elif isinstance(verdict, PendingCall):
                self.deferred.append(call.id)
                result = held_result(verdict)
            else:
                delegated: list[SessionStats] = []
                output = await self._run(call, verdict, delegated)
                result = self._record(call, output, delegated)
                limit = self.state.settings.max_tool_output_chars
                if limit is not None and text_length(result.content) > limit:
                    # Failures too go through the cut: a failing command prints plenty.
                    sink = self.state.config.tool_output_sink
                    result.content = await cut_output(result.content, limit, call, sink)
            describe_tool_result(span, result.is_error)
        self.end(result)
        return result

    async def _verdict(self, call: ToolCall) -> dict[str, Any] | str | PendingCall:
        """The arguments to run ``call`` with, why it may not run, or the call held."""
        answer = self.answers.get(call.id) if self.answers else None
        if isinstance(answer, Deny):  # the caller's word on a resume
            return denied(answer)
        if call.name not in self.by_name:
            available = ", ".join(sorted(self.by_name)) or "none"
            return f"Tool {call.name!r} not found. Available tools: {available}."
        if self.state.extensions.failure is not None:
            return NOT_RUN_EXTENSION_FAILED
        return await self.approval.approve(call, answer)

    async def _run(
        self, call: ToolCall, arguments: dict[str, Any], delegated: list[SessionStats]
    ) -> ToolOutput:
        """The tool's output (what it raised, as output the model reads), as the
        ``after_tool`` chain leaves it; the runs it delegated are added to ``delegated``."""
        agent_tool = self.by_name[call.name]
        ctx = self._context(call, delegated)
        try:
            output = ToolOutput(result=await _execute_checked(agent_tool, arguments, ctx))
        except ToolError as error:
            text = str(error) or type(error).__name__
            output = ToolOutput(result=ToolResult.from_text(text, error.details), is_error=True)
        except Exception as error:  # contained: the model reads what went wrong, the run goes on
            logger.exception("tool %s raised on call %s", call.name, call.id)
            text = f"{type(error).__name__}: {error}"
            output = ToolOutput(result=ToolResult.from_text(text), is_error=True)
        extensions = self.state.extensions
        if extensions.takes("after_tool"):
            await extensions.after_tool(self.approval.request(call, arguments), output)
        return output

    def _record(
        self, call: ToolCall, output: ToolOutput, delegated: list[SessionStats]
    ) -> ToolResultMessage:
        """The result the model reads, with the delegated runs' spend in its details."""
        details = output.result.details
        if delegated:
            details = _with_delegated(details, delegated)
        return ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=list(output.result.content),
            details=details,
            is_error=output.is_error,
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
            tree_extensions=self.tree_extensions,
        )


def error_result(call: ToolCall, text: str) -> ToolResultMessage:
    """An error result answering ``call`` with ``text``."""
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=text)],
        is_error=True,
    )


async def _execute_checked(
    agent_tool: AgentTool, arguments: dict[str, Any], ctx: ToolContext
) -> ToolResult:
    outcome = cast(object, await agent_tool.execute(arguments, ctx))
    if not isinstance(outcome, ToolResult):
        raise ToolError(
            f"tool {agent_tool.name} returned {type(outcome).__name__}, not a ToolResult"
        )
    return outcome


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
